/**
 * Watch mode end to end: the time from a Deployment's status changing in an emulated cluster to the
 * status-change event reaching a Redis subscriber of phaselog's change channel. In between: the
 * worker's watch cache sees the change, the debounced live-snapshot job is queued in BullMQ, a
 * worker snapshots the cluster from its caches, commits to Postgres and publishes. The emulators,
 * the worker and this coordinator run in separate processes; changes are made one at a time.
 *
 *   node --import tsx bench/watch-latency.ts [--phases 40] [--resources-per-phase 50] [--changes 30] [--debounce-ms 200]
 */
import { fileURLToPath } from 'node:url';
import type { ChangeEvent } from '../src/pubsub/change-event.ts';
import { subscribeChanges } from '../src/pubsub/change-publisher.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { namespaceOf, resourceName } from '../test/integration/snapshot/fleet.ts';
import { startReadyChild } from './lib/child-server.ts';
import type { ReadyChild, ServerReadyMessage } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { BENCH_REDIS_URL, benchPrefix, connectRedis, deleteKeysWithPrefix } from './lib/redis-scratch.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { percentile, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { FlipRequest } from './scale-out-clusters.ts';
import type { ScaleOutWorkerOptions } from './scale-out-worker.ts';

/** Options of {@link run}. */
export interface WatchLatencyBenchOptions {
  /** Phases in the watched cluster. @default 40 */
  phases?: number;
  /** Deployments per phase. @default 50 */
  resourcesPerPhase?: number;
  /** Changes made (one at a time); the first 3 are warm-up. @default 30 */
  changes?: number;
  /** Live-snapshot debounce (phaselog's default is 200 ms). @default 200 */
  debounceMs?: number;
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
function waitForEvent(waiters: Set<(e: ChangeEvent, at: number) => boolean>, match: (e: ChangeEvent) => boolean, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const waiter = (e: ChangeEvent, at: number) => {
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

/** Makes `changes` status changes one at a time and returns change -> subscriber latency percentiles. */
export async function run(options: WatchLatencyBenchOptions = {}): Promise<Figures> {
  const shape = { clusters: 1, phases: options.phases ?? 40, resourcesPerPhase: options.resourcesPerPhase ?? 50 };
  const changes = Math.max(WARMUP + 1, options.changes ?? 30);
  const debounceMs = options.debounceMs ?? 200;
  const timeoutMs = options.eventTimeoutMs ?? 20_000;
  const prefix = benchPrefix('queue');
  const db = await createScratchDatabase('watchlat');
  let clusters: ReadyChild<ClustersReady> | undefined;
  let worker: ReadyChild | undefined;
  const waiters = new Set<(e: ChangeEvent, at: number) => boolean>();
  const subscription = await subscribeChanges(
    BENCH_REDIS_URL,
    (event) => {
      const at = performance.timeOrigin + performance.now();
      for (const waiter of waiters) if (waiter(event, at)) waiters.delete(waiter);
    },
    { prefix },
  );
  try {
    await migrateDatabase(db.connectionString);
    clusters = await startReadyChild<ClustersReady>(CLUSTERS_FILE, [JSON.stringify(shape)], 120_000);
    const workerOptions: ScaleOutWorkerOptions = { databaseUrl: db.connectionString, redisUrl: BENCH_REDIS_URL, queueName: 'snapshots', prefix, concurrency: 2, kubeconfigs: clusters.ready.kubeconfigs, live: { debounceMs } };
    worker = await startReadyChild(WORKER_FILE, [JSON.stringify(workerOptions)], 60_000);
    // The first snapshot records every resource as Current; a change before it would not be a change.
    const first = waitForEvent(waiters, (e) => e.scope === 'cluster', 60_000);
    const trigger = 1_000_000;
    await flip(clusters.child, { id: trigger, cluster: 0, phase: 0, resource: 0, to: 'ready' });
    await first;
    const latencies: number[] = [];
    for (let i = 0; i < changes; i++) {
      const phase = (i * 7) % shape.phases;
      const resource = (i * 13 + 1) % shape.resourcesPerPhase;
      const key = `apps/Deployment/${namespaceOf(phase, shape)}/${resourceName(phase, resource)}`;
      for (const to of ['rolling', 'ready'] as const) {
        const wanted = to === 'rolling' ? 'InProgress' : 'Current';
        const arrived = waitForEvent(waiters, (e) => e.scope === 'resource' && e.resourceKey === key && e.toStatus === wanted, timeoutMs);
        const changedAt = await flip(clusters.child, { id: i * 2 + (to === 'rolling' ? 0 : 1), cluster: 0, phase, resource, to });
        const latency = (await arrived) - changedAt;
        if (i >= WARMUP && to === 'rolling') latencies.push(latency);
      }
    }
    const p50 = percentile(latencies, 0.5);
    return {
      'resources in the watched cluster': shape.phases * shape.resourcesPerPhase,
      'debounce ms': debounceMs,
      'changes timed': latencies.length,
      'change -> subscriber p50 ms': round(p50, 1),
      'change -> subscriber p95 ms': round(percentile(latencies, 0.95), 1),
      'change -> subscriber max ms': round(Math.max(...latencies), 1),
      'p50 beyond the debounce ms': round(p50 - debounceMs, 1),
    };
  } finally {
    await subscription.close();
    await worker?.stop(15_000);
    await clusters?.stop();
    const redis = connectRedis();
    await deleteKeysWithPrefix(redis, prefix).catch(() => 0);
    redis.disconnect();
    await db.drop();
  }
}

if (isMain(import.meta.url)) {
  printFigures(
    'watch mode: change in a cluster -> event at a subscriber',
    await run({ phases: readNumberFlag('phases'), resourcesPerPhase: readNumberFlag('resources-per-phase'), changes: readNumberFlag('changes'), debounceMs: readNumberFlag('debounce-ms') }),
  );
}
