/** Worker series read when scraped: the snapshot queue's jobs by state, and the watches' counts. */
import type { Queue } from 'bullmq';
import type { LiveSnapshots, WatchCounts } from '../snapshot/live.ts';
import type { Metrics } from './registry.ts';

/** This worker's share of the clusters: its own queue and how many clusters it owns. */
export interface OwnedShare {
  queue: Pick<Queue, 'getJobCounts'>;
  owned(): number;
}

/** Registers the queue depth, owned clusters and watch counters of a worker process. */
export function registerWorkerMetrics(
  metrics: Metrics,
  queue: Pick<Queue, 'name' | 'getJobCounts'>,
  live: Pick<LiveSnapshots, 'counts'> | undefined,
  share?: OwnedShare,
): void {
  metrics.collect(
    'phaselog_queue_jobs',
    "Jobs in the snapshot queue by state (waiting, active, delayed, failed), as BullMQ counts them; queue <name>.owner is this worker's own queue (the snapshots of the clusters it owns).",
    'gauge',
    async () => {
      const states = ['waiting', 'active', 'delayed', 'failed'] as const;
      const [shared, own] = await Promise.all([queue.getJobCounts(...states), share?.queue.getJobCounts(...states)]);
      return [
        ...Object.entries(shared).map(([state, value]) => ({ labels: { queue: queue.name, state }, value })),
        ...Object.entries(own ?? {}).map(([state, value]) => ({
          labels: { queue: `${queue.name}.owner`, state },
          value,
        })),
      ];
    },
  );
  if (share !== undefined)
    metrics.collect(
      'phaselog_worker_owned_clusters',
      'Clusters this worker owns now: it alone watches and snapshots them.',
      'gauge',
      () => [{ labels: {}, value: share.owned() }],
    );
  const watchCounts = (pick: (c: WatchCounts) => number) => () =>
    (live?.counts() ?? []).map((c) => ({ labels: { cluster: c.cluster }, value: pick(c) }));
  metrics.collect(
    'phaselog_watch_events_total',
    'Watch events received from each cluster (added, modified, deleted).',
    'counter',
    watchCounts((c) => c.events),
  );
  metrics.collect(
    'phaselog_watch_relists_total',
    'Times a watch cache listed a kind again (its watch expired or broke), by cluster.',
    'counter',
    watchCounts((c) => c.relists),
  );
}
