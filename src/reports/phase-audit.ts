/**
 * One phase's figures over the range. Durations come from the intervals clipped to the range;
 * events (failures, incidents, status changes) come from runs of equal status over the whole
 * history handed in, so an interval that began before the range still says what was going on at
 * `range.from`.
 */
import type { ResourceStatus } from '../status/types.ts';
import { coveredLength, normaliseIntervals, toEpoch, toRuns } from './intervals.ts';
import type { Normalised, Run, Span } from './intervals.ts';
import type { Incident, ManifestChange, PhaseAudit, PhaseHistory, RecoveryStats, StatusDurations, StatusInterval } from './types.ts';

const HOUR_MS = 3_600_000;

export interface PhaseAuditContext {
  rangeFrom: number;
  rangeTo: number;
  /** The phase's cluster's unreachable periods (sorted, disjoint); empty when unknown. */
  clusterUnreachable: readonly Span[];
  flappingChangesPerHour: number;
  /** Where the phase sits in the input, for error paths. */
  path: string;
}

export function emptyStatusDurations(): StatusDurations {
  return { Current: 0, InProgress: 0, Failed: 0, Terminating: 0, NotFound: 0, Unknown: 0 };
}

export function auditPhase(phase: PhaseHistory, context: PhaseAuditContext): PhaseAudit {
  const { rangeFrom, rangeTo } = context;
  const intervals = normaliseIntervals(phase.statusIntervals, rangeTo, `${context.path}.statusIntervals`);
  const runs = toRuns(intervals, (item) => item.status);
  const time = measureTime(intervals, context);
  const reachableObserved = time.observedMs - time.unreachableMs;
  const changeTimes = runs.slice(1).map((run) => run.from).filter((at) => inRange(at, context));
  const maxChangesInAnHour = maxInWindow(changeTimes, HOUR_MS);
  const failureTimes = runs.filter((run) => run.key === 'Failed' && inRange(run.from, context)).map((run) => run.from);

  return {
    id: phase.id,
    cluster: phase.cluster,
    namespace: phase.namespace,
    name: phase.name,
    source: phase.source,
    observedMs: time.observedMs,
    unreachableMs: time.unreachableMs,
    unobservedMs: rangeTo - rangeFrom - time.observedMs,
    timeInStatus: time.timeInStatus,
    availability: reachableObserved > 0 ? (100 * time.timeInStatus.Current) / reachableObserved : null,
    statusAtStart: statusAt(runs, rangeFrom),
    statusAtEnd: runs[runs.length - 1]?.key ?? null,
    failures: failureTimes.length,
    failureTimes: failureTimes.map((at) => new Date(at)),
    failedAtStart: runs.some((run) => run.key === 'Failed' && run.from < rangeFrom && run.to > rangeFrom),
    recovery: measureRecovery(runs, context),
    statusChanges: changeTimes.length,
    changesPerHour: time.observedMs > 0 ? changeTimes.length / (time.observedMs / HOUR_MS) : 0,
    maxChangesInAnHour,
    flapping: maxChangesInAnHour > context.flappingChangesPerHour,
    manifestChanges: manifestChangesInRange(phase.manifestChanges, context),
  };
}

function inRange(at: number, context: PhaseAuditContext): boolean {
  return at >= context.rangeFrom && at < context.rangeTo;
}

function measureTime(
  intervals: readonly Normalised<StatusInterval>[],
  context: PhaseAuditContext,
): { observedMs: number; unreachableMs: number; timeInStatus: StatusDurations } {
  const timeInStatus = emptyStatusDurations();
  let observedMs = 0;
  let unreachableMs = 0;
  for (const interval of intervals) {
    // Nothing vouched for the status then: that time counts as unobserved, as a gap does.
    if (interval.item.unobserved === true) continue;
    const from = Math.max(interval.from, context.rangeFrom);
    const to = Math.min(interval.to, context.rangeTo);
    if (to <= from) continue;
    const length = to - from;
    const unreachable = interval.item.stale ? length : coveredLength({ from, to }, context.clusterUnreachable);
    observedMs += length;
    unreachableMs += unreachable;
    timeInStatus[interval.item.status] += length - unreachable;
  }
  return { observedMs, unreachableMs, timeInStatus };
}

/** Last known status at `at`: the run that began at or before it and had not given way yet. */
function statusAt(runs: readonly Run<ResourceStatus>[], at: number): ResourceStatus | null {
  for (const run of runs) if (run.from <= at && at < run.to) return run.key;
  return null;
}

/**
 * Incidents: a run that is not Current right after a Current run opens one; the next Current run
 * closes it. A phase that has never been Current has nothing to recover to, so its first
 * non-Current runs open no incident.
 */
function findIncidents(runs: readonly Run<ResourceStatus>[]): { from: number; to: number | null; reachedFailed: boolean }[] {
  const incidents: { from: number; to: number | null; reachedFailed: boolean }[] = [];
  let open: { from: number; to: number | null; reachedFailed: boolean } | null = null;
  let previous: ResourceStatus | null = null;
  for (const run of runs) {
    if (run.key === 'Current') {
      if (open !== null) open.to = run.from;
      open = null;
    } else {
      if (open === null && previous === 'Current') {
        open = { from: run.from, to: null, reachedFailed: false };
        incidents.push(open);
      }
      if (open !== null && run.key === 'Failed') open.reachedFailed = true;
    }
    previous = run.key;
  }
  return incidents;
}

function measureRecovery(runs: readonly Run<ResourceStatus>[], context: PhaseAuditContext): RecoveryStats {
  const all = findIncidents(runs);
  const incidents: Incident[] = all
    .filter((incident) => inRange(incident.from, context))
    .map((incident) => ({
      from: new Date(incident.from),
      to: incident.to === null ? null : new Date(incident.to),
      durationMs: (incident.to ?? context.rangeTo) - incident.from,
      reachedFailed: incident.reachedFailed,
    }));
  const recoveredDurations = incidents.filter((incident) => incident.to !== null).map((incident) => incident.durationMs);
  const atStart = all.find((incident) => incident.from < context.rangeFrom && (incident.to === null || incident.to > context.rangeFrom));
  const open = all.find((incident) => incident.to === null && incident.from < context.rangeTo);
  return {
    incidents,
    recovered: recoveredDurations.length,
    meanTimeToRecoverMs:
      recoveredDurations.length > 0 ? recoveredDurations.reduce((sum, ms) => sum + ms, 0) / recoveredDurations.length : null,
    longestTimeToRecoverMs: recoveredDurations.length > 0 ? Math.max(...recoveredDurations) : null,
    incidentAtStart:
      atStart === undefined ? null : { since: new Date(atStart.from), recoveredAt: atStart.to === null ? null : new Date(atStart.to) },
    openIncident: open === undefined ? null : { since: new Date(open.from), ongoingMs: context.rangeTo - open.from },
  };
}

/** Most of the sorted `times` inside any window [t, t + windowMs). */
function maxInWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    const endTime = times[end] ?? 0;
    while ((times[start] ?? endTime) <= endTime - windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

function manifestChangesInRange(changes: readonly ManifestChange[], context: PhaseAuditContext): ManifestChange[] {
  return changes
    .map((change, index) => ({ change, at: toEpoch(change.at, `${context.path}.manifestChanges[${index}].at`) }))
    .filter((entry) => inRange(entry.at, context))
    .sort((a, b) => a.at - b.at)
    .map(({ change }) => ({
      at: new Date(change.at.getTime()),
      added: [...change.added],
      removed: [...change.removed],
      revisionsChanged: [...change.revisionsChanged],
    }));
}
