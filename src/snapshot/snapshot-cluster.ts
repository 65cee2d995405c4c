/**
 * The one snapshot use case, bound to a schedule, a watch event or a "refresh now", in one
 * direction: observe a cluster, record the observation in one transaction, release the watch
 * caches' copies of what the store now holds, publish the committed changes. Nothing here runs
 * inside the transaction but the recording itself; the cluster is read only before it.
 */
import type { Logger } from 'pino';
import type { ChangePublisher } from '../pubsub/change-publisher.ts';
import type { ClusterClient } from '../kube/cluster-client.ts';
import type { ChangedObjects } from '../inventory/affected-phases.ts';
import type { ClusterObservation, StatusChange } from '../history/types.ts';
import type { FalseCondition } from '../history/condition-changes.ts';
import { RevisionsMissingError } from '../store/snapshot-store.ts';
import { observeWithSources, type ObservedCluster, type ObserveClusterOptions } from './observe.ts';
import type { RecordSnapshotResult, Recorder } from './record.ts';
import { readRevisionBodies, releaseStoredBodies } from './revision-bodies.ts';

/** What {@link snapshotCluster} needs. */
export interface SnapshotDeps {
  recorder: Recorder;
  publisher: ChangePublisher;
  log: Logger;
  /** How clusters are observed; a worker passes its `memos` here so they last across ticks. */
  observe?: ObserveClusterOptions;
  /**
   * Runs after a snapshot committed, before the watch caches release what it stored (cel checks
   * read those objects); resolves with the changes it wrote, published with the snapshot's. A
   * failure is logged and never fails the snapshot.
   */
  afterRecord?: (observation: ClusterObservation) => Promise<StatusChange[]>;
  /**
   * The False conditions of checks with `affectsStatus` on a cluster's phases, read before observing
   * (from the database, never inside the transaction); each makes its phase Failed.
   */
  falseConditions?: (cluster: string) => Promise<ReadonlyMap<string, readonly FalseCondition[]>>;
}

/** What one snapshot did, for job results and logs. */
export interface SnapshotOutcome {
  cluster: string;
  tickAt: string;
  /** false when a snapshot for this or a later tick was already written, or a live change affected no phase. */
  written: boolean;
  /** Why nothing was written, when `written` is false. */
  skipped?: 'STALE_TICK' | 'NOTHING_AFFECTED' | 'NOT_OWNER';
  /** Phases observed; a live snapshot observes only the phases its changes affect. */
  phases?: number;
  /** Only some phases were observed (a live snapshot). */
  live?: boolean;
  outcome?: 'ok' | 'unreachable';
  changes: number;
  rows: number;
  /** Whether change events reached Redis (the change log holds them either way). */
  published: boolean;
}

/** Options of {@link snapshotCluster}. */
export interface SnapshotClusterOptions {
  /** What changed (a live snapshot): only the phases these changes affect are observed and recorded. */
  changed?: ChangedObjects;
}

/** Observes `cluster`, records it for `tickAt`, publishes the changes. Throws only when the store fails. */
export async function snapshotCluster(
  deps: SnapshotDeps,
  cluster: ClusterClient,
  tickAt: Date,
  options: SnapshotClusterOptions = {},
): Promise<SnapshotOutcome> {
  const log = deps.log.child({ cluster: cluster.name, tickAt: tickAt.toISOString() });
  const falseConditions = await deps.falseConditions?.(cluster.name);
  const observe = {
    ...deps.observe,
    ...(options.changed !== undefined ? { changed: options.changed } : {}),
    ...(falseConditions !== undefined ? { falseConditions } : {}),
  };
  const observed = await observeWithSources(cluster, observe);
  const { observation } = observed;
  const base = { cluster: cluster.name, tickAt: tickAt.toISOString() };
  const seen =
    observation.outcome === 'ok' ? { phases: observation.phases.length, live: observation.live === true } : {};
  if (observation.outcome === 'unreachable')
    log.warn({ error: observation.error }, 'cluster unreachable; phases keep their last statuses, marked stale');
  if (observation.outcome === 'ok' && observation.live && observation.phases.length === 0) {
    log.debug('live snapshot skipped: the changes affect no phase');
    return { ...base, written: false, skipped: 'NOTHING_AFFECTED', ...seen, changes: 0, rows: 0, published: false };
  }
  const result = await record(deps, cluster, observed, tickAt);
  if (!result.written) {
    log.debug({ lastTickAt: result.lastTickAt.toISOString() }, 'snapshot skipped: this tick is already recorded');
    return { ...base, written: false, skipped: 'STALE_TICK', ...seen, changes: 0, rows: 0, published: false };
  }
  const after =
    deps.afterRecord === undefined
      ? []
      : await deps.afterRecord(observation).catch((error: unknown) => {
          log.error({ err: error }, 'checks after the snapshot failed; their conditions keep their last status');
          return [] as StatusChange[];
        });
  releaseStoredBodies(observed);
  let published = true;
  try {
    await deps.publisher.publish([...result.changes, ...after]);
  } catch (error) {
    // The changes are committed; subscribers catch up from the change log by seq.
    published = false;
    log.error({ err: error, changes: result.changes.length }, 'publishing status changes failed');
  }
  if (result.changes.length > 0)
    log.info({ changes: result.changes.length, rows: result.rows }, 'snapshot recorded changes');
  return {
    ...base,
    written: true,
    outcome: result.outcome,
    ...seen,
    changes: result.changes.length,
    rows: result.rows,
    published,
  };
}

/**
 * Records the observation; when the store lacks revisions the observation holds only by hash, reads
 * them from the cluster (no transaction is open then) and records once more with them.
 */
async function record(
  deps: SnapshotDeps,
  cluster: ClusterClient,
  observed: ObservedCluster,
  tickAt: Date,
): Promise<RecordSnapshotResult> {
  try {
    return await deps.recorder.record(observed.observation, { tickAt });
  } catch (error) {
    if (!(error instanceof RevisionsMissingError)) throw error;
    deps.log.info(
      { cluster: cluster.name, revisions: error.hashes.length },
      'the store lacks revisions the watch caches no longer hold; reading them from the cluster',
    );
    const revisionBodies = await readRevisionBodies(cluster, observed, error.hashes, {
      ...(deps.observe?.read ? { read: deps.observe.read } : {}),
      ...(deps.observe?.redaction ? { redaction: deps.observe.redaction } : {}),
    });
    return deps.recorder.record(observed.observation, { tickAt, revisionBodies });
  }
}
