/**
 * Scale-out: N snapshot worker processes (phaselog's `startWorkers`) sharing M emulated clusters
 * through one BullMQ queue, Redis cluster locks and one Postgres database. Each fleet tick enqueues
 * one snapshot job per cluster (as the schedulers do) after changing one Deployment in 20, and is
 * timed until every job completed. Run for N = 1, 2, 4 ... to see how far adding processes helps
 * on this machine (2 cores shared by workers, emulators and Postgres).
 *
 *   node --import tsx bench/scale-out.ts [--clusters 8] [--phases 20] [--resources-per-phase 25] [--ticks 5] [--warmup-ticks 3] [--workers 1,2,4]
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { enqueueSnapshot, snapshotJobId } from '../src/queue/snapshot-jobs.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { startReadyChild } from './lib/child-server.ts';
import type { ReadyChild, ServerReadyMessage } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { BENCH_REDIS_URL, benchPrefix, connectRedis, deleteKeysWithPrefix } from './lib/redis-scratch.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, nowMs, perSecond, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { ScaleOutWorkerOptions } from './scale-out-worker.ts';

/** Options of {@link run}. */
export interface ScaleOutBenchOptions {
  /** Emulated clusters. @default 8 */
  clusters?: number;
  /** Phases (cli-utils inventories) per cluster. @default 20 */
  phases?: number;
  /** Deployments per phase. @default 25 */
  resourcesPerPhase?: number;
  /** Timed fleet ticks per worker count; the median is reported. @default 5 */
  ticks?: number;
  /** Untimed fleet ticks first (new worker processes are JIT-cold for a few ticks). @default 3 */
  warmupTicks?: number;
  /** Worker process counts to measure, e.g. [1, 2, 4]. @default [1, 2, 4] */
  workers?: number[] | string;
  /** BullMQ concurrency inside each worker process. @default 4 */
  concurrency?: number;
  /** Time limit for one fleet tick. @default 60000 */
  tickTimeoutMs?: number;
}

interface ClustersReady extends ServerReadyMessage {
  kubeconfigs: { name: string; yaml: string }[];
}

interface TickResult {
  ms: number;
  /** Longest time a job of the tick waited in the queue before a worker took it. */
  waitMs: number;
  /** Longest time a job of the tick ran in a worker. */
  processMs: number;
  rows: number;
  changes: number;
  written: number;
  failed: number;
}

const CLUSTERS_FILE = fileURLToPath(new URL('./scale-out-clusters.ts', import.meta.url));
const WORKER_FILE = fileURLToPath(new URL('./scale-out-worker.ts', import.meta.url));

function request<T>(child: ReadyChild['child'], message: object, pick: (m: unknown) => T | undefined, timeoutMs = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(message)} within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: unknown) => {
      const value = pick(m);
      if (value === undefined) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(value);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

/** Enqueues one job per cluster for `tickAt` and waits until all of them completed or failed. */
async function fleetTick(queue: Queue, events: QueueEvents, clusters: string[], tickAt: number, timeoutMs: number): Promise<TickResult> {
  const pending = new Set<string>();
  const result: TickResult = { ms: 0, waitMs: 0, processMs: 0, rows: 0, changes: 0, written: 0, failed: 0 };
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const settle = (jobId: string) => {
    if (pending.delete(jobId) && pending.size === 0) resolveDone();
  };
  const onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
    if (!pending.has(jobId)) return;
    const value = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as { rows?: number; changes?: number; written?: boolean } | null;
    result.rows += value?.rows ?? 0;
    result.changes += value?.changes ?? 0;
    if (value?.written === true) result.written++;
    settle(jobId);
  };
  const onFailed = ({ jobId }: { jobId: string }) => {
    if (!pending.has(jobId)) return;
    result.failed++;
    settle(jobId);
  };
  events.on('completed', onCompleted);
  events.on('failed', onFailed);
  const started = nowMs();
  try {
    for (const cluster of clusters) pending.add(await enqueueSnapshot(queue, cluster, tickAt));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((_, reject) => (timer = setTimeout(() => reject(new Error(`fleet tick not done within ${timeoutMs} ms (${pending.size} jobs left)`)), timeoutMs)));
    await Promise.race([done, timedOut]).finally(() => clearTimeout(timer));
    result.ms = nowMs() - started;
    for (const cluster of clusters) {
      const job = await queue.getJob(snapshotJobId(cluster, tickAt));
      if (job?.processedOn === undefined || job.finishedOn === undefined) continue;
      result.waitMs = Math.max(result.waitMs, job.processedOn - job.timestamp);
      result.processMs = Math.max(result.processMs, job.finishedOn - job.processedOn);
    }
    return result;
  } finally {
    events.off('completed', onCompleted);
    events.off('failed', onFailed);
  }
}

