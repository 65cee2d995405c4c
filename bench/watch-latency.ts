/**
 * Change -> event latency: the time from a Deployment's status changing in an emulated cluster to
 * the status-change event reaching a Redis subscriber of phaselog's change channel.
 *
 * - Watch mode: the worker's watch cache sees the change, the debounced live-snapshot job is queued
 *   in BullMQ, a worker snapshots the cluster from its caches, commits to Postgres and publishes.
 * - Poll mode (watch off): the change waits for the next scheduled tick (`--poll-interval-ms`),
 *   which lists the cluster, commits and publishes; expect about half the interval plus a tick.
 *
 * The emulators, the worker and this coordinator run in separate processes; changes are made one
 * at a time. Also printed: the snapshot job time in watch mode (from BullMQ's job records), and the
 * observe step of a tick (no database) over `--tick-resources` Deployments, by LIST and from watch
 * caches, read by this process from an emulator process of its own.
 *
 *   node --import tsx bench/watch-latency.ts [--phases 40] [--resources-per-phase 50] [--changes 200]
 *     [--debounce-ms 25] [--poll-changes 20] [--poll-interval-ms 2000] [--tick-resources 20000]
 */
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { createClusterClient } from '../src/kube/cluster-client.ts';
import { loadKubeconfigClusters } from '../src/kube/clusters.ts';
import { INVENTORY_WATCHES } from '../src/kube/discover-phases.ts';
import { createWatchSet } from '../src/kube/watch-set.ts';
import { observeCluster } from '../src/snapshot/observe.ts';
import { ObservationMemos } from '../src/snapshot/memos.ts';
import type { StatusChange } from '../src/history/types.ts';
import { subscribeChanges } from '../src/pubsub/change-publisher.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { namespaceOf, resourceName } from '../test/integration/snapshot/fleet.ts';
import { startReadyChild } from './lib/child-server.ts';
import type { ReadyChild, ServerReadyMessage } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { BENCH_REDIS_URL, benchPrefix, connectRedis, deleteKeysWithPrefix } from './lib/redis-scratch.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, percentile, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { FlipRequest } from './scale-out-clusters.ts';
import type { ScaleOutWorkerOptions } from './scale-out-worker.ts';

/** Options of {@link run}. */
export interface WatchLatencyBenchOptions {
  /** Phases in the watched cluster. @default 40 */
  phases?: number;
  /** Deployments per phase. @default 50 */
  resourcesPerPhase?: number;
  /** Changes made in watch mode (one at a time); the first 3 are warm-up. @default 200 */
  changes?: number;
  /** Live-snapshot debounce (phaselog's default is 25 ms). @default 25 */
  debounceMs?: number;
  /** Changes made in poll mode; 0 skips poll mode. @default 20 */
  pollChanges?: number;
  /** Scheduled tick interval in poll mode (phaselog's default is 30 s). @default 2000 */
  pollIntervalMs?: number;
  /** Deployments of the in-process watch-mode tick measurement; 0 skips it. @default 20000 */
  tickResources?: number;
  /** Give up on one change's event after this long. @default 20000 */
  eventTimeoutMs?: number;
}

interface ClustersReady extends ServerReadyMessage {
  kubeconfigs: { name: string; yaml: string }[];
}

const CLUSTERS_FILE = fileURLToPath(new URL('./scale-out-clusters.ts', import.meta.url));
const WORKER_FILE = fileURLToPath(new URL('./scale-out-worker.ts', import.meta.url));
const WARMUP = 3;

function flip(child: ReadyChild['child'], request: FlipRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`flip ${request.id} not acknowledged`)), 10_000);
    const onMessage = (m: unknown) => {
      const answer = m as { flipped?: number; at?: number };
      if (answer.flipped !== request.id || answer.at === undefined) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(answer.at);
    };
    child.on('message', onMessage);
    child.send({ flip: request });
  });
}

/** Waits for the first event `match` accepts, recording when it arrived. */
function waitForEvent(
  waiters: Set<(e: StatusChange, at: number) => boolean>,
  match: (e: StatusChange) => boolean,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const waiter = (e: StatusChange, at: number) => {
      if (!match(e)) return false;
      clearTimeout(timer);
      resolve(at);
      return true;
    };
    const timer = setTimeout(() => {
      waiters.delete(waiter);
      reject(new Error(`no matching change event within ${timeoutMs} ms`));
    }, timeoutMs);
    waiters.add(waiter);
  });
}

