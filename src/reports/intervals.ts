/**
 * Interval arithmetic on epoch milliseconds, half-open [from, to). Normalisation sorts, drops empty
 * intervals, refuses inverted or overlapping ones and closes open ones at the range end.
 */
import { AuditInputError } from './errors.ts';

/** A half-open span [from, to) in epoch ms. */
export interface Span {
  from: number;
  to: number;
}

/** A normalised interval carrying its original item. */
export interface Normalised<T> extends Span {
  item: T;
}

/** A maximal run of consecutive intervals sharing one key (gaps between them do not break it). */
export interface Run<K> {
  key: K;
  /** Start of the run's first interval. */
  from: number;
  /** Start of the next run, or the end of the run's last interval when it is the last run. */
  to: number;
}

export function toEpoch(date: Date, path: string): number {
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new AuditInputError('INVALID_DATE', path, 'not a valid Date');
  return ms;
}

/**
 * Sorts intervals by start, drops empty ones (`to == from`), refuses inverted and overlapping ones,
 * and keeps those that start before `rangeTo`, ends capped at `rangeTo` (an open interval ends there).
 * Intervals before the range are kept: they say what the status was when the range began.
 */
export function normaliseIntervals<T extends { from: Date; to: Date | null }>(
  items: readonly T[],
  rangeTo: number,
  path: string,
): Normalised<T>[] {
  const parsed: { from: number; to: number; index: number; item: T }[] = [];
  items.forEach((item, index) => {
    const from = toEpoch(item.from, `${path}[${index}].from`);
    const to = item.to === null ? Number.POSITIVE_INFINITY : toEpoch(item.to, `${path}[${index}].to`);
    if (to < from) throw new AuditInputError('INVERTED_INTERVAL', `${path}[${index}]`, 'ends before it starts');
    if (to > from) parsed.push({ from, to, index, item });
  });
  parsed.sort((a, b) => a.from - b.from || a.index - b.index);
  for (let i = 1; i < parsed.length; i += 1) {
    const previous = parsed[i - 1];
    const current = parsed[i];
    if (previous !== undefined && current !== undefined && previous.to > current.from) {
      throw new AuditInputError(
        'OVERLAPPING_INTERVALS',
        `${path}[${current.index}]`,
        `overlaps ${path}[${previous.index}]`,
      );
    }
  }
  return parsed
    .filter((entry) => entry.from < rangeTo)
    .map((entry) => ({ from: entry.from, to: Math.min(entry.to, rangeTo), item: entry.item }));
}

/** Length of [from, to) inside [rangeFrom, rangeTo); never negative. */
export function clippedLength(span: Span, rangeFrom: number, rangeTo: number): number {
  return Math.max(0, Math.min(span.to, rangeTo) - Math.max(span.from, rangeFrom));
}

/** Length of the part of `span` covered by `spans` (sorted, disjoint). */
export function coveredLength(span: Span, spans: readonly Span[]): number {
  let total = 0;
  for (const other of spans) {
    if (other.from >= span.to) break;
    total += clippedLength(other, span.from, span.to);
  }
  return total;
}

/** Groups normalised intervals into runs of equal key. */
export function toRuns<T, K>(intervals: readonly Normalised<T>[], keyOf: (item: T) => K): Run<K>[] {
  const runs: Run<K>[] = [];
  for (const interval of intervals) {
    const key = keyOf(interval.item);
    const last = runs[runs.length - 1];
    if (last !== undefined && last.key === key) {
      last.to = interval.to;
    } else {
      if (last !== undefined) last.to = interval.from;
      runs.push({ key, from: interval.from, to: interval.to });
    }
  }
  return runs;
}

/** Sorts spans and merges the ones that overlap or touch. */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const merged: Span[] = [];
  for (const span of [...spans].sort((a, b) => a.from - b.from)) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.from <= last.to) last.to = Math.max(last.to, span.to);
    else merged.push({ from: span.from, to: span.to });
  }
  return merged;
}
