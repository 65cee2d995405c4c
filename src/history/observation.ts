/**
 * The one rule for "is this cluster observed recently": a cluster is observed while its last
 * completed snapshot tick (a good read or a recorded outage) is no older than a small multiple of
 * its snapshot interval. Past that bound nothing vouches for what is stored about it (phaselog was
 * down, every worker died, or the cluster left the configuration), so its phases are stale. Used by
 * the phase and cluster reads, the gate, the audit reads and the snapshot writer (which records the
 * span a cluster went unobserved once it is observed again). Pure.
 */

/** Ticks a cluster may miss before it counts as unobserved. */
export const UNOBSERVED_AFTER_TICKS = 3;

/**
 * The least time a tick may come late: with a short interval, a snapshot's own length and a job's
 * wait in the queue on a busy host would otherwise count as the cluster going unobserved.
 */
export const UNOBSERVED_GRACE_MS = 10_000;

/** The interval assumed for a cluster whose interval no worker has recorded yet (the configuration's default). */
export const DEFAULT_SNAPSHOT_INTERVAL_MS = 30_000;

/** What the store knows about a cluster's observation. */
export interface ClusterObservationFacts {
  /** When its last snapshot tick completed (good read or recorded outage); null before the first. */
  lastObservedAt: Date | null;
  /** The interval its workers snapshot it at; null when none recorded it. */
  snapshotIntervalMs: number | null;
  /** When it left the configuration; null while configured. */
  retiredAt: Date | null;
}

/**
 * Whether a cluster is observed now. When it is not, `since` is when what is stored about it
 * stopped being vouched for (the bound past its last tick, or its retirement if earlier; null when
 * it was never observed).
 */
export type ObservationState =
  | { state: 'OBSERVED' }
  /** Configured, but no tick within the bound. */
  | { state: 'UNOBSERVED'; since: Date | null; lastObservedAt: Date | null }
  /** Removed from the configuration at `retiredAt`. */
  | { state: 'RETIRED'; since: Date | null; retiredAt: Date; lastObservedAt: Date | null };

/** Why a status is stale: its cluster could not be read, was not observed, or is no longer configured. */
export type StaleReason = 'UNREACHABLE' | 'UNOBSERVED' | 'RETIRED';

/**
 * How long after its last tick a cluster snapshot every `snapshotIntervalMs` stays observed: three
 * intervals, and at least one interval plus {@link UNOBSERVED_GRACE_MS}.
 */
export function observedForMs(snapshotIntervalMs: number | null): number {
  const interval = snapshotIntervalMs ?? DEFAULT_SNAPSHOT_INTERVAL_MS;
  return Math.max(UNOBSERVED_AFTER_TICKS * interval, interval + UNOBSERVED_GRACE_MS);
}

/** The cluster's observation state at `now`. */
export function observationStateOf(facts: ClusterObservationFacts, now: Date): ObservationState {
  const { lastObservedAt, retiredAt } = facts;
  const end = lastObservedAt === null ? null : lastObservedAt.getTime() + observedForMs(facts.snapshotIntervalMs);
  if (retiredAt !== null) {
    const since = end === null ? null : new Date(Math.min(end, retiredAt.getTime()));
    return { state: 'RETIRED', since, retiredAt, lastObservedAt };
  }
  if (end === null) return { state: 'UNOBSERVED', since: null, lastObservedAt };
  return end >= now.getTime() ? { state: 'OBSERVED' } : { state: 'UNOBSERVED', since: new Date(end), lastObservedAt };
}

/**
 * Where the span a cluster went unobserved begins, when a tick at `at` ends one: the bound past its
 * last tick, if `at` is later. Undefined when the tick comes in time (or is the first).
 */
export function unobservedGapBefore(
  lastObservedAt: Date | null,
  snapshotIntervalMs: number | null,
  at: Date,
): Date | undefined {
  if (lastObservedAt === null) return undefined;
  const end = lastObservedAt.getTime() + observedForMs(snapshotIntervalMs);
  return end < at.getTime() ? new Date(end) : undefined;
}

/**
 * Why a phase's current status is stale at `now`, null when it is fresh: its cluster retired or
 * unobserved (whatever was stored last), else a stored staleness (an outage or unread members).
 */
export function staleReasonOf(
  state: ObservationState,
  storedStale: boolean,
  clusterReachable: boolean | null,
): StaleReason | null {
  if (state.state === 'RETIRED') return 'RETIRED';
  if (state.state === 'UNOBSERVED') return 'UNOBSERVED';
  return storedStale || clusterReachable === false ? 'UNREACHABLE' : null;
}

/** Whether a status still open (stored as current) was vouched for at `at`: false from the state's `since` on. */
export function observedAt(state: ObservationState, at: Date): boolean {
  if (state.state === 'OBSERVED') return true;
  return state.since !== null && at.getTime() < state.since.getTime();
}

/** Why a stored interval is stale (RETIRED is never stored: a retired cluster's span is unobserved once it is read again). */
export function storedStaleReason(interval: { stale: boolean; unobserved: boolean }): StaleReason | null {
  if (interval.unobserved) return 'UNOBSERVED';
  return interval.stale ? 'UNREACHABLE' : null;
}

/** A cluster's state as the API shows it. */
export type ClusterState = 'OBSERVED' | 'UNREACHABLE' | 'UNOBSERVED' | 'RETIRED';

/** The cluster's state from its observation state and its last recorded reachability. */
export function clusterStateOf(state: ObservationState, reachable: boolean | null): ClusterState {
  if (state.state !== 'OBSERVED') return state.state;
  return reachable === false ? 'UNREACHABLE' : 'OBSERVED';
}
