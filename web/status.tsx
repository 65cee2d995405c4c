import { severityOf, STATUSES_BY_SEVERITY } from '../src/status/severity.ts';
import type { ResourceStatus } from '../src/status/types.ts';

/** Statuses as the UI shows them (colour AND icon AND word, never colour alone), most severe first: the server's one order. */
export const STATUSES = STATUSES_BY_SEVERITY;
export type Status = ResourceStatus;

const ICONS: Record<Status, string> = {
  Current: '✓',
  InProgress: '↻',
  Failed: '✕',
  Terminating: '⊘',
  NotFound: '?',
  Unknown: '…',
};

/** Most severe first, as `phaselog status` and `orderBy: SEVERITY` order them; no status last. */
export function severity(status: string | null | undefined): number {
  return severityOf(status ?? null);
}

export function StatusBadge({ status, stale }: { status: string | null | undefined; stale?: boolean }) {
  const known = STATUSES.includes(status as Status) ? (status as Status) : undefined;
  return (
    <span className={`badge s-${known ?? 'none'}${stale ? ' stale' : ''}`}>
      <span aria-hidden="true">{known ? ICONS[known] : '–'}</span> {known ?? 'no status'}
      {stale ? <span className="stale-mark"> (stale)</span> : null}
    </span>
  );
}

/** "3m", "2h 5m", "4d": how long ago (or how long), for `since` columns. */
export function formatAgo(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '–';
  return formatSpan(Math.max(0, now - Date.parse(iso)));
}

export function formatSpan(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d`;
}

/** A moment as "2026-11-20 14:03:12" in UTC (the CLI's and the API's zone). */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  return new Date(iso).toISOString().replace('T', ' ').slice(0, 19);
}

export function TimeAgo({ iso }: { iso: string | null | undefined }) {
  return iso ? (
    <time dateTime={iso} title={formatTime(iso) + ' UTC'}>
      {formatAgo(iso)}
    </time>
  ) : (
    <span>–</span>
  );
}

/** Why a status is stale, in words. */
export function staleText(reason: string | null | undefined, lastGoodReadAt: string | null | undefined): string {
  const why =
    reason === 'UNREACHABLE'
      ? 'cluster unreachable'
      : reason === 'UNOBSERVED'
        ? 'not observed'
        : reason === 'RETIRED'
          ? 'cluster retired'
          : 'stale';
  return `${why}; last good read ${lastGoodReadAt ? formatTime(lastGoodReadAt) + ' UTC' : 'never'}`;
}
