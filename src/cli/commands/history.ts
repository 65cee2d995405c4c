/**
 * `phaselog history <phase> [--all] [--from TIME] [--to TIME]`: the phase's status intervals, or with
 * `--all` every status change of the phase and its resources (like `airshipctl phase history`).
 */
import type { CommandContext } from '../context.ts';
import { staleNote } from './status.ts';
import { formatDuration } from '../../duration.ts';
import { CliError, EXIT } from '../errors.ts';
import {
  formatAgo,
  formatResourceKey,
  isDataFormat,
  paintStatus,
  parseTime,
  renderList,
  renderTable,
} from '../format.ts';
import type { OutputFormat } from '../format.ts';
import type { ChangeLogEntry } from '../../graphql/answers.ts';
import { resolvePhase } from '../phase-arg.ts';
import type { PhaseScope } from '../phase-arg.ts';
import { collectPages } from '../paging.ts';
import type { Connection } from '../paging.ts';

const INTERVALS = `query History($id: ID!, $from: DateTime!, $to: DateTime, $after: String) {
  phase(id: $id) { history(from: $from, to: $to, first: 100, after: $after) {
    edges { node { status message stale staleReason from to summary { total failed } } } pageInfo { hasNextPage endCursor } } }
}`;

const CHANGES = `query Changes($id: ID!, $from: DateTime, $to: DateTime, $after: String) {
  phase(id: $id) { changes(from: $from, to: $to, first: 100, after: $after) {
    edges { node { seq at scope resourceKey conditionType fromStatus toStatus message } } pageInfo { hasNextPage endCursor } } }
}`;

interface Interval {
  status: string;
  message: string;
  stale: boolean;
  staleReason: string | null;
  from: string;
  to: string | null;
  summary: { total: number; failed: number };
}

export interface HistoryOptions extends PhaseScope {
  phase?: string;
  all: boolean;
  from?: string;
  to?: string;
  output: OutputFormat;
  headers: boolean;
}

export async function runHistory(ctx: CommandContext, options: HistoryOptions): Promise<number> {
  if (options.output === 'name')
    throw new CliError('-o name lists phases (phaselog status -o name); history has no names to print', EXIT.usage);
  const now = ctx.now();
  const from = parseTime(options.from ?? '7d', now);
  const to = options.to ? parseTime(options.to, now) : undefined;
  if (to && to <= from) throw new CliError('--to must be after --from', EXIT.usage);
  const phase = await resolvePhase(ctx.api, options.phase, options);
  const window = { id: phase.id, from: from.toISOString(), to: to?.toISOString() ?? null };
  const wide = options.output === 'wide';
  if (options.all) {
    const changes = await collectPages<ChangeLogEntry>(
      ctx.api,
      CHANGES,
      window,
      (d: { phase: { changes: Connection<ChangeLogEntry> } | null }) => d.phase?.changes,
    );
    const items = changes.map((c) => ({
      kind: 'StatusChange',
      ...c,
      resource: c.resourceKey ? formatResourceKey(c.resourceKey) : null,
    }));
    if (isDataFormat(options.output)) ctx.out(renderList(items, options.output));
    else
      ctx.out(
        renderTable(
          wide ? ['TIME', 'AT', 'SEQ', 'WHAT', 'FROM', 'TO', 'MESSAGE'] : ['TIME', 'WHAT', 'FROM', 'TO', 'MESSAGE'],
          items.map((c) => {
            const row = [
              c.resource ?? (c.conditionType ? `condition ${c.conditionType}` : c.scope),
              paintStatus(c.fromStatus, ctx.paint, ctx.decorated),
              paintStatus(c.toStatus, ctx.paint, ctx.decorated),
              c.message,
            ];
            return wide ? [formatAgo(c.at, now), c.at, c.seq, ...row] : [formatAgo(c.at, now), ...row];
          }),
          { headers: options.headers },
        ),
      );
    return EXIT.ok;
  }
  const intervals = await collectPages<Interval>(
    ctx.api,
    INTERVALS,
    window,
    (d: { phase: { history: Connection<Interval> } | null }) => d.phase?.history,
  );
  if (isDataFormat(options.output))
    ctx.out(
      renderList(
        intervals.map((i) => ({ kind: 'StatusInterval', ...i })),
        options.output,
      ),
    );
  else
    ctx.out(
      renderTable(
        wide
          ? ['FROM', 'TO', 'DURATION', 'STATUS', 'START', 'END', 'MESSAGE']
          : ['FROM', 'TO', 'DURATION', 'STATUS', 'MESSAGE'],
        intervals.map((i) => {
          const duration = formatDuration((i.to ? Date.parse(i.to) : now.getTime()) - Date.parse(i.from));
          const status = paintStatus(i.status, ctx.paint, ctx.decorated, staleNote(i));
          const head = [formatAgo(i.from, now), i.to ? formatAgo(i.to, now) : 'now', duration, status];
          return wide ? [...head, i.from, i.to ?? '-', i.message] : [...head, i.message];
        }),
        { headers: options.headers },
      ),
    );
  return EXIT.ok;
}
