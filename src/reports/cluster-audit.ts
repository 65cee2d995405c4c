/** One cluster's reachability figures over the range. */
import { normaliseIntervals, toRuns } from './intervals.ts';
import type { Span } from './intervals.ts';
import type { ClusterAudit, ClusterHistory, Outage } from './types.ts';

export interface ClusterAuditResult {
  audit: ClusterAudit;
  /** Unreachable periods (sorted, disjoint, unclipped): phases of this cluster count this time apart. */
  unreachable: Span[];
}

/**
 * Outages are runs of unreachable intervals: one begins when the cluster turns unreachable and ends
 * when a reachable interval begins (a gap in the records does not end it). Like failures, an outage
 * counts for the range it began in; one already going at `range.from` is `outageAtStart`.
 */
export function auditCluster(
  cluster: ClusterHistory,
  rangeFrom: number,
  rangeTo: number,
  path: string,
): ClusterAuditResult {
  const intervals = normaliseIntervals(cluster.reachability, rangeTo, `${path}.reachability`);
  let reachableMs = 0;
  let unreachableMs = 0;
  for (const interval of intervals) {
    const length = Math.max(0, Math.min(interval.to, rangeTo) - Math.max(interval.from, rangeFrom));
    if (interval.item.reachable) reachableMs += length;
    else unreachableMs += length;
  }
  const runs = toRuns(intervals, (item) => item.reachable);
  const last = runs[runs.length - 1];
  const toOutage = (run: Span, isLast: boolean): Outage => {
    // The last run ends where the records end; if that is the range end, the outage is still going.
    const ongoing = isLast && run.to >= rangeTo;
    return {
      from: new Date(run.from),
      to: ongoing ? null : new Date(run.to),
      durationMs: Math.max(0, Math.min(run.to, rangeTo) - Math.max(run.from, rangeFrom)),
    };
  };
  const unreachableRuns = runs.filter((run) => !run.key);
  const outages = unreachableRuns.filter((run) => run.from >= rangeFrom).map((run) => toOutage(run, run === last));
  const atStart = unreachableRuns.find((run) => run.from < rangeFrom && run.to > rangeFrom);
  const observedMs = reachableMs + unreachableMs;
  return {
    audit: {
      name: cluster.name,
      observedMs,
      reachableMs,
      unreachableMs,
      unobservedMs: rangeTo - rangeFrom - observedMs,
      reachability: observedMs > 0 ? (100 * reachableMs) / observedMs : null,
      outages,
      longestOutageMs: outages.reduce((longest, outage) => Math.max(longest, outage.durationMs), 0),
      outageAtStart: atStart === undefined ? null : toOutage(atStart, atStart === last),
    },
    unreachable: intervals.filter((interval) => !interval.item.reachable).map(({ from, to }) => ({ from, to })),
  };
}
