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
}

/** A change of a phase's manifest (its inventory), as the history store records it. */
export interface ManifestChange {
  at: Date;
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
  /** Inventory kind: cli-utils | resourcegroup | flux | argocd | selector | config. */
  source: string;
  /**
   * Every interval that overlaps the range, plus (ideally) the ones just before it: the report reads
   * them to know the status at `range.from` (`failedAtStart`, `incidentAtStart`).
   */
  statusIntervals: StatusInterval[];
  manifestChanges: ManifestChange[];
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
}

/** Recovery figures of one phase. */
export interface RecoveryStats {
  /** Incidents that began inside the range (in time order), recovered or not. */
  incidents: Incident[];
  /** How many of `incidents` ended inside the range. */
  recovered: number;
  /** Mean `durationMs` of the recovered incidents that began inside the range; `null` if none. */
  meanTimeToRecoverMs: number | null;
  /** Longest `durationMs` of those; `null` if none. */
  longestTimeToRecoverMs: number | null;
  /**
   * An incident that began before the range and was still going at `range.from`. Reported here and
   * not averaged: its start lies outside the period under audit.
   */
  incidentAtStart: { since: Date; recoveredAt: Date | null } | null;
  /** The incident still going at `range.to`, if any (it may also be `incidentAtStart`). */
  openIncident: { since: Date; ongoingMs: number } | null;
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
  recovery: RecoveryStats;
  /** Status changes inside the range (the very first record is not a change). */
  statusChanges: number;
  /** `statusChanges` per hour of observed time; 0 when nothing was observed. */
  changesPerHour: number;
  /** Most status changes inside any 60-minute window [t, t + 1 h) of the range. */
  maxChangesInAnHour: number;
  /** `maxChangesInAnHour > flappingChangesPerHour`. */
  flapping: boolean;
  /** Manifest changes with `range.from <= at < range.to`, in time order. */
  manifestChanges: ManifestChange[];
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
  manifestChanges: number;
}

/** The whole audit. */
export interface AuditReport {
  range: { from: Date; to: Date; durationMs: number };
  flappingChangesPerHour: number;
  phases: PhaseAudit[];
  clusters: ClusterAudit[];
  totals: AuditTotals;
}
