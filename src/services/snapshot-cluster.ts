/**
 * The one snapshot use case, bound to a schedule, a watch event or a "refresh now": observe a
 * cluster, record the observation in one transaction, then publish the committed changes.
 */
import type { Logger } from 'pino';
import type { ChangePublisher } from '../pubsub/change-publisher.ts';
import type { ClusterClient } from '../kube/cluster-client.ts';
import type { HistoryStore } from '../store/history-store.ts';
import type { ChangedObjects } from '../inventory/affected-phases.ts';
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
  /** false when a snapshot for this or a later tick was already written, or a live change affected no phase. */
  written: boolean;
  /** Why nothing was written, when `written` is false. */
  skipped?: 'STALE_TICK' | 'NOTHING_AFFECTED';
  /** Phases observed; a live snapshot observes only the phases its changes affect. */
  phases?: number;
  /** Only some phases were observed (a live snapshot). */
  partial?: boolean;
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
export async function snapshotCluster(deps: SnapshotDeps, cluster: ClusterClient, tickAt: Date, options: SnapshotClusterOptions = {}): Promise<SnapshotOutcome> {
  const log = deps.log.child({ cluster: cluster.name, tickAt: tickAt.toISOString() });
  const observation = await observeCluster(cluster, options.changed === undefined ? deps.observe : { ...deps.observe, changed: options.changed });
  const base = { cluster: cluster.name, tickAt: tickAt.toISOString() };
  const observed = observation.outcome === 'ok' ? { phases: observation.phases.length, partial: observation.partial === true } : {};
  if (observation.outcome === 'unreachable') log.warn({ error: observation.error }, 'cluster unreachable; phases keep their last statuses, marked stale');
  if (observation.outcome === 'ok' && observation.partial && observation.phases.length === 0) {
    log.debug('live snapshot skipped: the changes affect no phase');
    return { ...base, written: false, skipped: 'NOTHING_AFFECTED', ...observed, changes: 0, rows: 0, published: false };
  }
  const result = await deps.history.recordSnapshot(observation, { tickAt });
  if (!result.written) {
    log.debug({ lastTickAt: result.lastTickAt.toISOString() }, 'snapshot skipped: this tick is already recorded');
    return { ...base, written: false, skipped: 'STALE_TICK', ...observed, changes: 0, rows: 0, published: false };
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
  return { ...base, written: true, outcome: result.outcome, ...observed, changes: result.changes.length, rows: result.rows, published };
}
