/**
 * When two observations of the same thing count as "unchanged". An equal fingerprint extends the
 * open interval (no write); a different one closes it and opens a new one.
 */
import { Buffer } from 'node:buffer';
import { sameApplied } from './applied.ts';
import { canonicalJson } from './canonical-hash.ts';
import type {
  HashedDocument,
  ObservedPhaseStatus,
  ObservedResource,
  OpenPhaseInterval,
  OpenResourceInterval,
} from './types.ts';

/**
 * True when stored open interval `stored` and observed `r` agree on what a resource's interval
 * records (status, reason, message, presence, generations, revision, custom health, applier status), and `r` was
 * read: the observation extends the interval. Compared field by field: a worker keeps its clusters'
 * stored intervals between snapshots, and a fingerprint string kept for each would cost about as
 * much memory again as the intervals themselves.
 */
export function storedMatchesObserved(stored: OpenResourceInterval, r: ObservedResource): boolean {
  const recorded = stored.recorded;
  return (
    r.unread !== true &&
    recorded.status === r.status &&
    (recorded.reason ?? null) === (r.reason ?? null) &&
    recorded.message === r.message &&
    recorded.presence === r.presence &&
    (stored.generation ?? null) === (r.generation ?? null) &&
    (stored.observedGeneration ?? null) === (r.observedGeneration ?? null) &&
    stored.revisionDigest === (r.revision === undefined ? null : revisionDigest(r.revision)) &&
    (recorded.customHealth ?? null) === (r.customHealth?.health ?? null) &&
    sameApplied(recorded.applied, r.applied)
  );
}

/**
 * The revision's sha256 as 32 latin1 characters, the form a kept state holds: the document's own
 * `digest` (the same string, so the state shares it), else made from its hex `hash`.
 */
export function revisionDigest(document: HashedDocument): string {
  return document.digest ?? digestOfHex(document.hash);
}

/** A hex sha256 as 32 latin1 characters: a new flat string, holding nothing else alive. */
export function digestOfHex(hex: string): string {
  return Buffer.from(hex, 'hex').toString('latin1');
}

/** The hex form of a sha256 kept as 32 latin1 characters ({@link digestOfHex}'s inverse). */
export function hexOfDigest(digest: string): string {
  return Buffer.from(digest, 'latin1').toString('hex');
}

/**
 * Fingerprint of an observed phase status; condition transition times are left out on purpose.
 * What was just observed is never stale, so it differs from a stored stale interval of the same status.
 */
export function fingerprintObservedPhase(p: ObservedPhaseStatus): string {
  return canonicalJson([p.status, p.message, p.summary, p.worstResource ?? null, false]);
}

/** Fingerprint of a stored open phase interval, comparable with {@link fingerprintObservedPhase}. */
export function fingerprintStoredPhase(p: OpenPhaseInterval): string {
  return canonicalJson([p.status, p.message, p.summary, p.worstResource, p.stale]);
}

/** True when a user would read the two as a different status (status, reason or message). */
export function isVisibleChange(
  from: { status: string; reason?: string | null; message: string },
  to: { status: string; reason?: string | null; message: string },
): boolean {
  return from.status !== to.status || (from.reason ?? null) !== (to.reason ?? null) || from.message !== to.message;
}
