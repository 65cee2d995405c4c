/**
 * Episodes away from Current, found on runs of equal status: incidents (any departure from Current,
 * a rollout included) and restores (from entering Failed to the next Current run). Both end at the
 * next Current run and are summarised the same way; they differ only in what opens one.
 */
import { severityOf } from '../status/severity.ts';
import type { ResourceStatus } from '../status/types.ts';
import type { Normalised, Run } from './intervals.ts';
import type { Incident, RecoveryStats, Restore, RestoreStats, StatusCause, StatusInterval } from './types.ts';

/** The range, in epoch ms. */
export interface EpisodeRange {
  rangeFrom: number;
  rangeTo: number;
}

interface Episode {
  from: number;
  /** Start of the next Current run; `null` when none followed. */
  to: number | null;
  reachedFailed: boolean;
}

/** What the summary of one kind of episode gives: the ones begun in the range and their figures. */
interface EpisodeSummary {
  inRange: Episode[];
  recovered: number;
  meanMs: number | null;
  longestMs: number | null;
  atStart: Episode | null;
  open: Episode | null;
}

/** Opens an episode at `run` (none is open), given the status of the run before it. */
type Opens = (run: Run<ResourceStatus>, previous: ResourceStatus | null) => boolean;

function findEpisodes(runs: readonly Run<ResourceStatus>[], opens: Opens): Episode[] {
  const episodes: Episode[] = [];
  let open: Episode | null = null;
  let previous: ResourceStatus | null = null;
  for (const run of runs) {
    if (run.key === 'Current') {
      if (open !== null) open.to = run.from;
      open = null;
    } else {
      if (open === null && opens(run, previous)) {
        open = { from: run.from, to: null, reachedFailed: false };
        episodes.push(open);
      }
      if (open !== null && run.key === 'Failed') open.reachedFailed = true;
    }
    previous = run.key;
  }
  return episodes;
}

/**
 * Episodes that began in the range are counted and, once over, averaged; one already going at
 * `range.from` is reported apart and not averaged, as its start lies outside the period audited.
 */
function summarise(all: readonly Episode[], range: EpisodeRange): EpisodeSummary {
  const inRange = all.filter((episode) => episode.from >= range.rangeFrom && episode.from < range.rangeTo);
  const durations = inRange.flatMap((episode) => (episode.to === null ? [] : [episode.to - episode.from]));
  return {
    inRange,
    recovered: durations.length,
    meanMs: durations.length > 0 ? durations.reduce((sum, ms) => sum + ms, 0) / durations.length : null,
    longestMs: durations.length > 0 ? Math.max(...durations) : null,
    atStart:
      all.find((episode) => episode.from < range.rangeFrom && (episode.to === null || episode.to > range.rangeFrom)) ??
      null,
    open: all.find((episode) => episode.to === null && episode.from < range.rangeTo) ?? null,
  };
}

/**
 * The cause of the worst status in [from, to): among the intervals there that are not Current, the
 * most important status first (Failed, Terminating, NotFound, Unknown, InProgress), the earliest
 * of equals, skipping intervals whose cause was not recorded.
 */
export function worstCause(
  intervals: readonly Normalised<StatusInterval>[],
  from: number,
  to: number,
): StatusCause | null {
  let best: { priority: number; cause: StatusCause } | null = null;
  for (const interval of intervals) {
    if (interval.to <= from || interval.from >= to) continue;
    const { status, cause } = interval.item;
    if (status === 'Current' || cause === undefined || cause === null) continue;
    if (best === null || severityOf(status) < best.priority) best = { priority: severityOf(status), cause };
  }
  return best === null ? null : { ...best.cause };
}

/** Incidents: a departure from Current (a phase never yet Current has nothing to recover to). */
export function measureRecovery(
  runs: readonly Run<ResourceStatus>[],
  intervals: readonly Normalised<StatusInterval>[],
  range: EpisodeRange,
): RecoveryStats {
  const summary = summarise(
    findEpisodes(runs, (_run, previous) => previous === 'Current'),
    range,
  );
  const incidents: Incident[] = summary.inRange.map((episode) => ({
    from: new Date(episode.from),
    to: episode.to === null ? null : new Date(episode.to),
    durationMs: (episode.to ?? range.rangeTo) - episode.from,
    reachedFailed: episode.reachedFailed,
    cause: worstCause(intervals, episode.from, episode.to ?? range.rangeTo),
  }));
  return {
    incidents,
    recovered: summary.recovered,
    meanTimeOutOfCurrentMs: summary.meanMs,
    longestTimeOutOfCurrentMs: summary.longestMs,
    meanTimeToRecoverMs: summary.meanMs,
    longestTimeToRecoverMs: summary.longestMs,
    incidentAtStart:
      summary.atStart === null
        ? null
        : { since: new Date(summary.atStart.from), recoveredAt: dateOrNull(summary.atStart.to) },
    openIncident:
      summary.open === null
        ? null
        : { since: new Date(summary.open.from), ongoingMs: range.rangeTo - summary.open.from },
  };
}

/** Restores: from entering Failed (whatever came before, a first record included) to the next Current run. */
export function measureRestore(
  runs: readonly Run<ResourceStatus>[],
  intervals: readonly Normalised<StatusInterval>[],
  range: EpisodeRange,
): RestoreStats {
  const summary = summarise(
    findEpisodes(runs, (run) => run.key === 'Failed'),
    range,
  );
  const restores: Restore[] = summary.inRange.map((episode) => ({
    failedAt: new Date(episode.from),
    restoredAt: dateOrNull(episode.to),
    durationMs: (episode.to ?? range.rangeTo) - episode.from,
    cause: worstCause(intervals, episode.from, episode.to ?? range.rangeTo),
  }));
  return {
    restores,
    restored: summary.recovered,
    meanTimeToRestoreMs: summary.meanMs,
    longestTimeToRestoreMs: summary.longestMs,
    restoreAtStart:
      summary.atStart === null
        ? null
        : { failedAt: new Date(summary.atStart.from), restoredAt: dateOrNull(summary.atStart.to) },
    notRestored:
      summary.open === null
        ? null
        : { failedAt: new Date(summary.open.from), ongoingMs: range.rangeTo - summary.open.from },
  };
}

function dateOrNull(at: number | null): Date | null {
  return at === null ? null : new Date(at);
}
