/** `phaselog clusters`: every cluster with whether it is observed and reachable. */
import type { CommandContext } from '../context.ts';
import { formatAgo, renderData, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';

const CLUSTERS = `{ clusters { name labels state reachable lastGoodReadAt lastObservedAt } }`;

export async function runClusters(ctx: CommandContext, options: { output: OutputFormat }): Promise<number> {
  const { clusters } = await ctx.api.query<{ clusters: { name: string; labels: Record<string, string>; state: string; reachable: boolean | null; lastGoodReadAt: string | null; lastObservedAt: string | null }[] }>(CLUSTERS);
  if (options.output !== 'table') ctx.out(renderData(clusters, options.output));
  else
    ctx.out(
      renderTable(
        ['NAME', 'STATE', 'REACHABLE', 'LAST GOOD READ', 'LAST OBSERVED', 'LABELS'],
        clusters.map((c) => [c.name, c.state, c.reachable === null ? '-' : c.reachable ? 'yes' : 'NO', formatAgo(c.lastGoodReadAt, ctx.now()), formatAgo(c.lastObservedAt, ctx.now()), Object.entries(c.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(',')]),
      ),
    );
  return 0;
}
