/** Worker series read when scraped: the snapshot queue's jobs by state, and the watches' counts. */
import type { Queue } from 'bullmq';
import type { LiveSnapshots, WatchCounts } from '../snapshot/live.ts';
import type { Metrics } from './registry.ts';

/** Registers the queue depth and watch counters of a worker process. */
export function registerWorkerMetrics(metrics: Metrics, queue: Pick<Queue, 'name' | 'getJobCounts'>, live: Pick<LiveSnapshots, 'counts'> | undefined): void {
  metrics.collect('phaselog_queue_jobs', 'Jobs in the snapshot queue by state (waiting, active, delayed, failed), as BullMQ counts them.', 'gauge', async () => {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
    return Object.entries(counts).map(([state, value]) => ({ labels: { queue: queue.name, state }, value }));
  });
  const watchCounts = (pick: (c: WatchCounts) => number) => () => (live?.counts() ?? []).map((c) => ({ labels: { cluster: c.cluster }, value: pick(c) }));
  metrics.collect('phaselog_watch_events_total', 'Watch events received from each cluster (added, modified, deleted).', 'counter', watchCounts((c) => c.events));
  metrics.collect('phaselog_watch_relists_total', 'Times a watch cache listed a kind again (its watch expired or broke), by cluster.', 'counter', watchCounts((c) => c.relists));
}
