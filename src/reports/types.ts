/**
 * The audit report's vocabulary: what the caller hands in (histories read from the store) and what
 * comes out (per-phase, per-cluster and overall figures). Pure data; every time is a `Date`, every
 * duration a whole number of milliseconds.
 *
 * Intervals are half-open, [from, to). `to: null` means "still open": it ends at `range.to`, so the
 * caller must pass `range.to <= now`.
 */
import type { ResourceStatus } from '../status/types.ts';

/** The period the report covers, [from, to). */
export interface AuditRange {
  from: Date;
  to: Date;
}

/** One period during which a cluster was (or was not) reachable. */
export interface ReachabilityInterval {
  reachable: boolean;
  from: Date;
  /** `null`: still open, ends at `range.to`. */
  to: Date | null;
}

/** A cluster's reachability history. Intervals may come in any order but must not overlap. */
export interface ClusterHistory {
  name: string;
  reachability: ReachabilityInterval[];
}

/** One period during which a phase had one aggregate status. */
export interface StatusInterval {
  status: ResourceStatus;
  from: Date;
  /** `null`: still open, ends at `range.to`. */
  to: Date | null;
  /**
   * The cluster could not be read during this interval; `status` is the last one known. Stale time
   * is reported as `unreachableMs`, never as Current nor as down.
   */
  stale: boolean;
  /**
   * No snapshot observed the cluster during this interval (phaselog or its workers were down, or
   * the cluster was retired); `status` is the last one known. Reported as `unobservedMs`, like time
   * with no interval at all, never as Current nor as down. @default false
   */
  unobserved?: boolean;
  /**
   * The member the phase's status came from during this interval (its worst resource) and what
   * that resource said; absent or `null` when not known or when the phase was Current.
   */
  cause?: StatusCause | null;
}

/** The resource a phase's status came from, as recorded: its worst member and that member's message. */
export interface StatusCause {
  /** Object key, group/kind/namespace/name. */
  resource: string;
  /** The resource's own status then; `null` when its record was not found. */
  status: ResourceStatus | null;
  /** The resource's message then (its reason when it had no message); may be empty. */
  message: string;
}

/**
 * What changed in a phase's manifest at one instant, as the history store records it. Two kinds
 * share one instant's record: an inventory change (a new manifest version began: entries added or
 * removed, or the inventory object itself changed; these are the `manifests` history's versions)
 * and member revision changes (an object of the inventory was applied with a new spec; no new
 * manifest version). `inventoryChanged` tells them apart.
 */
export interface ManifestChange {
  at: Date;
  /**
   * A new manifest version (inventory) began at `at`. When absent, it is inferred from `added` and
   * `removed` (non-empty means the inventory changed); the store sets it, so a new version that
   * only changed the inventory object is counted too.
   */
  inventoryChanged?: boolean;
  /** Object keys (group/kind/namespace/name) that joined the inventory. */
  added: string[];
  /** Object keys that left the inventory. */
  removed: string[];
  /** Object keys whose applied revision changed. */
  revisionsChanged: string[];
}

/** A phase's history. Status intervals may come in any order but must not overlap. */
export interface PhaseHistory {
  id: string;
  /** Matches `ClusterHistory.name`; that cluster's unreachable periods count as this phase's unreachable time. */
  cluster: string;
  namespace: string;
  name: string;
  /** Inventory kind: cli-utils | resourcegroup | flux | argocd | selector | config | owner. */
  source: string;
  /**
   * Every interval that overlaps the range, plus (ideally) the ones just before it: the report reads
   * them to know the status at `range.from` (`failedAtStart`, `incidentAtStart`).
   */
  statusIntervals: StatusInterval[];
  manifestChanges: ManifestChange[];
  /** Intervals of the phase's conditions from checks that overlap the range, any order. @default [] */
  conditionIntervals?: ConditionInterval[];
}

/** One period during which a phase's condition (from a check) had one status. */
export interface ConditionInterval {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  from: Date;
  /** `null`: still open, ends at `range.to`. */
  to: Date | null;
}

/** Milliseconds in the range a condition was True, False and Unknown (time before its first record counts in none). */
export interface ConditionDurations {
  True: number;
  False: number;
  Unknown: number;
}

/** Everything `computeAuditReport` needs. */
export interface AuditInput {
  range: AuditRange;
  clusters: ClusterHistory[];
  phases: PhaseHistory[];
}