/**
 * Changes in `(afterSeq, ...]` that are not Deployment flips: reachability changes and statuses
 * to or from Unknown (a LIST that timed out under load), by what they were.
 */
async function otherChanges(connectionString: string, afterSeq: bigint): Promise<{ maxSeq: bigint; summary: string }> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const max = await client.query<{ seq: string | null }>('SELECT max("seq")::text AS seq FROM "StatusChange"');
    const rows = await client.query<{ what: string; n: string }>(
      `SELECT scope || ' ' || coalesce("fromStatus", '-') || ' -> ' || coalesce("toStatus", '-') AS what, count(*)::text AS n FROM "StatusChange"
       WHERE "seq" > $1 AND (scope = 'cluster' OR "toStatus" IS DISTINCT FROM 'InProgress' AND "toStatus" IS DISTINCT FROM 'Current'
         OR "fromStatus" IS NOT NULL AND "fromStatus" NOT IN ('InProgress', 'Current')) GROUP BY 1 ORDER BY 1`,
      [afterSeq.toString()],
    );
    return { maxSeq: BigInt(max.rows[0]?.seq ?? '0'), summary: rows.rows.map((r) => `${r.what}: ${r.n}`).join(', ') || 'none' };
  } finally {
    await client.end();
  }
}

function parseWorkerCounts(value: number[] | string | undefined): number[] {
  const list = typeof value === 'string' ? value.split(',').map(Number) : (value ?? [1, 2, 4]);
  return [...new Set(list.filter((n) => Number.isInteger(n) && n > 0 && n <= 16))];
}