interface ModeOptions {
  shape: { clusters: number; phases: number; resourcesPerPhase: number };
  clusters: ReadyChild<ClustersReady>;
  prefix: string;
  changes: number;
  timeoutMs: number;
  firstFlipId: number;
  worker: Pick<ScaleOutWorkerOptions, 'live' | 'schedule'>;
}

/** Starts a worker on a fresh database, waits for its first snapshot, then times `changes` changes. */
async function measureMode(options: ModeOptions): Promise<{ latencies: number[]; jobMs: number[] }> {
  const { shape, clusters, prefix, timeoutMs } = options;
  const waiters = new Set<(e: StatusChange, at: number) => boolean>();
  const subscription = await subscribeChanges(
    BENCH_REDIS_URL,
    (event) => {
      const at = performance.timeOrigin + performance.now();
      for (const waiter of waiters) if (waiter(event, at)) waiters.delete(waiter);
    },
    { prefix },
  );
  const db = await createScratchDatabase('watchlat');
  let worker: ReadyChild | undefined;
  const queue = new Queue('snapshots', { connection: { url: BENCH_REDIS_URL }, prefix });
  try {
    await migrateDatabase(db.connectionString);
    const workerOptions: ScaleOutWorkerOptions = {
      databaseUrl: db.connectionString,
      redisUrl: BENCH_REDIS_URL,
      queueName: 'snapshots',
      prefix,
      concurrency: 2,
      kubeconfigs: clusters.ready.kubeconfigs,
      ...options.worker,
    };
    // The first snapshot records every resource as Current; a change before it would not be a change.
    const first = waitForEvent(waiters, (e) => e.scope === 'cluster', 60_000);
    worker = await startReadyChild(WORKER_FILE, [JSON.stringify(workerOptions)], 60_000);
    await flip(clusters.child, { id: options.firstFlipId, cluster: 0, phase: 0, resource: 0, to: 'ready' });
    await first;
    const latencies: number[] = [];
    for (let i = 0; i < options.changes; i++) {
      const phase = (i * 7) % shape.phases;
      const resource = (i * 13 + 1) % shape.resourcesPerPhase;
      const key = `apps/Deployment/${namespaceOf(phase, shape)}/${resourceName(phase, resource)}`;
      for (const to of ['rolling', 'ready'] as const) {
        const wanted = to === 'rolling' ? 'InProgress' : 'Current';
        const arrived = waitForEvent(
          waiters,
          (e) => e.scope === 'resource' && e.resourceKey === key && e.toStatus === wanted,
          timeoutMs,
        );
        const changedAt = await flip(clusters.child, {
          id: options.firstFlipId + 1 + i * 2 + (to === 'rolling' ? 0 : 1),
          cluster: 0,
          phase,
          resource,
          to,
        });
        const latency = (await arrived) - changedAt;
        if (i >= WARMUP && to === 'rolling') latencies.push(latency);
      }
    }
    const jobs = await queue.getCompleted(0, 10_000);
    const jobMs = jobs.flatMap((job) =>
      job.finishedOn !== undefined && job.processedOn !== undefined ? [job.finishedOn - job.processedOn] : [],
    );
    return { latencies, jobMs };
  } finally {
    await subscription.close();
    await queue.close();
    await worker?.stop(15_000);
    await db.drop();
  }
}

/**
 * The observe step of a tick over `resources` Deployments (50 per phase) in an emulator process of
 * its own: median of 5 by LIST (poll mode), then median of 5 from synced watch caches.
 */
async function measureTick(resources: number): Promise<{ observeMs: number; listMs: number }> {
  const shape = { clusters: 1, phases: Math.max(1, Math.round(resources / 50)), resourcesPerPhase: 50 };
  const clusters = await startReadyChild<ClustersReady>(CLUSTERS_FILE, [JSON.stringify(shape)], 180_000);
  const handle = loadKubeconfigClusters({ yaml: clusters.ready.kubeconfigs[0]?.yaml ?? '', name: 'tick' }).clusters[0];
  if (handle === undefined) throw new Error('kubeconfig did not load');
  const client = createClusterClient(handle, { transport: { timeoutMs: 120_000 } });
  const memos = new ObservationMemos();
  const timeTicks = async (): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await observeCluster(client, { memos });
      times.push(performance.now() - started);
    }
    return median(times);
  };
  try {
    const listMs = await timeTicks();
    const set = createWatchSet(client, [...INVENTORY_WATCHES, { group: 'apps', kind: 'Deployment' }]);
    await set.start();
    const observeMs = await timeTicks();
    set.stop();
    return { observeMs, listMs };
  } finally {
    client.close();
    await clusters.stop();
  }
}

