/**
 * Terminal output with kubectl's manners: tables with relative times (`5m ago`), `-o wide` for more
 * columns, `-o json|yaml` as a `List` of flat items with RFC 3339 times, `-o name` for piping into
 * another command, colour and status symbols only on a terminal.
 */
import { styleText } from 'node:util';
import { stringify } from 'yaml';
import { formatDuration, parseDuration } from '../duration.ts';
import { CliError, EXIT } from './errors.ts';

export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
/** The formats that print data for machines rather than a table. */
export type DataFormat = 'json' | 'yaml';

export function isDataFormat(format: string): format is DataFormat {
  return format === 'json' || format === 'yaml';
}

/** "5m ago", "2h3m ago", "just now"; "in 5m" for future times. */
export function formatAgo(time: string | Date | null | undefined, now: Date = new Date()): string {
  if (!time) return '-';
  const at = typeof time === 'string' ? new Date(time) : time;
  const ms = now.getTime() - at.getTime();
  if (Math.abs(ms) < 1000) return 'just now';
  return ms >= 0 ? `${formatDuration(ms)} ago` : `in ${formatDuration(-ms)}`;
}

/** Display width of a cell: escape codes take no room on the terminal. */
function visibleLength(text: string): number {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '').length;
}

export interface TableOptions {
  /** Leave out the header row (`--no-headers`). */
  headers?: boolean;
  /** Columns at least this wide: rows printed later line up with a table printed before. */
  minWidths?: readonly number[];
}

/** The width of each column of a table, for {@link TableOptions.minWidths}. */
export function columnWidths(headers: string[], rows: string[][]): number[] {
  return headers.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ''))));
}

/** A plain-text table with a header row; columns padded, the last column not. */
export function renderTable(headers: string[], rows: string[][], options: TableOptions = {}): string {
  const shown = options.headers === false ? rows : [headers, ...rows];
  const widths = headers.map((_, i) =>
    Math.max(options.minWidths?.[i] ?? 0, ...shown.map((r) => visibleLength(r[i] ?? ''))),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) =>
        i === cells.length - 1 ? cell : cell + ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(cell))),
      )
      .join('  ')
      .trimEnd();
  return shown.length === 0 ? '' : shown.map(line).join('\n') + '\n';
}

/** JSON or YAML for machines: times stay as the API gives them (RFC 3339). */
export function renderData(data: unknown, format: DataFormat): string {
  return format === 'json' ? `${JSON.stringify(data, null, 2)}\n` : stringify(data);
}

/** Several items the way kubectl prints them: a `List` with `items`. */
export function renderList(items: readonly unknown[], format: DataFormat): string {
  return renderData({ kind: 'List', items }, format);
}

/** One item per line (NDJSON) or one YAML document each: for streams like `status -w`. */
export function renderStreamItem(item: unknown, format: DataFormat): string {
  return format === 'json' ? `${JSON.stringify(item)}\n` : `---\n${stringify(item)}`;
}

/**
 * Whether to colour: on a terminal unless `NO_COLOR` is set (https://no-color.org) or TERM is dumb;
 * `FORCE_COLOR` (non-empty, not 0) turns it on anywhere.
 */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export type Colour = 'red' | 'green' | 'yellow' | 'cyan' | 'gray' | 'magenta' | 'bold';

/** Paint text when colour is on; the identity otherwise. */
export type Paint = (colour: Colour, text: string) => string;

export function painter(enabled: boolean): Paint {
  // styleText checks the stream itself on newer Node; the caller has decided already.
  return enabled ? (colour, text) => styleText(colour, text, { validateStream: false }) : (_colour, text) => text;
}

const STATUS_LOOK: Record<string, { symbol: string; colour: Colour }> = {
  Current: { symbol: '✔', colour: 'green' },
  InProgress: { symbol: '◐', colour: 'yellow' },
  Failed: { symbol: '✘', colour: 'red' },
  Terminating: { symbol: '◌', colour: 'magenta' },
  NotFound: { symbol: '?', colour: 'red' },
  Unknown: { symbol: '?', colour: 'gray' },
};

/** A status for a table cell: with a symbol and its colour on a terminal, the bare word otherwise. */
export function paintStatus(status: string | null | undefined, paint: Paint, decorated: boolean, note = ''): string {
  if (!status) return `-${note}`;
  const look = STATUS_LOOK[status];
  if (!decorated || !look) return `${status}${note}`;
  return paint(look.colour, `${look.symbol} ${status}${note}`);
}

export { formatRef, formatResourceKey } from '../inventory/object-ref.ts';

/** A phase as the CLI takes it as an argument: `cluster/namespace/name` (`-o name` prints this). */
export function phaseName(p: { cluster: string; namespace: string; name: string }): string {
  return `${p.cluster}/${p.namespace ? `${p.namespace}/` : ''}${p.name}`;
}

/**
 * A duration given on the command line. Unlike the API's Duration, a bare number is refused: `--for
 * 600` could mean seconds or milliseconds, so the user says which.
 */
export function parseCliDuration(value: string, flag: string): number {
  const ms = /^\d+(\.\d+)?$/.test(value.trim()) ? undefined : parseDuration(value);
  if (ms === undefined || ms <= 0) {
    const hint = /^\d+$/.test(value.trim())
      ? ` (a number needs a unit: ${value}s, ${value}m)`
      : ' such as 30s, 10m or 1h';
    throw new CliError(`${flag} needs a positive duration${hint}; got "${value}"`, EXIT.usage);
  }
  return ms;
}

/**
 * Parse a user's time: RFC 3339 (`2026-11-17T14:00:00Z`), a date (`2026-11-17`, midnight UTC), `now`,
 * or a duration ago (`90m`, `2h`, `7d`).
 */
export function parseTime(value: string, now: Date = new Date()): Date {
  if (value === 'now') return now;
  const ago = parseDuration(value);
  if (ago !== undefined && !/^\d+$/.test(value)) return new Date(now.getTime() - ago);
  if (/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value)) {
    const date = new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new CliError(
    `"${value}" is not a time: use RFC 3339 (2026-11-17T14:00:00Z), a date (2026-11-17), "now", or a duration ago (90m, 2h, 7d)`,
    EXIT.usage,
  );
}
