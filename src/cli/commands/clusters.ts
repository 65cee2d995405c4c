/** `phaselog clusters`: every cluster with its reachability. */
import type { CommandContext } from '../context.ts';
import { formatAgo, renderData, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';

const CLUSTERS = `{ clusters { name labels reachable lastGoodReadAt } }`;

export async function runClusters(ctx: CommandContext, options: { output: OutputFormat }): Promise<number> {
  const { clusters } = await ctx.api.query<{ clusters: { name: string; labels: Record<string, string>; reachable: boolean | null; lastGoodReadAt: string | null }[] }>(CLUSTERS);
  if (options.output !== 'table') ctx.out(renderData(clusters, options.output));
  else
    ctx.out(
      renderTable(
        ['NAME', 'REACHABLE', 'LAST GOOD READ', 'LABELS'],
        clusters.map((c) => [c.name, c.reachable === null ? '-' : c.reachable ? 'yes' : 'NO', formatAgo(c.lastGoodReadAt, ctx.now()), Object.entries(c.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(',')]),
      ),
    );
  return 0;
}
