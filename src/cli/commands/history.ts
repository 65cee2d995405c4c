/**
 * `phaselog history <phase> [--all] [--from TIME] [--to TIME]`: the phase's status intervals, or with
 * `--all` every status change of the phase and its resources (like `airshipctl phase history`).
 */
import type { CommandContext } from '../context.ts';
import { staleNote } from './status.ts';
import { formatDuration } from '../../duration.ts';
import { parseTime, renderData, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { resolvePhase } from '../phase-arg.ts';

const INTERVALS = `query History($id: ID!, $from: DateTime!, $to: DateTime, $after: String) {
  phase(id: $id) { history(from: $from, to: $to, first: 100, after: $after) {
    edges { node { status message stale staleReason from to summary { total failed } } } pageInfo { hasNextPage endCursor } } }
}`;

const CHANGES = `query Changes($id: ID!, $from: DateTime, $to: DateTime, $after: String) {
  phase(id: $id) { changes(from: $from, to: $to, first: 100, after: $after) {
    edges { node { seq at scope resourceKey fromStatus toStatus message } } pageInfo { hasNextPage endCursor } } }
}`;

type Page<T> = { phase: { [k: string]: { edges: { node: T }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null };

async function collect<T>(ctx: CommandContext, query: string, field: string, variables: Record<string, unknown>): Promise<T[]> {
  const out: T[] = [];
  let after: string | null = null;
  do {
    const page: Page<T> = await ctx.api.query(query, { ...variables, after });
    const conn = page.phase?.[field];
    if (!conn) break;
    out.push(...conn.edges.map((e) => e.node));
    after = conn.pageInfo.hasNextPage ? conn.pageInfo.endCursor : null;
  } while (after);
  return out;
}

export async function runHistory(ctx: CommandContext, options: { phase?: string; all: boolean; from?: string; to?: string; output: OutputFormat }): Promise<number> {
  const now = ctx.now();
  const from = parseTime(options.from ?? '7d', now);
  const to = options.to ? parseTime(options.to, now) : undefined;
  const phase = await resolvePhase(ctx.api, options.phase);
  const window = { id: phase.id, from: from.toISOString(), to: to?.toISOString() ?? null };
  if (options.all) {
    const changes = await collect<{ seq: string; at: string; scope: string; resourceKey: string | null; fromStatus: string | null; toStatus: string | null; message: string }>(ctx, CHANGES, 'changes', window);
    if (options.output !== 'table') ctx.out(renderData(changes, options.output));
    else ctx.out(renderTable(['TIME', 'WHAT', 'FROM', 'TO', 'MESSAGE'], changes.map((c) => [c.at, c.scope === 'phase' ? 'phase' : (c.resourceKey ?? c.scope), c.fromStatus ?? '-', c.toStatus ?? '-', c.message])));
    return 0;
  }
  const intervals = await collect<{ status: string; message: string; stale: boolean; staleReason: string | null; from: string; to: string | null }>(ctx, INTERVALS, 'history', window);
  if (options.output !== 'table') ctx.out(renderData(intervals, options.output));
  else
    ctx.out(
      renderTable(
        ['FROM', 'TO', 'DURATION', 'STATUS', 'MESSAGE'],
        intervals.map((i) => [i.from, i.to ?? 'now', formatDuration((i.to ? Date.parse(i.to) : now.getTime()) - Date.parse(i.from)), `${i.status}${staleNote(i)}`, i.message]),
      ),
    );
  return 0;
}
