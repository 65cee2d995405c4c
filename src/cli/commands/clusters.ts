/** `phaselog clusters`: every cluster with whether it is observed and reachable. */
import type { CommandContext } from '../context.ts';
import { formatAgo, isDataFormat, renderList, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import type { ClusterSummary } from '../../graphql/answers.ts';

const CLUSTERS = `{ clusters { name labels state reachable lastGoodReadAt lastObservedAt owner { worker host since } } }`;

export async function runClusters(
  ctx: CommandContext,
  options: { output: OutputFormat; headers: boolean },
): Promise<number> {
  const { clusters } = await ctx.api.query<{ clusters: ClusterSummary[] }>(CLUSTERS);
  if (isDataFormat(options.output))
    return (
      ctx.out(
        renderList(
          clusters.map((c) => ({ kind: 'Cluster', ...c })),
          options.output,
        ),
      ),
      0
    );
  if (options.output === 'name') return (ctx.out(clusters.map((c) => `${c.name}\n`).join('')), 0);
  const now = ctx.now();
  const reachable = (c: ClusterSummary) =>
    c.reachable === null ? '-' : c.reachable ? ctx.paint('green', 'yes') : ctx.paint('red', 'NO');
  const wide = options.output === 'wide';
  ctx.out(
    renderTable(
      wide
        ? ['NAME', 'STATE', 'REACHABLE', 'LAST GOOD READ', 'LAST OBSERVED', 'OWNER', 'OWNER SINCE', 'LABELS']
        : ['NAME', 'STATE', 'REACHABLE', 'LAST GOOD READ', 'LAST OBSERVED'],
      clusters.map((c) => {
        const row = [c.name, c.state, reachable(c), formatAgo(c.lastGoodReadAt, now), formatAgo(c.lastObservedAt, now)];
        if (!wide) return row;
        // No owner: no worker runs, or a handover is in progress.
        const owner = c.owner
          ? [
              c.owner.host !== null ? `${c.owner.worker} (${c.owner.host})` : c.owner.worker,
              formatAgo(c.owner.since, now),
            ]
          : [ctx.paint('yellow', '<none>'), '-'];
        return [
          ...row,
          ...owner,
          Object.entries(c.labels ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(',') || '-',
        ];
      }),
      { headers: options.headers },
    ),
  );
  return 0;
}
