/**
 * One copy of each distinct value: a worker keeps its clusters' stored states between snapshots,
 * and the values most resources share (statuses, messages, the moments of the ticks that changed
 * them) would otherwise be held once per resource, as the database driver or the observation
 * made them.
 */
import { Buffer } from 'node:buffer';
import type { ResourceIntervalStatus } from './types.ts';

/** Returns one copy of each distinct string (null passes through). */
export type InternText = <T extends string | null>(value: T) => T;

/** An interner for strings, for the span of one state being built. */
export function createTextIntern(): InternText {
  const strings = new Map<string, string>();
  return <T extends string | null>(value: T): T => {
    if (value === null) return value;
    const known = strings.get(value);
    if (known !== undefined) return known as T;
    strings.set(value, value);
    return value;
  };
}

/** An interner for instants (the Dates are shared, so nothing may modify them). */
export function createDateIntern(): (value: Date) => Date {
  const dates = new Map<number, Date>();
  return (value) => {
    const known = dates.get(value.getTime());
    if (known !== undefined) return known;
    dates.set(value.getTime(), value);
    return value;
  };
}

/** Returns one frozen copy of each distinct resource interval status. */
export type InternStatus = (value: ResourceIntervalStatus) => ResourceIntervalStatus;

/**
 * An interner for resource interval statuses, its strings interned by `text`, that returns the
 * `kept` statuses (of a state being built upon) for their values first.
 */
export function createStatusIntern(text: InternText, kept: Iterable<ResourceIntervalStatus> = []): InternStatus {
  // By message, the field that tells them apart most: the statuses with one message are few.
  const byMessage = new Map<string, ResourceIntervalStatus[]>();
  const find = (value: ResourceIntervalStatus): ResourceIntervalStatus | undefined =>
    byMessage.get(value.message)?.find((k) => k.status === value.status && k.reason === value.reason && k.presence === value.presence && k.customHealth === value.customHealth);
  const add = (value: ResourceIntervalStatus): void => {
    const known = byMessage.get(value.message);
    if (known === undefined) byMessage.set(value.message, [value]);
    else known.push(value);
  };
  for (const value of kept) if (find(value) === undefined) add(value);
  return (value) => {
    const known = find(value);
    if (known !== undefined) return known;
    const made = Object.freeze({ status: text(value.status), reason: text(value.reason), message: text(value.message), presence: text(value.presence), customHealth: text(value.customHealth) });
    add(made);
    return made;
  };
}

/**
 * A flat copy of `text`: V8 keeps a string built by concatenation as a tree of parts, and a slice
 * as a view that holds its whole parent. For strings kept from tick to tick that way (a kept state,
 * a watch cache's status views).
 */
export function flatString(text: string): string {
  // A UTF-8 round trip makes a new sequential string; a lone surrogate would not survive it.
  const flat = Buffer.from(text, 'utf8').toString('utf8');
  return flat === text ? flat : text;
}