/** Tunables of the report. */
export interface AuditOptions {
  /**
   * A phase is flapping when some 60-minute window inside the range holds more status changes
   * than this.
   * @default 4
   */
  flappingChangesPerHour?: number;
}

/** A manifest change as the report lists it: `inventoryChanged` always set. */
export interface AuditedManifestChange extends ManifestChange {
  inventoryChanged: boolean;
}

/** Milliseconds per status, all six keys always present. */
export type StatusDurations = Record<ResourceStatus, number>;

/**
 * One departure from Current: from the moment the phase left Current to the moment it was Current
 * again. Rollouts (Current → InProgress → Current) are incidents too; `reachedFailed` tells the
 * failures apart.
 */
export interface Incident {
  from: Date;
  /** When the phase was Current again; `null` when it was not by `range.to`. */
  to: Date | null;
  /** `to - from`, or `range.to - from` when not recovered. */
  durationMs: number;
  /** The phase was Failed at some point during the incident. */
  reachedFailed: boolean;
  /**
   * The resource that caused it: the cause of the incident's worst status (Failed before
   * Terminating, NotFound, Unknown, InProgress; the earliest of equals); `null` when none was recorded.
   */
  cause: StatusCause | null;
}

/** Recovery figures of one phase. */
export interface RecoveryStats {
  /** Incidents that began inside the range (in time order), recovered or not. */
  incidents: Incident[];
  /** How many of `incidents` ended inside the range. */
  recovered: number;
  /**
   * Mean time out of Current: mean `durationMs` of the recovered incidents that began inside the
   * range (rollouts included); `null` if none. For recovery from failures see `PhaseAudit.restore`.
   */
  meanTimeOutOfCurrentMs: number | null;
  /** Longest `durationMs` of those; `null` if none. */
  longestTimeOutOfCurrentMs: number | null;
  /**
   * Same figure as `meanTimeOutOfCurrentMs`, kept for existing readers. Deprecated: the name says
   * "recover" but a normal rollout counts; read `meanTimeOutOfCurrentMs`, or
   * `PhaseAudit.restore.meanTimeToRestoreMs` for recovery from Failed.
   */
  meanTimeToRecoverMs: number | null;
  /** Same figure as `longestTimeOutOfCurrentMs`; deprecated like `meanTimeToRecoverMs`. */
  longestTimeToRecoverMs: number | null;
  /**
   * An incident that began before the range and was still going at `range.from`. Reported here and
   * not averaged: its start lies outside the period under audit.
   */
  incidentAtStart: { since: Date; recoveredAt: Date | null } | null;
  /** The incident still going at `range.to`, if any (it may also be `incidentAtStart`). */
  openIncident: { since: Date; ongoingMs: number } | null;
}

/** One failure and its restore: from entering Failed to the next Current run. */
export interface Restore {
  /** When the phase entered Failed. */
  failedAt: Date;
  /** When it was Current again; `null` when it was not by `range.to`. */
  restoredAt: Date | null;
  /** `restoredAt - failedAt`, or `range.to - failedAt` when not restored. */
  durationMs: number;
  /** The resource that was Failed as it entered Failed; `null` when none was recorded. */
  cause: StatusCause | null;
}

/**
 * Time to restore from Failed. A restore begins when the phase enters Failed and ends at the next
 * Current run; Failed again before Current (Failed → InProgress → Failed) stays the same restore.
 * Rollouts that never reach Failed are not restores.
 */
export interface RestoreStats {
  /** Restores that began (entered Failed) inside the range, in time order, restored or not. */
  restores: Restore[];
  /** How many of `restores` ended inside the range. */
  restored: number;
  /** Mean `durationMs` of the restored ones; `null` if none. */
  meanTimeToRestoreMs: number | null;
  /** Longest `durationMs` of those; `null` if none. */
  longestTimeToRestoreMs: number | null;
  /** A restore that began before the range and was still going at `range.from`; not averaged. */
  restoreAtStart: { failedAt: Date; restoredAt: Date | null } | null;
  /** The restore still going at `range.to`, if any (it may also be `restoreAtStart`). */
  notRestored: { failedAt: Date; ongoingMs: number } | null;
}

