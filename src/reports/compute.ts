/**
 * `computeAuditReport`: availability, failures, recovery, flapping and manifest changes per phase,
 * reachability and outages per cluster, and totals; phases worst first. Pure: no clock, no I/O; the caller passes the
 * range and the histories.
 */
import { AuditInputError } from './errors.ts';
import { mergeSpans, toEpoch } from './intervals.ts';
import type { Span } from './intervals.ts';
import { auditCluster } from './cluster-audit.ts';
import { comparePhasesWorstFirst } from './order.ts';
import { auditPhase } from './phase-audit.ts';
import type { AuditInput, AuditOptions, AuditReport, AuditTotals, ClusterAudit, PhaseAudit } from './types.ts';

/** Default of `AuditOptions.flappingChangesPerHour`. */
export const DEFAULT_FLAPPING_CHANGES_PER_HOUR = 4;

/**
 * Computes the audit of `input.range` ([from, to)).
 *
 * Per phase, the range splits into unobserved time (no status interval), unreachable time (a stale
 * interval, or the phase's cluster unreachable per `clusters[].reachability`) and reachable observed
 * time, which `timeInStatus` divides among the six statuses. Availability is
 * `100 * Current / (observed - unreachable)`: unreachable time is neither up nor down.
 *
 * @throws AuditInputError on an invalid range or date, an interval ending before it starts, or
 *   overlapping intervals (unordered input is sorted, empty intervals are dropped).
 */
export function computeAuditReport(input: AuditInput, options: AuditOptions = {}): AuditReport {
  const rangeFrom = toEpoch(input.range.from, 'range.from');
  const rangeTo = toEpoch(input.range.to, 'range.to');
  if (rangeTo < rangeFrom) throw new AuditInputError('INVALID_RANGE', 'range', 'range.to is before range.from');
  const flappingChangesPerHour = options.flappingChangesPerHour ?? DEFAULT_FLAPPING_CHANGES_PER_HOUR;

  const unreachableByCluster = new Map<string, Span[]>();
  const clusters: ClusterAudit[] = input.clusters.map((cluster, index) => {
    const result = auditCluster(cluster, rangeFrom, rangeTo, `clusters[${index}]`);
    // Two entries for one cluster name are merged rather than counted twice.
    unreachableByCluster.set(
      cluster.name,
      mergeSpans([...(unreachableByCluster.get(cluster.name) ?? []), ...result.unreachable]),
    );
    return result.audit;
  });
  const phases: PhaseAudit[] = input.phases
    .map((phase, index) =>
      auditPhase(phase, {
        rangeFrom,
        rangeTo,
        clusterUnreachable: unreachableByCluster.get(phase.cluster) ?? [],
        flappingChangesPerHour,
        path: `phases[${index}]`,
      }),
    )
    .sort(comparePhasesWorstFirst);

  return {
    range: { from: new Date(rangeFrom), to: new Date(rangeTo), durationMs: rangeTo - rangeFrom },
    flappingChangesPerHour,
    phases,
    clusters,
    totals: sumTotals(phases, clusters),
  };
}

function sumTotals(phases: readonly PhaseAudit[], clusters: readonly ClusterAudit[]): AuditTotals {
  const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
  const current = sum(phases.map((phase) => phase.timeInStatus.Current));
  const reachableObserved = sum(phases.map((phase) => phase.observedMs - phase.unreachableMs));
  return {
    phases: phases.length,
    clusters: clusters.length,
    observedMs: sum(phases.map((phase) => phase.observedMs)),
    unreachableMs: sum(phases.map((phase) => phase.unreachableMs)),
    availability: reachableObserved > 0 ? (100 * current) / reachableObserved : null,
    failures: sum(phases.map((phase) => phase.failures)),
    incidents: sum(phases.map((phase) => phase.recovery.incidents.length)),
    flappingPhases: phases.filter((phase) => phase.flapping).length,
    outages: sum(clusters.map((cluster) => cluster.outages.length)),
    manifestChanges: sum(phases.map((phase) => phase.manifestChanges.length)),
    inventoryChanges: sum(phases.map((phase) => phase.inventoryChanges)),
    revisionChanges: sum(phases.map((phase) => phase.revisionChanges)),
    restored: sum(phases.map((phase) => phase.restore.restored)),
    meanTimeToRestoreMs: mean(
      phases.flatMap((phase) =>
        phase.restore.restores.flatMap((restore) => (restore.restoredAt === null ? [] : [restore.durationMs])),
      ),
    ),
    meanTimeOutOfCurrentMs: mean(
      phases.flatMap((phase) =>
        phase.recovery.incidents.flatMap((incident) => (incident.to === null ? [] : [incident.durationMs])),
      ),
    ),
  };
}

function mean(values: readonly number[]): number | null {
  return values.length > 0 ? values.reduce((total, value) => total + value, 0) / values.length : null;
}
