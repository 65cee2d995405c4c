/**
 * The one snapshot use case, bound to a schedule, a watch event or a "refresh now": observe a
 * cluster, record the observation in one transaction, then publish the committed changes.
 */
import type { Logger } from 'pino';
import type { ChangePublisher } from '../pubsub/change-publisher.ts';
import type { ClusterClient } from '../kube/cluster-client.ts';
import type { HistoryStore } from '../store/history-store.ts';
import { observeCluster, type ObserveClusterOptions } from './observe-cluster.ts';

/** What {@link snapshotCluster} needs. */
export interface SnapshotDeps {
  history: HistoryStore;
  publisher: ChangePublisher;
  log: Logger;
  observe?: ObserveClusterOptions;
}

/** What one snapshot did, for job results and logs. */
export interface SnapshotOutcome {
  cluster: string;
  tickAt: string;
  /** false when a snapshot for this or a later tick was already written. */
  written: boolean;
  outcome?: 'ok' | 'unreachable';
  changes: number;
  rows: number;
  /** Whether change events reached Redis (the change log holds them either way). */
  published: boolean;
}

/** Observes `cluster`, records it for `tickAt`, publishes the changes. Throws only when the store fails. */
export async function snapshotCluster(deps: SnapshotDeps, cluster: ClusterClient, tickAt: Date): Promise<SnapshotOutcome> {
  const log = deps.log.child({ cluster: cluster.name, tickAt: tickAt.toISOString() });
  const observation = await observeCluster(cluster, deps.observe);
  if (observation.outcome === 'unreachable') log.warn({ error: observation.error }, 'cluster unreachable; phases keep their last statuses, marked stale');
  const result = await deps.history.recordSnapshot(observation, { tickAt });
  if (!result.written) {
    log.debug({ lastTickAt: result.lastTickAt.toISOString() }, 'snapshot skipped: this tick is already recorded');
    return { cluster: cluster.name, tickAt: tickAt.toISOString(), written: false, changes: 0, rows: 0, published: false };
  }
  let published = true;
  try {
    await deps.publisher.publish(result.changes);
  } catch (error) {
    // The changes are committed; subscribers catch up from the change log by seq.
    published = false;
    log.error({ err: error, changes: result.changes.length }, 'publishing status changes failed');
  }
  if (result.changes.length > 0) log.info({ changes: result.changes.length, rows: result.rows }, 'snapshot recorded changes');
  return { cluster: cluster.name, tickAt: tickAt.toISOString(), written: true, outcome: result.outcome, changes: result.changes.length, rows: result.rows, published };
}
