/**
 * One worker process of the cluster-footprint benchmark (run with --expose-gc): phaselog's own
 * `startWorkers` holding `kubeconfigs` (possibly none), in poll or watch mode, with no schedulers.
 * Started by bench/cluster-footprint.ts:
 *
 *   node --import tsx --expose-gc bench/cluster-footprint-probe.ts @<file with FootprintProbeOptions>
 *
 * It queues `snapshots` rounds of one snapshot job per cluster and waits for each round; then waits
 * `idleMs` (idle keep-alive sockets close, watch caches settle), collects garbage until the heap
 * stops moving and reports `{ ready, memory, spaces }`. With `heapSnapshotPath` it also writes a
 * V8 heap snapshot there, for attributing what the clusters hold.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import { pino } from 'pino';
import { loadKubeconfigClusters } from '../src/kube/clusters.ts';
import type { ClusterHandle } from '../src/kube/clusters.ts';
import { createDb } from '../src/store/prisma.ts';
import { startWorkers } from '../workers/start-workers.ts';

/** What the coordinator passes to the probe. */
export interface FootprintProbeOptions {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  kubeconfigs: { name: string; yaml: string }[];
  /** Watch mode (live snapshots) when true. */
  live: boolean;
  /** Rounds of one snapshot per cluster. */
  snapshots: number;
  /** Quiet time after the last round, before measuring. */
  idleMs: number;
  heapSnapshotPath?: string;
}

/** What the probe reports. */
export interface FootprintProbeResult {
  ready: true;
  url: string;
  clusters: number;
  failedJobs: number;
  memory: NodeJS.MemoryUsage;
  /** V8 heap spaces' used bytes by space name. */
  spaces: Record<string, number>;
}

const argument = process.argv[2] ?? '{}';
const options = JSON.parse(
  argument.startsWith('@') ? readFileSync(argument.slice(1), 'utf8') : argument,
) as FootprintProbeOptions;
const log = pino({ level: 'error' }, pino.destination(2));
const clusters: ClusterHandle[] = options.kubeconfigs.flatMap(
  ({ name, yaml }) => loadKubeconfigClusters({ yaml, name }).clusters,
);
const db = createDb(options.databaseUrl, { poolSize: 4 });
const running = await startWorkers({
  config: { snapshot: { interval: 60_000, jitter: 0 }, health: undefined, baseDir: process.cwd() },
  db,
  redisUrl: options.redisUrl,
  log,
  clusters,
  queueName: 'snapshots',
  prefix: options.prefix,
  channelPrefix: options.prefix,
  schedule: false,
  concurrency: 4,
  lockedRetryDelayMs: 20,
  ...(options.live ? { live: { debounceMs: 25 } } : {}),
});

let failedJobs = 0;
const waiting = new Map<string, () => void>();
const settleJob = (id: string | undefined): void => {
  const done = id === undefined ? undefined : waiting.get(id);
  if (done === undefined || id === undefined) return;
  waiting.delete(id);
  done();
};
running.worker.on('completed', (job) => settleJob(job.id));
running.worker.on('failed', (job) => {
  if (job?.id !== undefined && waiting.has(job.id)) failedJobs++;
  settleJob(job?.id);
});

async function snapshotRound(tickAt: number): Promise<void> {
  const done: Promise<void>[] = [];
  for (const cluster of clusters) {
    const id = await running.snapshotNow(cluster.name, tickAt);
    done.push(new Promise<void>((resolve) => waiting.set(id, resolve)));
  }
  await Promise.all(done);
}

async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Several rounds: V8 and the C heap hand freed pages back over a few hundred ms.
  for (let i = 0; i < 6; i++) {
    gc?.();
    await sleep(100);
  }
  return process.memoryUsage();
}

let tickAt = Date.now();
for (let round = 0; round < options.snapshots; round++) {
  tickAt += 1_000;
  await snapshotRound(tickAt);
}
await sleep(options.idleMs);
const memory = await settle();
const spaces: Record<string, number> = {};
for (const space of v8.getHeapSpaceStatistics()) spaces[space.space_name] = space.space_used_size;
if (options.heapSnapshotPath !== undefined) v8.writeHeapSnapshot(options.heapSnapshotPath);
const result: FootprintProbeResult = { ready: true, url: '', clusters: clusters.length, failedJobs, memory, spaces };
process.send?.(result);

let closing = false;
const shutdown = (): void => {
  if (closing) return;
  closing = true;
  void running
    .close()
    .then(() => db.$disconnect())
    .finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
