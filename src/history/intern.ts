/**
 * One copy of each distinct value: a worker keeps its clusters' stored states between snapshots,
 * and the values most resources share (statuses, messages, the moments of the ticks that changed
 * them) would otherwise be held once per resource, as the database driver or the observation
 * made them.
 */
import { Buffer } from 'node:buffer';
import type { PhaseCondition } from '../status/phase-summary.ts';
import { sameApplied } from './applied.ts';
import type { OpenPhaseInterval, ResourceIntervalStatus } from './types.ts';

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
    byMessage
      .get(value.message)
      ?.find(
        (k) =>
          k.status === value.status &&
          k.reason === value.reason &&
          k.presence === value.presence &&
          k.customHealth === value.customHealth &&
          sameApplied(k.applied, value.applied),
      );
  const add = (value: ResourceIntervalStatus): void => {
    const known = byMessage.get(value.message);
    if (known === undefined) byMessage.set(value.message, [value]);
    else known.push(value);
  };
  for (const value of kept) if (find(value) === undefined) add(value);
  return (value) => {
    const known = find(value);
    if (known !== undefined) return known;
    const made = Object.freeze({
      status: text(value.status),
      reason: text(value.reason),
      message: text(value.message),
      presence: text(value.presence),
      customHealth: text(value.customHealth),
      // Shared already: observations hold one frozen status per distinct inventory detail.
      applied: value.applied,
    });
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

/**
 * `condition` as a worker keeps it: a plain literal with its strings shared by `text`. The copies
 * withConditionTimes makes of a parsed detail each get a hidden class of their own (a map and
 * descriptors per condition), and a formatted time is a concatenation over a slice of a longer
 * string. A condition of another shape is returned as it is.
 */
export function keptCondition(condition: PhaseCondition, text: InternText): PhaseCondition {
  const { type, status, reason, message, lastTransitionTime } = condition;
  if (
    Object.keys(condition).length !== 5 ||
    typeof lastTransitionTime !== 'string' ||
    typeof reason !== 'string' ||
    typeof message !== 'string'
  )
    return condition;
  return {
    type,
    status,
    reason: text(reason),
    message: text(message),
    lastTransitionTime: text(flatString(lastTransitionTime)),
  };
}

/**
 * One copy of each distinct value across all the states a worker keeps, for phase statuses: most
 * phases of a fleet say the same few things ("All 3 resources are Current", the same summary and
 * conditions), and a status loaded from the store or advanced from an observation holds copies
 * made for it alone. Each index holds at most `limit` values and then starts over: values already
 * shared stay shared, only new ones are not matched with older ones.
 */
export interface SharedValues {
  /** `status` with its values shared, frozen (a frozen status is returned as it is). */
  phaseStatus(status: OpenPhaseInterval): OpenPhaseInterval;
}

/** Creates a {@link SharedValues} whose indexes hold at most `limit` values each. */
export function createSharedValues(limit = 20_000): SharedValues {
  const texts = new Map<string, string>();
  const dates = new Map<number, Date>();
  const summaries = new Map<string, Record<string, number>>();
  const conditionLists = new Map<string, PhaseCondition[]>();
  const bounded = <K, V>(index: Map<K, V>, key: K, value: V): V => {
    if (index.size >= limit) index.clear();
    index.set(key, value);
    return value;
  };
  const text = <T extends string | null>(value: T): T => {
    if (value === null) return value;
    const known = texts.get(value);
    if (known !== undefined) return known as T;
    // The flat copy is the key too: a key made by concatenation or slicing would keep its parts.
    const flat = flatString(value);
    return bounded(texts, flat, flat) as T;
  };
  const date = (value: Date): Date => dates.get(value.getTime()) ?? bounded(dates, value.getTime(), value);
  const summary = (value: Record<string, number>): Record<string, number> => {
    const key = JSON.stringify(value);
    return summaries.get(key) ?? bounded(summaries, key, Object.freeze({ ...value }));
  };
  const conditions = (value: PhaseCondition[]): PhaseCondition[] => {
    const key = JSON.stringify(value);
    const known = conditionLists.get(key);
    if (known !== undefined) return known;
    // A copy even of a condition of another shape: the one given is not frozen.
    const list = value.map((c) => {
      const kept = keptCondition(c, text);
      return Object.freeze(kept === c ? { ...c } : kept);
    });
    return bounded(conditionLists, key, Object.freeze(list) as PhaseCondition[]);
  };
  return {
    phaseStatus(status) {
      // Only this freezes a status: a frozen one is shared already.
      if (Object.isFrozen(status)) return status;
      return Object.freeze({
        from: date(status.from),
        since: date(status.since),
        status: text(status.status),
        message: text(status.message),
        summary: summary(status.summary),
        conditions: conditions(status.conditions),
        worstResource: text(status.worstResource),
        stale: status.stale,
      });
    },
  };
}
