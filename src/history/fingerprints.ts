/**
 * When two observations of the same thing count as "unchanged". An equal fingerprint extends the
 * open interval (no write); a different one closes it and opens a new one.
 */
import { canonicalJson } from './canonical-hash.ts';
import type { ObservedPhaseStatus, ObservedResource, OpenPhaseInterval, OpenResourceInterval } from './types.ts';

/**
 * Fingerprint of an observed resource: status, reason, message, generations, revision, custom health.
 * Resource fingerprints are arrays of primitives, whose JSON.stringify is their canonical JSON
 * (cheaper, and computed for every resource of every tick).
 */
export function fingerprintObservedResource(r: ObservedResource): string {
  let fingerprint = observedFingerprints.get(r);
  if (fingerprint === undefined) {
    fingerprint = JSON.stringify([r.status, r.reason ?? null, r.message, r.presence, r.generation ?? null, r.observedGeneration ?? null, r.revision?.hash ?? null, r.customHealth?.health ?? null, r.unread === true]);
    observedFingerprints.set(r, fingerprint);
  }
  return fingerprint;
}

/**
 * True when stored open interval `stored` and observed `r` have the same fingerprint (the fields
 * {@link fingerprintObservedResource} covers): the observation extends the interval. Compared
 * field by field: a worker keeps its clusters' stored intervals between snapshots, and a
 * fingerprint string kept for each would double their memory (~2 MB per 10,000 resources).
 */
export function storedMatchesObserved(stored: OpenResourceInterval, r: ObservedResource): boolean {
  return (
    r.unread !== true &&
    stored.status === r.status &&
    (stored.reason ?? null) === (r.reason ?? null) &&
    stored.message === r.message &&
    stored.presence === r.presence &&
    (stored.generation ?? null) === (r.generation ?? null) &&
    (stored.observedGeneration ?? null) === (r.observedGeneration ?? null) &&
    (stored.revisionHash ?? null) === (r.revision?.hash ?? null) &&
    (stored.customHealth ?? null) === (r.customHealth?.health ?? null)
  );
}

// Observations are never modified once built: a snapshot fingerprints each resource when it
// hashes the observation and again when it plans, so each object's fingerprint is computed once.
const observedFingerprints = new WeakMap<ObservedResource, string>();

/** Fingerprint of a phase status; condition transition times are left out on purpose. */
export function fingerprintObservedPhase(p: ObservedPhaseStatus, stale: boolean): string {
  return canonicalJson([p.status, p.message, p.summary, p.worstResource ?? null, stale]);
}

/** Fingerprint of a stored open phase interval, comparable with {@link fingerprintObservedPhase}. */
export function fingerprintStoredPhase(p: OpenPhaseInterval): string {
  return canonicalJson([p.status, p.message, p.summary, p.worstResource, p.stale]);
}

/** True when a user would read the two as a different status (status, reason or message). */
export function isVisibleChange(from: { status: string; reason?: string | null; message: string }, to: { status: string; reason?: string | null; message: string }): boolean {
  return from.status !== to.status || (from.reason ?? null) !== (to.reason ?? null) || from.message !== to.message;
}
