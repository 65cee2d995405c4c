/** Shared text formatting for the renderers. */

/** RFC 3339 in UTC with milliseconds, e.g. `2026-10-01T00:00:00.000Z`. */
export function formatTime(date: Date): string {
  return date.toISOString();
}

/** A percentage with three decimals (`99.931%`), or `n/a` when there is nothing to divide by. */
export function formatPercent(value: number | null): string {
  return value === null ? 'n/a' : `${value.toFixed(3)}%`;
}

/** A duration for people: `450ms`, `42s`, `1h 5m`, `2d 3h 0m 7s` (whole seconds from 1 s up). */
export function formatDuration(ms: number | null): string {
  if (ms === null) return 'n/a';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let seconds = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    const count = Math.floor(seconds / size);
    if (count > 0 || parts.length > 0) parts.push(`${count}${unit}`);
    seconds -= count * size;
  }
  if (seconds > 0 || parts.length === 0) parts.push(`${seconds}s`);
  return parts.join(' ');
}
