/**
 * Status details: what a status says besides the status itself (reason, message, conditions, ...),
 * as content-addressed documents so each distinct value is stored once. A phase's condition
 * transition times change on every flip, so they stay beside the interval and the rest dedupes.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-hash.ts';
import type { ObservedResource } from './types.ts';
import type { PhaseIntervalInput } from './plan-snapshot.ts';

/** A status detail document and its hash. */
export interface StatusDetailDoc {
  hash: string;
  body: Record<string, unknown>;
}

/**
 * Hashes of recent details by their JSON text (key order as built): statuses repeat across
 * resources and ticks, and JSON.stringify costs a fraction of canonical JSON plus sha256. Equal
 * texts are equal documents, so a hit is always right; a miss only costs the hash. Cleared when large.
 */
const recentHashes = new Map<string, string>();
const RECENT_LIMIT = 10_000;

/** 128 bits of the sha256 of the canonical JSON, base64url (22 characters): the key is stored twice, in the row and its index. */
function detail(body: Record<string, unknown>): StatusDetailDoc {
  const text = JSON.stringify(body);
  let hash = recentHashes.get(text);
  if (hash === undefined) {
    hash = createHash('sha256').update(canonicalJson(body)).digest('base64url').slice(0, 22);
    if (recentHashes.size >= RECENT_LIMIT) recentHashes.clear();
    recentHashes.set(text, hash);
  }
  return { hash, body };
}

/**
 * A resource status' detail: reason, message, conditions, presence, generations, custom health and
 * the applier's status (absent when the inventory records none, so details written before it was
 * kept are the same documents).
 */
export function resourceDetail(r: ObservedResource): StatusDetailDoc {
  return detail({
    reason: r.reason,
    message: r.message,
    conditions: r.conditions,
    presence: r.presence,
    generation: r.generation,
    observedGeneration: r.observedGeneration,
    customHealth: r.customHealth,
    applied: r.applied,
  });
}

/**
 * A phase status' detail and the condition times left out of it, in order. A condition's reason and
 * message are the phase's status and message as summarizePhase writes them; those are left out too
 * and put back on reading, so the detail holds the message once.
 */
export function phaseDetail(s: PhaseIntervalInput): { doc: StatusDetailDoc; conditionTimes: (string | null)[] } {
  const conditions = s.conditions.map(({ lastTransitionTime: _time, reason, message, ...rest }) => ({
    ...rest,
    ...(reason === s.status ? {} : { reason }),
    ...(message === s.message ? {} : { message }),
  }));
  return {
    doc: detail({ message: s.message, summary: s.summary, conditions, worstResource: s.worstResource }),
    conditionTimes: s.conditions.map((c) => (typeof c.lastTransitionTime === 'string' ? c.lastTransitionTime : null)),
  };
}

/** The detail of a change-log message. */
export function messageDetail(message: string): StatusDetailDoc {
  return detail({ message });
}

/** A stored condition time as Kubernetes writes `lastTransitionTime`: RFC 3339, seconds unless it has milliseconds. */
export function formatConditionTime(time: Date | string): string {
  const date = typeof time === 'string' ? new Date(time) : time;
  if (Number.isNaN(date.getTime())) return String(time);
  const iso = date.toISOString();
  return date.getUTCMilliseconds() === 0 ? `${iso.slice(0, 19)}Z` : iso;
}

/**
 * Conditions of a stored phase detail with what {@link phaseDetail} left out put back: transition
 * times, and reason and message where the detail has none (the phase's status and message).
 */
export function withConditionTimes<T>(
  conditions: readonly T[],
  times: readonly (Date | string | null)[] | null,
  defaults: { reason: string; message: string },
): T[] {
  return conditions.map((condition, index) => {
    if (typeof condition !== 'object' || condition === null) return condition;
    const time = times?.[index];
    const record = condition as Record<string, unknown>;
    return {
      ...condition,
      ...(record['reason'] === undefined ? { reason: defaults.reason } : {}),
      ...(record['message'] === undefined ? { message: defaults.message } : {}),
      ...(time === null || time === undefined || time === '' ? {} : { lastTransitionTime: formatConditionTime(time) }),
    };
  });
}