/** Runs the fleet ticks with each worker count and returns tick time, throughput and speed-up. */
export async function run(options: ScaleOutBenchOptions = {}): Promise<Figures> {
  const shape = { clusters: options.clusters ?? 8, phases: options.phases ?? 20, resourcesPerPhase: options.resourcesPerPhase ?? 25 };
  const ticks = options.ticks ?? 5;
  const warmup = options.warmupTicks ?? 3;
  let flips = 0;
  const counts = parseWorkerCounts(options.workers);
  const concurrency = options.concurrency ?? 4;
  const resources = shape.clusters * shape.phases * shape.resourcesPerPhase;
  const figures: Figures = { clusters: shape.clusters, 'resources per cluster': shape.phases * shape.resourcesPerPhase, 'resources in the fleet': resources, 'concurrency per worker': concurrency };
  const db = await createScratchDatabase('scaleout');
  const prefixes: string[] = [];
  let clustersChild: ReadyChild<ClustersReady> | undefined;
  let tickAt = Date.now();
  let mutation = 0;
  let baseline: number | undefined;
  try {
    await migrateDatabase(db.connectionString);
    clustersChild = await startReadyChild<ClustersReady>(CLUSTERS_FILE, [JSON.stringify(shape)], 120_000);
    const { kubeconfigs } = clustersChild.ready;
    const names = kubeconfigs.map((k) => k.name);
    let seenSeq = 0n;
    for (const n of counts) {
      const prefix = `${benchPrefix('scale-out')}n${n}`;
      prefixes.push(prefix);
      const queueName = 'snapshots';
      const workerOptions: ScaleOutWorkerOptions = { databaseUrl: db.connectionString, redisUrl: BENCH_REDIS_URL, queueName, prefix, concurrency, kubeconfigs };
      // Hundreds of kubeconfigs exceed the argument size limit (E2BIG): hand them over in a file.
      const optionsFile = path.join(mkdtempSync(path.join(tmpdir(), 'phaselog-scale-out-')), 'worker-options.json');
      writeFileSync(optionsFile, JSON.stringify(workerOptions));
      const workers = await Promise.all(Array.from({ length: n }, () => startReadyChild(WORKER_FILE, [`@${optionsFile}`], 60_000)));
      const connection = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: null });
      const queue = new Queue(queueName, { connection, prefix });
      const events = new QueueEvents(queueName, { connection: { url: BENCH_REDIS_URL }, prefix });
      try {
        await events.waitUntilReady();
        const results: TickResult[] = [];
        let firstTimedSeq = seenSeq;
        for (let t = 0; t < warmup + ticks; t++) {
          if (t === warmup) firstTimedSeq = (await otherChanges(db.connectionString, seenSeq)).maxSeq;
          const changed = await request(clustersChild.child, { mutate: ++mutation }, (m) => (m as { mutated?: number; changed?: number }).mutated === mutation ? (m as { changed: number }).changed : undefined);
          tickAt += 1_000;
          const result = await fleetTick(queue, events, names, tickAt, options.tickTimeoutMs ?? 60_000);
          if (t >= warmup) results.push(result);
          flips = changed;
        }
        const tickMs = median(results.map((r) => r.ms));
        const perS = perSecond(resources, tickMs);
        baseline ??= perS;
        const label = `${n} worker${n === 1 ? '' : 's'}`;
        figures[`${label}: fleet tick ms (median)`] = round(tickMs);
        figures[`${label}: resources/s`] = perS;
        figures[`${label}: longest queue wait ms (median tick)`] = Math.round(median(results.map((r) => r.waitMs)));
        figures[`${label}: longest job run ms (median tick)`] = Math.round(median(results.map((r) => r.processMs)));
        figures[`${label}: speed-up vs ${counts[0]} worker${counts[0] === 1 ? '' : 's'}`] = round(perS / baseline, 2);
        figures[`${label}: status changes per tick`] = Math.round(median(results.map((r) => r.changes)));
        figures[`${label}: rows written per tick`] = Math.round(median(results.map((r) => r.rows)));
        figures[`${label}: failed jobs`] = results.reduce((sum, r) => sum + r.failed, 0);
        const other = await otherChanges(db.connectionString, firstTimedSeq);
        seenSeq = other.maxSeq;
        figures[`${label}: changes besides the flips (timed ticks)`] = other.summary;
        const reports = await Promise.all(workers.map((w) => request(w.child, { report: true }, (m) => ((m as { rss?: number }).rss !== undefined ? (m as { rss: number }) : undefined))));
        figures[`${label}: RSS MB per worker (max)`] = Math.round(Math.max(...reports.map((r) => r.rss)) / 1024 / 1024);
      } finally {
        await Promise.all(workers.map((w) => w.stop(15_000)));
        await events.close();
        await queue.close();
        connection.disconnect();
      }
    }
    figures['Deployment status flips applied per tick'] = flips;
    return figures;
  } finally {
    await clustersChild?.stop();
    const redis = connectRedis();
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix).catch(() => 0);
    redis.disconnect();
    await db.drop();
  }
}

if (isMain(import.meta.url)) {
  const workersIndex = process.argv.indexOf('--workers');
  printFigures(
    'scale-out: snapshot worker processes sharing emulated clusters',
    await run({
      clusters: readNumberFlag('clusters'),
      phases: readNumberFlag('phases'),
      resourcesPerPhase: readNumberFlag('resources-per-phase'),
      ticks: readNumberFlag('ticks'),
      warmupTicks: readNumberFlag('warmup-ticks'),
      workers: workersIndex === -1 ? undefined : process.argv[workersIndex + 1],
      concurrency: readNumberFlag('concurrency'),
    }),
  );
}
