/**
 * Timing and summary helpers shared by the benchmarks: medians, percentiles and a monotonic clock.
 */

/** The value at quantile `q` (0..1) of `values`, nearest-rank; 0 for an empty list. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

/** The median of `values` (upper median for an even count); 0 for an empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Milliseconds since an arbitrary origin, from the monotonic high-resolution clock. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Runs `fn` once and returns how long it took in milliseconds. */
export function timeSync(fn: () => void): number {
  const started = nowMs();
  fn();
  return nowMs() - started;
}

/** Awaits `fn` once and returns how long it took in milliseconds. */
export async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const started = nowMs();
  await fn();
  return nowMs() - started;
}

/** Rounds to `digits` decimals, keeping the result a number (for JSON and tables). */
export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** `count` per `ms` milliseconds expressed per second, rounded to a whole number. */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? Math.round((count / ms) * 1000) : 0;
}
