/**
 * Status details: what a status says besides the status itself (reason, message, conditions, ...),
 * as content-addressed documents so each distinct value is stored once. A phase's condition
 * transition times change on every flip, so they stay beside the interval and the rest dedupes.
 */
import { hashDocument } from './canonical-hash.ts';
import type { ObservedResource } from './types.ts';
import type { PhaseIntervalInput } from './plan-snapshot.ts';

/** A status detail document and its hash. */
export interface StatusDetailDoc {
  hash: string;
  body: Record<string, unknown>;
}

function detail(body: Record<string, unknown>): StatusDetailDoc {
  return { hash: hashDocument(body), body };
}

/** A resource status' detail: reason, message, conditions, presence, generations, custom health. */
export function resourceDetail(r: ObservedResource): StatusDetailDoc {
  return detail({
    reason: r.reason,
    message: r.message,
    conditions: r.conditions,
    presence: r.presence,
    generation: r.generation,
    observedGeneration: r.observedGeneration,
    customHealth: r.customHealth,
  });
}

/** A phase status' detail (conditions without `lastTransitionTime`) and the times left out, in order. */
export function phaseDetail(s: PhaseIntervalInput): { doc: StatusDetailDoc; conditionTimes: (string | null)[] } {
  const conditions = s.conditions.map(({ lastTransitionTime: _time, ...rest }) => rest);
  return {
    doc: detail({ message: s.message, summary: s.summary, conditions, worstResource: s.worstResource }),
    conditionTimes: s.conditions.map((c) => (typeof c.lastTransitionTime === 'string' ? c.lastTransitionTime : null)),
  };
}

/** The detail of a change-log message. */
export function messageDetail(message: string): StatusDetailDoc {
  return detail({ message });
}

/** Conditions of a stored phase detail with their transition times put back. */
export function withConditionTimes<T>(conditions: readonly T[], times: readonly (string | null)[] | null): T[] {
  return conditions.map((condition, index) => {
    const time = times?.[index];
    return time === null || time === undefined || time === '' || typeof condition !== 'object' || condition === null ? condition : { ...condition, lastTransitionTime: time };
  });
}