/** Makes status changes one at a time in watch mode, then in poll mode, and returns change -> subscriber latency percentiles. */
export async function run(options: WatchLatencyBenchOptions = {}): Promise<Figures> {
  const shape = { clusters: 1, phases: options.phases ?? 40, resourcesPerPhase: options.resourcesPerPhase ?? 50 };
  const changes = Math.max(WARMUP + 1, options.changes ?? 200);
  const pollChanges = options.pollChanges ?? 20;
  const debounceMs = options.debounceMs ?? 25;
  const pollIntervalMs = options.pollIntervalMs ?? 2000;
  const timeoutMs = options.eventTimeoutMs ?? 20_000;
  const prefix = benchPrefix('queue');
  let clusters: ReadyChild<ClustersReady> | undefined;
  try {
    clusters = await startReadyChild<ClustersReady>(CLUSTERS_FILE, [JSON.stringify(shape)], 120_000);
    const common = { shape, clusters, timeoutMs };
    const watch = await measureMode({
      ...common,
      prefix: `${prefix}:watch`,
      changes,
      firstFlipId: 1_000_000,
      worker: { live: { debounceMs } },
    });
    const poll =
      pollChanges > 0
        ? await measureMode({
            ...common,
            prefix: `${prefix}:poll`,
            changes: Math.max(WARMUP + 1, pollChanges),
            firstFlipId: 2_000_000,
            timeoutMs: timeoutMs + pollIntervalMs,
            worker: { schedule: { intervalMs: pollIntervalMs } },
          })
        : undefined;
    const tick = (options.tickResources ?? 20_000) > 0 ? await measureTick(options.tickResources ?? 20_000) : undefined;
    const p50 = percentile(watch.latencies, 0.5);
    const figures: Figures = {
      'resources in the watched cluster': shape.phases * shape.resourcesPerPhase,
      'debounce ms': debounceMs,
      'changes timed': watch.latencies.length,
      'change -> subscriber p50 ms': round(p50, 1),
      'change -> subscriber p95 ms': round(percentile(watch.latencies, 0.95), 1),
      'change -> subscriber p99 ms': round(percentile(watch.latencies, 0.99), 1),
      'change -> subscriber max ms': round(Math.max(...watch.latencies), 1),
      'p50 beyond the debounce ms': round(p50 - debounceMs, 1),
      'snapshot job ms p50 (watch mode)': round(percentile(watch.jobMs, 0.5), 1),
      'snapshot job ms p95 (watch mode)': round(percentile(watch.jobMs, 0.95), 1),
    };
    if (poll !== undefined) {
      figures['poll mode: tick interval ms'] = pollIntervalMs;
      figures['poll mode: changes timed'] = poll.latencies.length;
      figures['poll mode: change -> subscriber p50 ms'] = round(percentile(poll.latencies, 0.5), 1);
      figures['poll mode: change -> subscriber p95 ms'] = round(percentile(poll.latencies, 0.95), 1);
      figures['poll mode: change -> subscriber max ms'] = round(Math.max(...poll.latencies), 1);
      figures['poll mode: snapshot job ms p50'] = round(percentile(poll.jobMs, 0.5), 1);
    }
    if (tick !== undefined) {
      figures['watch-mode tick: resources'] = options.tickResources ?? 20_000;
      figures['watch-mode tick: observe from caches ms (median of 5)'] = round(tick.observeMs, 1);
      figures['same observe by LIST ms (median of 5)'] = round(tick.listMs, 1);
    }
    return figures;
  } finally {
    await clusters?.stop();
    const redis = connectRedis();
    await deleteKeysWithPrefix(redis, prefix).catch(() => 0);
    redis.disconnect();
  }
}

if (isMain(import.meta.url)) {
  printFigures(
    'change in a cluster -> event at a subscriber (watch mode, poll mode)',
    await run({
      phases: readNumberFlag('phases'),
      resourcesPerPhase: readNumberFlag('resources-per-phase'),
      changes: readNumberFlag('changes'),
      debounceMs: readNumberFlag('debounce-ms'),
      pollChanges: readNumberFlag('poll-changes'),
      pollIntervalMs: readNumberFlag('poll-interval-ms'),
      tickResources: readNumberFlag('tick-resources'),
    }),
  );
}