/** The audit of one phase over the range. */
export interface PhaseAudit {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  source: string;
  /** Time in the range covered by status intervals (stale ones included). */
  observedMs: number;
  /** Observed time that was stale or during which the phase's cluster was unreachable. */
  unreachableMs: number;
  /** Time in the range covered by no status interval (before the first record, in gaps, after the last) or by an unobserved one. */
  unobservedMs: number;
  /** Reachable observed time per status; sums to `observedMs - unreachableMs`. */
  timeInStatus: StatusDurations;
  /**
   * Percent (0–100) of reachable observed time that was Current:
   * `100 * timeInStatus.Current / (observedMs - unreachableMs)`; `null` when the denominator is 0.
   */
  availability: number | null;
  /** Status of the run covering `range.from` (`null` when no record had begun, or the records had stopped). */
  statusAtStart: ResourceStatus | null;
  /** Last status recorded before `range.to` (`null` if nothing was recorded). */
  statusAtEnd: ResourceStatus | null;
  /** Entries into Failed inside the range (a first record that is Failed counts as one). */
  failures: number;
  /** When each of those entries happened. */
  failureTimes: Date[];
  /** Failed at `range.from` since before the range (not counted in `failures`). */
  failedAtStart: boolean;
  /** Departures from Current (rollouts included) and the time out of Current. */
  recovery: RecoveryStats;
  /** Failures and the time to restore from them. */
  restore: RestoreStats;
  /** Status changes inside the range (the very first record is not a change). */
  statusChanges: number;
  /** `statusChanges` per hour of observed time; 0 when nothing was observed. */
  changesPerHour: number;
  /** Most status changes inside any 60-minute window [t, t + 1 h) of the range. */
  maxChangesInAnHour: number;
  /** `maxChangesInAnHour > flappingChangesPerHour`. */
  flapping: boolean;
  /**
   * Manifest changes with `range.from <= at < range.to`, in time order: both kinds, one entry per
   * instant (see {@link ManifestChange}).
   */
  manifestChanges: AuditedManifestChange[];
  /** Entries of `manifestChanges` where a new manifest version began (the `manifests` history's versions in the range). */
  inventoryChanges: number;
  /** Entries of `manifestChanges` where some member's revision changed, with or without a new manifest version. */
  revisionChanges: number;
  /** Per condition type (from checks), the time in the range it was True, False and Unknown. */
  conditionTime: Record<string, ConditionDurations>;
}

/** One period of unreachability. */
export interface Outage {
  from: Date;
  /** When the cluster was reachable again; `null` when it was not by `range.to`. */
  to: Date | null;
  /** Duration inside the range. */
  durationMs: number;
}

/** The audit of one cluster's reachability over the range. */
export interface ClusterAudit {
  name: string;
  /** Time in the range covered by reachability intervals. */
  observedMs: number;
  reachableMs: number;
  unreachableMs: number;
  /** Time in the range covered by no reachability interval. */
  unobservedMs: number;
  /** Percent (0–100): `100 * reachableMs / observedMs`; `null` when `observedMs` is 0. */
  reachability: number | null;
  /** Unreachable periods that began inside the range, in time order. */
  outages: Outage[];
  /** Longest `durationMs` of `outages`; 0 when there were none. */
  longestOutageMs: number;
  /** An unreachable period that began before the range and was still going at `range.from` (not in `outages`). */
  outageAtStart: Outage | null;
}

/** Figures across every phase and cluster. */
export interface AuditTotals {
  phases: number;
  clusters: number;
  observedMs: number;
  unreachableMs: number;
  /**
   * Mean phase availability weighted by reachable observed time, i.e.
   * `100 * Σ timeInStatus.Current / Σ (observedMs - unreachableMs)`; `null` when the sum is 0.
   */
  availability: number | null;
  failures: number;
  incidents: number;
  flappingPhases: number;
  /** Outages (begun inside the range) summed over clusters. */
  outages: number;
  /** Sum of the phases' `manifestChanges` entries (both kinds, one per instant); read the two below apart. */
  manifestChanges: number;
  /** Sum of the phases' `inventoryChanges`: new manifest versions. */
  inventoryChanges: number;
  /** Sum of the phases' `revisionChanges`: instants where a member's revision changed. */
  revisionChanges: number;
  /** Restores from Failed that began and ended in the range, over all phases. */
  restored: number;
  /** Mean time to restore from Failed over all those restores; `null` if none. */
  meanTimeToRestoreMs: number | null;
  /** Mean time out of Current over all recovered incidents (rollouts included); `null` if none. */
  meanTimeOutOfCurrentMs: number | null;
}

/** The whole audit. */
export interface AuditReport {
  range: { from: Date; to: Date; durationMs: number };
  flappingChangesPerHour: number;
  /** Worst first (see `comparePhasesWorstFirst`). */
  phases: PhaseAudit[];
  clusters: ClusterAudit[];
  totals: AuditTotals;
}
