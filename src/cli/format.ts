/** Terminal output: tables like `flux get`, human times in tables, RFC 3339 in machine output. */
import { stringify } from 'yaml';
import { formatDuration, parseDuration } from '../duration.ts';
import { CliError, EXIT } from './errors.ts';

/** "5m ago", "2h3m ago", "just now"; "in 5m" for future times. */
export function formatAgo(time: string | Date | null | undefined, now: Date = new Date()): string {
  if (!time) return '-';
  const at = typeof time === 'string' ? new Date(time) : time;
  const ms = now.getTime() - at.getTime();
  if (Math.abs(ms) < 1000) return 'just now';
  return ms >= 0 ? `${formatDuration(ms)} ago` : `in ${formatDuration(-ms)}`;
}

/** A plain-text table with a header row; columns padded, the last column not. */
export function renderTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

export type OutputFormat = 'table' | 'json' | 'yaml';

export function parseOutputFormat(value: string | undefined): OutputFormat {
  if (value === undefined || value === 'table' || value === 'json' || value === 'yaml') return value ?? 'table';
  throw new CliError(`unknown output format "${value}" (use table, json or yaml)`, EXIT.usage);
}

/** JSON or YAML for machines: times stay as the API gives them (RFC 3339). */
export function renderData(data: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(data, null, 2)}\n` : stringify(data);
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
  throw new CliError(`"${value}" is not a time: use RFC 3339 (2026-11-17T14:00:00Z), a date (2026-11-17), "now", or a duration ago (90m, 2h, 7d)`, EXIT.usage);
}
