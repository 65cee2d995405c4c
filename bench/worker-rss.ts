/**
 * Worker memory in watch mode: the resident memory a worker process adds to hold `resources`
 * watched objects (typical ~4 KB Deployments, Pods, Services and ConfigMaps with managed fields)
 * in phaselog's watch caches, scaled to 10,000, and in the same run the memory of the same objects
 * parsed and kept in a plain Map, the reference the stack notes give (~61 MB per 10,000).
 * The emulator runs in its own process; each measurement runs in a fresh process (the watch caches
 * in 5, the median RSS taken), warmed up by doing the same work once (see worker-rss-probe.ts), so
 * the figures are what the caches hold.
 *
 * Then what a watch-mode worker holds, in 3 fresh processes against scratch databases (the median
 * heap taken): the same objects, each a member of a phase, watched, observed through the caches
 * and recorded twice (the `worker` probe): caches with their status memos and parsed inventories,
 * and the cluster state the history store keeps between snapshots, each also printed alone, and
 * the caches as synced, before a snapshot let their records drop the bodies it stored. Objects
 * are counted once (inventory ConfigMaps are in two caches).
 *
 * The default is 40,000 objects: malloc's arenas move a process's RSS by several MB either way
 * whatever it holds, which at 10,000 objects swamped the figure (0-36 MB per 10k across processes).
 *
 *   node --import tsx bench/worker-rss.ts [--resources 40000]
 */
import { fileURLToPath } from 'node:url';
import { startReadyChild } from './lib/child-server.ts';
import type { ServerReadyMessage } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { ProbeResult } from './worker-rss-probe.ts';

/** Options of {@link run}. */
export interface WorkerRssBenchOptions {
  /** Objects in the emulated cluster, all watched; figures are scaled to 10,000. @default 40000 */
  resources?: number;
}

interface ClusterReady extends ServerReadyMessage {
  kubeconfig: string;
}

const CLUSTER_FILE = fileURLToPath(new URL('./worker-rss-cluster.ts', import.meta.url));
const PROBE_FILE = fileURLToPath(new URL('./worker-rss-probe.ts', import.meta.url));
const MB = 1024 * 1024;

/** The `worker` probe against a fresh, migrated scratch database. */
async function probeWorker(kubeconfig: string): Promise<ProbeResult> {
  const scratch = await createScratchDatabase('worker_rss');
  try {
    await migrateDatabase(scratch.connectionString);
    return await probe(['worker', kubeconfig, scratch.connectionString]);
  } finally {
    await scratch.drop();
  }
}

async function probe(args: string[]): Promise<ProbeResult> {
  const child = await startReadyChild<ProbeResult>(PROBE_FILE, args, 180_000, ['--expose-gc']);
  await child.stop();
  if (child.ready.error !== undefined) throw new Error(`watch caches did not sync: ${child.ready.error}`);
  return child.ready;
}

function medianBy(results: ProbeResult[], value: (p: ProbeResult) => number): ProbeResult {
  const sorted = [...results].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor(sorted.length / 2)] as ProbeResult;
}

/** Measures watch-cache memory and plain-Map memory for the same objects; returns MB per 10,000. */
export async function run(options: WorkerRssBenchOptions = {}): Promise<Figures> {
  const resources = options.resources ?? 40_000;
  const cluster = await startReadyChild<ClusterReady>(CLUSTER_FILE, [String(resources)], 180_000);
  try {
    // RSS moves by tens of MB when V8 and malloc hand pages back: the median of 5 processes.
    const watches: ProbeResult[] = [];
    for (let i = 0; i < 5; i += 1) watches.push(await probe(['watch', cluster.ready.kubeconfig]));
    const watch = medianBy(watches, (p) => p.rssAfter - p.rssBefore);
    const workers: ProbeResult[] = [];
    for (let i = 0; i < 3; i += 1) workers.push(await probeWorker(cluster.ready.kubeconfig));
    const worker = medianBy(workers, (p) => p.heapAfter - p.heapBefore);
    const map = await probe(['map', String(resources)]);
    const per10k = (bytes: number, objects: number) => round(((bytes / Math.max(1, objects)) * 10_000) / MB, 1);
    const watchRss = per10k(watch.rssAfter - watch.rssBefore, watch.objects);
    const mapRss = per10k(map.rssAfter - map.rssBefore, map.objects);
    return {
      'watched objects': watch.objects,
      'worker RSS before watching MB': Math.round(watch.rssBefore / MB),
      'worker RSS when synced MB': Math.round(watch.rssAfter / MB),
      'watch caches: RSS MB per 10k resources': watchRss,
      'watch caches: RSS MB per 10k, without the warm-up': per10k(watch.rssAfter - watch.rssCold, watch.objects),
      'watch caches: JS heap MB per 10k resources': per10k(watch.heapAfter - watch.heapBefore, watch.objects),
      'watch caches: V8 heap committed MB per 10k': per10k(
        (watch.heapTotalAfter ?? 0) - (watch.heapTotalBefore ?? 0),
        watch.objects,
      ),
      'watch caches: external memory MB per 10k': per10k(
        (watch.externalAfter ?? 0) - (watch.externalBefore ?? 0),
        watch.objects,
      ),
      'watch caches: RSS MB per 10k, each process': watches
        .map((p) => per10k(p.rssAfter - p.rssBefore, p.objects))
        .join(', '),
      'worker (caches, memos, kept state): JS heap MB per 10k resources': per10k(
        worker.heapAfter - worker.heapBefore,
        worker.objects,
      ),
      'worker: watch caches and status memos after the snapshots: JS heap MB per 10k': per10k(
        (worker.heapWithoutKeptState ?? 0) - worker.heapBefore,
        worker.objects,
      ),
      'worker: kept cluster state: JS heap MB per 10k': per10k(
        worker.heapAfter - (worker.heapWithoutKeptState ?? 0),
        worker.objects,
      ),
      'worker: watch caches before the first snapshot (bodies held): JS heap MB per 10k': per10k(
        (worker.heapCaches ?? 0) - worker.heapBefore,
        worker.objects,
      ),
      'worker: RSS MB per 10k resources': per10k(worker.rssAfter - worker.rssBefore, worker.objects),
      'worker: JS heap MB per 10k, each process': workers
        .map((p) => per10k(p.heapAfter - p.heapBefore, p.objects))
        .join(', '),
      'plain Map of parsed objects: RSS MB per 10k': mapRss,
      'plain Map of parsed objects: JS heap MB per 10k': per10k(map.heapAfter - map.heapBefore, map.objects),
      'watch caches / plain Map (RSS)': mapRss > 0 ? round(watchRss / mapRss, 2) : 'n/a',
    };
  } finally {
    await cluster.stop();
  }
}

if (isMain(import.meta.url)) {
  printFigures('worker memory per 10,000 watched resources', await run({ resources: readNumberFlag('resources') }));
}
