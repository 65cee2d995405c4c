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

/** Fingerprint of a stored open resource interval, comparable with {@link fingerprintObservedResource}. */
export function fingerprintStoredResource(r: OpenResourceInterval): string {
  let fingerprint = storedFingerprints.get(r);
  if (fingerprint === undefined) {
    fingerprint = JSON.stringify([r.status, r.reason, r.message, r.presence, r.generation, r.observedGeneration, r.revisionHash, r.customHealth, false]);
    storedFingerprints.set(r, fingerprint);
  }
  return fingerprint;
}

/**
 * Records that stored interval `stored` was made from observed `observed` (what the store reads
 * back after writing it), so its fingerprint is the observed one's: a worker keeping the stored
 * state does not compute it again. Ignored when the two could differ (an unread resource, a
 * revision not stored).
 */
export function rememberStoredFingerprint(stored: OpenResourceInterval, observed: ObservedResource): void {
  if (observed.unread === true || stored.revisionHash !== (observed.revision?.hash ?? null)) return;
  storedFingerprints.set(stored, fingerprintObservedResource(observed));
}

// Observations and stored states are never modified once built: a snapshot fingerprints each
// resource when it hashes the observation and again when it plans, and a worker keeps the stored
// state from one snapshot to the next, so each object's fingerprint is computed once.
const observedFingerprints = new WeakMap<ObservedResource, string>();
const storedFingerprints = new WeakMap<OpenResourceInterval, string>();

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
