/**
 * One phase's figures over the range. Durations come from the intervals clipped to the range;
 * events (failures, incidents, status changes) come from runs of equal status over the whole
 * history handed in, so an interval that began before the range still says what was going on at
 * `range.from`.
 */
import type { ResourceStatus } from '../status/types.ts';
import { coveredLength, normaliseIntervals, toEpoch, toRuns } from './intervals.ts';
import type { Normalised, Run, Span } from './intervals.ts';
import { measureRecovery, measureRestore } from './episodes.ts';
import type {
  AuditedManifestChange,
  ConditionDurations,
  ConditionInterval,
  ManifestChange,
  PhaseAudit,
  PhaseHistory,
  StatusDurations,
  StatusInterval,
} from './types.ts';

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

/** Time in [rangeFrom, rangeTo) per condition type and status, from intervals clipped to the range. */
function measureConditionTime(
  intervals: readonly ConditionInterval[],
  rangeFrom: number,
  rangeTo: number,
): Record<string, ConditionDurations> {
  const out: Record<string, ConditionDurations> = {};
  for (const i of [...intervals].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))) {
    const from = Math.max(i.from.getTime(), rangeFrom);
    const to = Math.min(i.to === null ? rangeTo : i.to.getTime(), rangeTo);
    const durations = (out[i.type] ??= { True: 0, False: 0, Unknown: 0 });
    if (to > from) durations[i.status] += to - from;
  }
  return out;
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
  const changeTimes = runs
    .slice(1)
    .map((run) => run.from)
    .filter((at) => inRange(at, context));
  const maxChangesInAnHour = maxInWindow(changeTimes, HOUR_MS);
  const failureTimes = runs.filter((run) => run.key === 'Failed' && inRange(run.from, context)).map((run) => run.from);
  const manifestChanges = manifestChangesInRange(phase.manifestChanges, context);

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
    recovery: measureRecovery(runs, intervals, context),
    restore: measureRestore(runs, intervals, context),
    statusChanges: changeTimes.length,
    changesPerHour: time.observedMs > 0 ? changeTimes.length / (time.observedMs / HOUR_MS) : 0,
    maxChangesInAnHour,
    conditionTime: measureConditionTime(phase.conditionIntervals ?? [], rangeFrom, rangeTo),
    flapping: maxChangesInAnHour > context.flappingChangesPerHour,
    manifestChanges,
    inventoryChanges: manifestChanges.filter((change) => change.inventoryChanged).length,
    revisionChanges: manifestChanges.filter((change) => change.revisionsChanged.length > 0).length,
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

function manifestChangesInRange(
  changes: readonly ManifestChange[],
  context: PhaseAuditContext,
): AuditedManifestChange[] {
  return changes
    .map((change, index) => ({ change, at: toEpoch(change.at, `${context.path}.manifestChanges[${index}].at`) }))
    .filter((entry) => inRange(entry.at, context))
    .sort((a, b) => a.at - b.at)
    .map(({ change }) => ({
      at: new Date(change.at.getTime()),
      inventoryChanged: change.inventoryChanged ?? (change.added.length > 0 || change.removed.length > 0),
      added: [...change.added],
      removed: [...change.removed],
      revisionsChanged: [...change.revisionsChanged],
    }));
}
