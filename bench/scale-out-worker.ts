/**
 * One snapshot worker process of the scale-out and watch-latency benchmarks: phaselog's own
 * `startWorkers` (the worker role's composition root) on a benchmark queue, with no schedulers (the
 * coordinator enqueues ticks), and optionally in watch mode.
 * Started by bench/scale-out.ts:
 *
 *   node --import tsx bench/scale-out-worker.ts '<ScaleOutWorkerOptions as JSON>'
 *
 * Sends `{ ready, instance }` once the BullMQ worker runs (`instance` names it in the cluster
 * ownership and in its requests' User-Agent); answers `{ rss }` to `{ report: true }` with its
 * resident set size, heap in use (after a full collection when started with --expose-gc), failed
 * jobs and the clusters it owns, and then writes a heap snapshot into BENCH_HEAP_SNAPSHOT_DIR when
 * that is set; closes everything on SIGTERM or when the parent goes away.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
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
  /** Cluster ownership timing; phaselog's defaults when omitted. */
  ownership?: { heartbeatMs?: number; leaseMs?: number };
}

/** What a worker answers to `{ report: true }`. */
export interface ScaleOutWorkerReport {
  rss: number;
  /** JS heap in use, after a full collection when the process runs with --expose-gc. */
  heapUsed: number;
  /** Whether `heapUsed` was taken after a full collection. */
  collected: boolean;
  /** Heap V8 has reserved (used or not), and memory outside it: Buffers, WebAssembly memories. */
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  failed: number;
  owned: number;
  /** Resident memory by kind of mapping, from /proc/self/smaps (Linux), in bytes; undefined elsewhere. */
  rssByMapping?: RssByMapping;
}

/** Resident memory of a process by kind of mapping. */
export interface RssByMapping {
  /** The node executable's own pages (code and data). */
  executable: number;
  /** The brk heap of C/C++ malloc. */
  mallocBrk: number;
  /** Anonymous mappings: V8's heap spaces, malloc's mmapped arenas, WebAssembly memories, thread stacks. */
  anonymous: number;
  /** Other files: shared libraries, native addons. */
  otherFiles: number;
}

/** {@link RssByMapping} of this process, when /proc/self/smaps can be read. */
function rssByMapping(): RssByMapping | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return undefined;
  }
  const totals: RssByMapping = { executable: 0, mallocBrk: 0, anonymous: 0, otherFiles: 0 };
  let kind: keyof RssByMapping = 'anonymous';
  for (const line of text.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping !== null) {
      const name = mapping[1] ?? '';
      kind =
        name === ''
          ? 'anonymous'
          : name === '[heap]'
            ? 'mallocBrk'
            : name === process.execPath
              ? 'executable'
              : name.startsWith('[')
                ? 'anonymous'
                : 'otherFiles';
    } else if (line.startsWith('Rss:')) totals[kind] += Number(line.split(/\s+/)[1]) * 1024;
  }
  return totals;
}

// `@file`: the options in a file (hundreds of kubeconfigs do not fit in an argument).
const argument = process.argv[2] ?? '{}';
const options = JSON.parse(
  argument.startsWith('@') ? readFileSync(argument.slice(1), 'utf8') : argument,
) as ScaleOutWorkerOptions;
const log = pino({ level: 'error' }, pino.destination(2));
const clusters: ClusterHandle[] = options.kubeconfigs.flatMap(
  ({ name, yaml }) => loadKubeconfigClusters({ yaml, name }).clusters,
);
// phaselog's own pool size: a pool no larger than the concurrency leaves nothing for the start's
// registration once the first owned snapshots run, and its transaction times out waiting.
// As `phaselog start` with PHASELOG_ROLE=worker makes it: the pool only, no Prisma client.
const db = createDb(options.databaseUrl, { prisma: false });
const running = await startWorkers({
  config: {
    snapshot: { interval: options.schedule?.intervalMs ?? 60_000, jitter: 0 },
    health: undefined,
    baseDir: process.cwd(),
  },
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
  ...(options.ownership !== undefined ? { ownership: options.ownership } : {}),
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
  if ((message as { report?: unknown }).report !== true) return;
  // Without a collection first, heapUsed mostly says how long ago the last one ran.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const memory = process.memoryUsage();
  const report: ScaleOutWorkerReport = {
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    heapTotal: memory.heapTotal,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    collected: gc !== undefined,
    failed,
    owned: running.ownership.owned().length,
  };
  const byMapping = rssByMapping();
  if (byMapping !== undefined) report.rssByMapping = byMapping;
  // For attributing the heap (bench/heap-diff.ts): written after the figures were read, so it does not move them.
  const snapshotDir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  if (snapshotDir !== undefined && snapshotDir !== '')
    writeHeapSnapshot(
      path.join(
        snapshotDir,
        `scale-out-worker-${running.ownership.owned().length}-clusters-${process.pid}.heapsnapshot`,
      ),
    );
  process.send?.(report);
});
process.send?.({ ready: true, url: '', instance: running.ownership.instance });
