/**
 * Fixed memory cost of an idle cluster in a worker: fresh worker processes (phaselog's
 * `startWorkers`, see cluster-footprint-probe.ts) holding no cluster, a tenth of `clusters` and
 * `clusters` small emulated clusters (a few phases each), each measured after `snapshots`
 * snapshots of every cluster, some idle seconds and a forced GC. The growth from a tenth to all of
 * them, divided by the clusters added, is what one more cluster costs, as RSS and as JS heap.
 * Measured in poll mode (snapshots list the kinds) and in watch mode (watch caches, live snapshots).
 * The emulators run in one process of their own (bench/scale-out-clusters.ts), over HTTPS with one
 * self-signed CA per cluster unless `--http`.
 *
 *   node --import tsx bench/cluster-footprint.ts [--clusters 100] [--phases 3] [--resources-per-phase 2] [--snapshots 2] [--http] [--heap-snapshots <dir>]
 *
 * RSS moves by tens of MB between processes whatever they hold (malloc arenas, V8 releasing pages),
 * so the per-cluster RSS needs 100 clusters or more to mean anything; the heap figures hold at 20.
 *
 * `--heap-snapshots <dir>` writes each probe's V8 heap snapshot there (open two in Chrome DevTools'
 * Comparison view, or bench/heap-diff.ts, to see which constructors the clusters add).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateDatabase } from '../src/store/migrate.ts';
import { startReadyChild } from './lib/child-server.ts';
import type { ReadyChild, ServerReadyMessage } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { BENCH_REDIS_URL, benchPrefix, connectRedis, deleteKeysWithPrefix } from './lib/redis-scratch.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { FootprintProbeOptions, FootprintProbeResult } from './cluster-footprint-probe.ts';

/** Options of {@link run}. */
export interface ClusterFootprintBenchOptions {
  /** Idle emulated clusters the second worker holds. @default 100 */
  clusters?: number;
  /** Phases per cluster. @default 3 */
  phases?: number;
  /** Deployments per phase. @default 2 */
  resourcesPerPhase?: number;
  /** Snapshots of every cluster before measuring. @default 2 */
  snapshots?: number;
  /** Plain HTTP emulators instead of HTTPS with a CA per cluster. @default false */
  http?: boolean;
  /** Where to write each probe's heap snapshot. @default none */
  heapSnapshots?: string;
}

interface ClustersReady extends ServerReadyMessage {
  kubeconfigs: { name: string; yaml: string }[];
}

const CLUSTERS_FILE = fileURLToPath(new URL('./scale-out-clusters.ts', import.meta.url));
const PROBE_FILE = fileURLToPath(new URL('./cluster-footprint-probe.ts', import.meta.url));
const MB = 1024 * 1024;

/** One fresh worker process against a fresh database; reports its memory once idle. */
async function probe(
  base: Omit<FootprintProbeOptions, 'databaseUrl' | 'prefix'>,
  label: string,
): Promise<FootprintProbeResult> {
  const db = await createScratchDatabase('footprint');
  const prefix = benchPrefix(`footprint-${label}`);
  let child: ReadyChild<FootprintProbeResult> | undefined;
  try {
    await migrateDatabase(db.connectionString);
    // Hundreds of kubeconfigs exceed the argument size limit (E2BIG): hand them over in a file.
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'phaselog-footprint-')), 'probe.json');
    writeFileSync(
      file,
      JSON.stringify({ ...base, databaseUrl: db.connectionString, prefix } satisfies FootprintProbeOptions),
    );
    child = await startReadyChild<FootprintProbeResult>(PROBE_FILE, [`@${file}`], 300_000, ['--expose-gc']);
    return child.ready;
  } finally {
    await child?.stop(15_000);
    const redis = connectRedis();
    await deleteKeysWithPrefix(redis, prefix).catch(() => 0);
    redis.disconnect();
    await db.drop();
  }
}

/** Measures the worker's memory with no cluster and with `clusters`, in poll and watch mode. */
export async function run(options: ClusterFootprintBenchOptions = {}): Promise<Figures> {
  const clusters = Math.max(2, options.clusters ?? 100);
  // The per-cluster cost is the slope from `base` clusters to `clusters`, not from none: a worker
  // that has snapshotted nothing has not compiled the snapshot code, which every worker pays once.
  const base = Math.max(1, Math.round(clusters / 10));
  const shape = {
    clusters,
    phases: options.phases ?? 3,
    resourcesPerPhase: options.resourcesPerPhase ?? 2,
    tls: options.http !== true,
  };
  const snapshots = options.snapshots ?? 2;
  const figures: Figures = {
    clusters,
    'resources per cluster': shape.phases * shape.resourcesPerPhase,
    transport: shape.tls ? 'https, one CA per cluster' : 'http',
    'snapshots before measuring': snapshots,
  };
  const emulators = await startReadyChild<ClustersReady>(CLUSTERS_FILE, [JSON.stringify(shape)], 120_000);
  try {
    for (const live of [false, true]) {
      const mode = live ? 'watch' : 'poll';
      const common = { redisUrl: BENCH_REDIS_URL, live, snapshots, idleMs: 6_000 };
      const heapPath = (label: string): { heapSnapshotPath?: string } =>
        options.heapSnapshots === undefined
          ? {}
          : { heapSnapshotPath: path.join(options.heapSnapshots, `footprint-${mode}-${label}.heapsnapshot`) };
      const empty = await probe({ ...common, kubeconfigs: [], ...heapPath('0') }, `${mode}-0`);
      const few = await probe(
        { ...common, kubeconfigs: emulators.ready.kubeconfigs.slice(0, base), ...heapPath(String(base)) },
        `${mode}-${base}`,
      );
      const full = await probe(
        { ...common, kubeconfigs: emulators.ready.kubeconfigs, ...heapPath(String(clusters)) },
        `${mode}-${clusters}`,
      );
      const per = (value: (r: FootprintProbeResult) => number): number =>
        round((value(full) - value(few)) / (clusters - base) / MB, 3);
      figures[`${mode}: worker RSS MB, no cluster`] = round(empty.memory.rss / MB, 1);
      figures[`${mode}: worker RSS MB, ${base} clusters`] = round(few.memory.rss / MB, 1);
      figures[`${mode}: worker RSS MB, ${clusters} clusters`] = round(full.memory.rss / MB, 1);
      figures[`${mode}: RSS MB per cluster`] = per((r) => r.memory.rss);
      figures[`${mode}: JS heap MB per cluster`] = per((r) => r.memory.heapUsed);
      figures[`${mode}: external + array buffers MB per cluster`] = per((r) => r.memory.external);
      figures[`${mode}: old space MB per cluster`] = per((r) => r.spaces['old_space'] ?? 0);
      figures[`${mode}: failed jobs`] = full.failedJobs;
    }
    return figures;
  } finally {
    await emulators.stop();
  }
}

if (isMain(import.meta.url)) {
  const dirIndex = process.argv.indexOf('--heap-snapshots');
  printFigures(
    'cluster footprint: what one more idle cluster costs a worker process',
    await run({
      clusters: readNumberFlag('clusters'),
      phases: readNumberFlag('phases'),
      resourcesPerPhase: readNumberFlag('resources-per-phase'),
      snapshots: readNumberFlag('snapshots'),
      http: process.argv.includes('--http'),
      ...(dirIndex === -1 ? {} : { heapSnapshots: process.argv[dirIndex + 1] }),
    }),
  );
}
