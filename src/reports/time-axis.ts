/** Ticks for a time axis in UTC: round steps (a minute up to a month) chosen so a handful fit. */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Steps a person reads at a glance, smallest first. */
const STEPS: readonly number[] = [
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  30 * DAY,
];

export interface Tick {
  /** Epoch ms, a whole multiple of the step. */
  at: number;
  /** `HH:MM`, with the date (`MM-DD HH:MM`) on the first tick and at midnight; `MM-DD` for steps of a day or more. */
  label: string;
}

/**
 * Ticks at whole multiples of the smallest step that gives at most `maxTicks` ticks in
 * [from, to] (UTC midnight is a multiple of every step below a day, so hours fall on the hour).
 * An empty range has none.
 */
export function timeAxisTicks(from: number, to: number, maxTicks: number): Tick[] {
  if (!(to > from) || maxTicks < 1) return [];
  const span = to - from;
  const step =
    STEPS.find((candidate) => Math.floor(span / candidate) + 1 <= maxTicks) ?? Math.ceil(span / maxTicks / DAY) * DAY;
  const ticks: Tick[] = [];
  for (let at = Math.ceil(from / step) * step; at <= to; at += step) {
    ticks.push({ at, label: tickLabel(at, step, ticks.length === 0) });
  }
  return ticks;
}

function tickLabel(at: number, step: number, first: boolean): string {
  const iso = new Date(at).toISOString();
  const date = iso.slice(5, 10);
  const time = iso.slice(11, 16);
  if (step >= DAY) return date;
  return first || at % DAY === 0 ? `${date} ${time}` : time;
}
