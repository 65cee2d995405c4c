/**
 * One snapshot worker process of the scale-out and watch-latency benchmarks: phaselog's own
 * `startWorkers` (the worker role's composition root) on a benchmark queue, with no schedulers (the
 * coordinator enqueues ticks), and optionally in watch mode.
 * Started by bench/scale-out.ts:
 *
 *   node --import tsx bench/scale-out-worker.ts '<ScaleOutWorkerOptions as JSON>'
 *
 * Sends `{ ready }` once the BullMQ worker runs; answers `{ rss }` to `{ report: true }` with its
 * resident set size and failed-job count; closes everything on SIGTERM or when the parent goes away.
 */
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { loadKubeconfigClusters } from '../src/kube/clusters.ts';
import type { ClusterHandle } from '../src/kube/clusters.ts';
import { createDb } from '../src/store/prisma.ts';
import { startWorkers } from '../workers/start-workers.ts';

/** What the coordinator passes to each worker process. */
export interface ScaleOutWorkerOptions {
  databaseUrl: string;
  redisUrl: string;
  queueName: string;
  prefix: string;
  concurrency: number;
  kubeconfigs: { name: string; yaml: string }[];
  /** Watch mode (live snapshots) with this debounce; off when omitted. */
  live?: { debounceMs: number };
  /** Scheduled ticks every `intervalMs` (poll mode); the coordinator enqueues ticks when omitted. */
  schedule?: { intervalMs: number };
}

// `@file`: the options in a file (hundreds of kubeconfigs do not fit in an argument).
const argument = process.argv[2] ?? '{}';
const options = JSON.parse(argument.startsWith('@') ? readFileSync(argument.slice(1), 'utf8') : argument) as ScaleOutWorkerOptions;
const log = pino({ level: 'error' }, pino.destination(2));
const clusters: ClusterHandle[] = options.kubeconfigs.flatMap(({ name, yaml }) => loadKubeconfigClusters({ yaml, name }).clusters);
const db = createDb(options.databaseUrl, { poolSize: Math.max(2, options.concurrency) });
const running = await startWorkers({
  config: { snapshot: { interval: options.schedule?.intervalMs ?? 60_000, jitter: 0 }, health: undefined, baseDir: process.cwd() },
  db,
  redisUrl: options.redisUrl,
  log,
  clusters,
  queueName: options.queueName,
  prefix: options.prefix,
  channelPrefix: options.prefix,
  schedule: options.schedule !== undefined,
  concurrency: options.concurrency,
  lockedRetryDelayMs: 20,
  ...(options.live !== undefined ? { live: options.live } : {}),
});
let failed = 0;
running.worker.on('failed', () => failed++);
let closing = false;
const shutdown = () => {
  if (closing) return;
  closing = true;
  void running
    .close()
    .then(() => db.$disconnect())
    .finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
process.on('message', (message: unknown) => {
  if ((message as { report?: unknown }).report === true) process.send?.({ rss: process.memoryUsage().rss, failed });
});
process.send?.({ ready: true, url: '' });
