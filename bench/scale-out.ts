/**
 * Scale-out: N snapshot worker processes (phaselog's `startWorkers`) sharing M emulated clusters
 * through one BullMQ queue, Redis cluster locks and one Postgres database. Each fleet tick enqueues
 * one snapshot job per cluster (as the schedulers do) after changing one Deployment in 20, and is
 * timed until every job completed. Run for N = 1, 2, 4 ... to see how far adding processes helps
 * on this machine (2 cores shared by workers, emulators and Postgres).
 *
 * The clusters are sharded across the workers (src/queue/ownership.ts): the ticks start once every
 * cluster is held by its rendezvous owner, each job is handed on to its owner's own queue, and its
 * return value is the owner's snapshot outcome. With `--live` the workers watch their clusters too;
 * the watches open on the emulators are counted by worker (User-Agent), so a cluster watched twice
 * shows. With two workers or more, one is then killed with SIGKILL (`--no-kill` skips it): a
 * Deployment of each cluster it owned turns Failed at once, and the figures say how long until the
 * survivors held its clusters and whether every one of those changes reached the change log.
 *
 *   node --import tsx bench/scale-out.ts [--clusters 8] [--phases 20] [--resources-per-phase 25] [--ticks 5] [--warmup-ticks 3] [--workers 1,2,4]
 *     [--live] [--debounce-ms 25] [--no-kill] [--heartbeat-ms 2000] [--lease-ms 10000] [--concurrency 4] [--compiled] [--as-deployed]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { parseAllDocuments } from 'yaml';
import pg from 'pg';
import { ownershipPrefix } from '../src/queue/ownership.ts';
import { enqueueSnapshot, snapshotJobId } from '../src/queue/snapshot-jobs.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { startReadyChild } from './lib/child-server.ts';
import type { ReadyChild, ServerReadyMessage } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { BENCH_REDIS_URL, benchPrefix, connectRedis, deleteKeysWithPrefix } from './lib/redis-scratch.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, nowMs, perSecond, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { ScaleOutWorkerOptions, ScaleOutWorkerReport } from './scale-out-worker.ts';
import { countOpenWatches, killOneWorker, request, waitForAssignment } from './scale-out-ownership.ts';

/** Options of {@link run}. */
export interface ScaleOutBenchOptions {
  /** Emulated clusters. @default 8 */
  clusters?: number;
  /** Phases (cli-utils inventories) per cluster. @default 20 */
  phases?: number;
  /** Deployments per phase. @default 25 */
  resourcesPerPhase?: number;
  /** Phases per namespace: in watch mode each namespace (up to 10) adds a ReplicaSet and a Pod watch per cluster. @default 10 */
  phasesPerNamespace?: number;
  /** Timed fleet ticks per worker count; the median is reported. @default 5 */
  ticks?: number;
  /** Untimed fleet ticks first (new worker processes are JIT-cold for a few ticks). @default 3 */
  warmupTicks?: number;
  /** Worker process counts to measure, e.g. [1, 2, 4]. @default [1, 2, 4] */
  workers?: number[] | number | string;
  /** BullMQ concurrency inside each worker process. @default 4 */
  concurrency?: number;
  /** Time limit for one fleet tick. @default 60000 */
  tickTimeoutMs?: number;
  /** Watch mode in the workers (live snapshots on change, as well as the ticks). @default false */
  live?: boolean;
  /** Live-snapshot debounce in watch mode. @default 25 (phaselog's) */
  debounceMs?: number;
  /** Kill one worker with SIGKILL after the timed ticks (worker counts of 2 and more only). @default true */
  kill?: boolean;
  /** Cluster ownership heartbeat. @default 2000 (phaselog's) */
  heartbeatMs?: number;
  /** Cluster ownership lease: a killed worker's clusters are free after about this long. @default 10000 (phaselog's) */
  leaseMs?: number;
  /**
   * Run the workers compiled (one esbuild bundle of bench/scale-out-worker.ts and phaselog's
   * sources, packages left to node_modules), as a production worker runs, instead of through tsx,
   * whose compiler and source maps take memory of their own. @default false
   */
  compiled?: boolean;
  /**
   * Run the workers with the environment the shipped worker Deployment gives them
   * (deploy/kubernetes/worker.yaml: its NODE_OPTIONS heap limit and MALLOC_ARENA_MAX) and on the
   * Node major version of the container image (the Dockerfile's `FROM node:N`, fetched with
   * `npx -p node@N` when this Node is another), as a worker runs in a cluster. @default false
   */
  asDeployed?: boolean;
}

interface ClustersReady extends ServerReadyMessage {
  kubeconfigs: { name: string; yaml: string }[];
}

interface WorkerReady extends ServerReadyMessage {
  instance: string;
}

/** The Deployment flips rotate over one in this many (bench/scale-out-clusters.ts). */
const FLIP_SHARE = 20;

interface TickResult {
  ms: number;
  /** Longest time a job of the tick waited in the queue before a worker took it. */
  waitMs: number;
  /** Longest time a job of the tick ran in a worker. */
  processMs: number;
  rows: number;
  changes: number;
  written: number;
  /** Jobs whose snapshot wrote nothing, by why (`skipped` of the outcome). */
  skipped: number;
  failed: number;
}

const CLUSTERS_FILE = fileURLToPath(new URL('./scale-out-clusters.ts', import.meta.url));
const WORKER_FILE = fileURLToPath(new URL('./scale-out-worker.ts', import.meta.url));
/** Preloaded into every worker (`--import`), as bin/phaselog.mjs registers it before phaselog loads. */
const LEAN_CLIENT_NODE_FILE = fileURLToPath(new URL('../src/kube/register-lean-client-node.ts', import.meta.url));

/** Enqueues one job per cluster for `tickAt` and waits until all of them completed or failed. */
async function fleetTick(
  queue: Queue,
  events: QueueEvents,
  clusters: string[],
  tickAt: number,
  timeoutMs: number,
): Promise<TickResult> {
  const pending = new Set<string>();
  const result: TickResult = { ms: 0, waitMs: 0, processMs: 0, rows: 0, changes: 0, written: 0, skipped: 0, failed: 0 };
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const settle = (jobId: string) => {
    if (pending.delete(jobId) && pending.size === 0) resolveDone();
  };
  const onCompleted = ({ jobId, returnvalue }: { jobId: string; returnvalue: unknown }) => {
    if (!pending.has(jobId)) return;
    const value = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as {
      rows?: number;
      changes?: number;
      written?: boolean;
      skipped?: string;
    } | null;
    result.rows += value?.rows ?? 0;
    result.changes += value?.changes ?? 0;
    if (value?.written === true) result.written++;
    if (value?.skipped !== undefined) result.skipped++;
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
    const timedOut = new Promise<void>(
      (_, reject) =>
        (timer = setTimeout(
          () => reject(new Error(`fleet tick not done within ${timeoutMs} ms (${pending.size} jobs left)`)),
          timeoutMs,
        )),
    );
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
async function otherChanges(
  connectionString: string,
  afterSeq: bigint,
): Promise<{ maxSeq: bigint; summary: string; total: number }> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const max = await client.query<{ seq: string | null; n: string }>(
      'SELECT max("seq")::text AS seq, count(*) FILTER (WHERE "seq" > $1)::text AS n FROM "StatusChange"',
      [afterSeq.toString()],
    );
    const rows = await client.query<{ what: string; n: string }>(
      `SELECT scope || ' ' || coalesce("fromStatus", '-') || ' -> ' || coalesce("toStatus", '-') AS what, count(*)::text AS n FROM "StatusChange"
       WHERE "seq" > $1 AND (scope = 'cluster' OR "toStatus" IS DISTINCT FROM 'InProgress' AND "toStatus" IS DISTINCT FROM 'Current'
         OR "fromStatus" IS NOT NULL AND "fromStatus" NOT IN ('InProgress', 'Current')) GROUP BY 1 ORDER BY 1`,
      [afterSeq.toString()],
    );
    return {
      maxSeq: BigInt(max.rows[0]?.seq ?? '0'),
      summary: rows.rows.map((r) => `${r.what}: ${r.n}`).join(', ') || 'none',
      total: Number(max.rows[0]?.n ?? 0),
    };
  } finally {
    await client.end();
  }
}

function parseWorkerCounts(value: number[] | number | string | undefined): number[] {
  // `npm run bench -- --scale-out.workers 2` hands over a number, `1,2` a string.
  const list =
    typeof value === 'string'
      ? value.split(',').map(Number)
      : typeof value === 'number'
        ? [value]
        : (value ?? [1, 2, 4]);
  return [...new Set(list.filter((n) => Number.isInteger(n) && n > 0 && n <= 16))];
}

const MB = 1024 * 1024;

/**
 * bench/scale-out-worker.ts and the sources it imports, bundled into dist/bench/ (inside the
 * checkout, so the packages it leaves external resolve from node_modules).
 */
async function compiledWorker(): Promise<{ worker: string; preload: string }> {
  const { build } = await import('esbuild');
  const outdir = fileURLToPath(new URL('../dist/bench/', import.meta.url));
  await build({
    entryPoints: { 'scale-out-worker': WORKER_FILE, 'register-lean-client-node': LEAN_CLIENT_NODE_FILE },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return {
    worker: path.join(outdir, 'scale-out-worker.mjs'),
    preload: path.join(outdir, 'register-lean-client-node.mjs'),
  };
}

/** The Node that runs the container image: this one when its major version is the Dockerfile's, else that version from npm. */
function deployedNode(): { execPath: string; version: string } {
  const dockerfile = readFileSync(fileURLToPath(new URL('../Dockerfile', import.meta.url)), 'utf8');
  const major = [...dockerfile.matchAll(/^FROM node:(\d+)/gm)].at(-1)?.[1];
  if (major === undefined) throw new Error('Dockerfile: no `FROM node:N` line');
  if (process.versions.node.split('.')[0] === major) return { execPath: process.execPath, version: process.version };
  const npx = path.join(path.dirname(process.execPath), 'npx');
  const execPath =
    execFileSync(npx, ['-y', '-p', `node@${major}`, 'node', '-p', 'process.execPath'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .at(-1) ?? '';
  const version = execFileSync(execPath, ['--version'], { encoding: 'utf8' }).trim();
  return { execPath, version };
}

/** The memory settings deploy/kubernetes/worker.yaml gives the worker container, by variable. */
function deployedWorkerEnv(): Record<string, string> {
  const file = fileURLToPath(new URL('../deploy/kubernetes/worker.yaml', import.meta.url));
  const documents = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as unknown) as {
    kind?: string;
    spec?: { template?: { spec?: { containers?: { name?: string; env?: { name: string; value?: string }[] }[] } } };
  }[];
  const container = documents
    .find((d) => d.kind === 'Deployment')
    ?.spec?.template?.spec?.containers?.find((c) => c.name === 'worker');
  const env: Record<string, string> = {};
  for (const variable of container?.env ?? []) {
    if ((variable.name === 'NODE_OPTIONS' || variable.name === 'MALLOC_ARENA_MAX') && variable.value !== undefined)
      env[variable.name] = variable.value;
  }
  if (Object.keys(env).length === 0)
    throw new Error(`${file}: the worker container sets neither NODE_OPTIONS nor MALLOC_ARENA_MAX`);
  return env;
}

/** Extra Node flags for the worker processes (BENCH_WORKER_NODE_FLAGS, space-separated), to compare heap settings. */
const workerNodeFlags = (process.env.BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');

/** Runs the fleet ticks with each worker count and returns tick time, throughput, memory, watches and the takeover after a kill. */
export async function run(options: ScaleOutBenchOptions = {}): Promise<Figures> {
  const shape = {
    clusters: options.clusters ?? 8,
    phases: options.phases ?? 20,
    resourcesPerPhase: options.resourcesPerPhase ?? 25,
    phasesPerNamespace: options.phasesPerNamespace ?? 10,
  };
  const ticks = options.ticks ?? 5;
  const warmup = options.warmupTicks ?? 3;
  const live = options.live === true;
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const leaseMs = options.leaseMs ?? 10_000;
  let flips = 0;
  const counts = parseWorkerCounts(options.workers);
  const workerEnv = options.asDeployed === true ? deployedWorkerEnv() : undefined;
  const workerNode =
    options.asDeployed === true ? deployedNode() : { execPath: process.execPath, version: process.version };
  const concurrency = options.concurrency ?? 4;
  const resources = shape.clusters * shape.phases * shape.resourcesPerPhase;
  const figures: Figures = {
    clusters: shape.clusters,
    'resources per cluster': shape.phases * shape.resourcesPerPhase,
    'namespaces per cluster': Math.ceil(shape.phases / shape.phasesPerNamespace),
    'resources in the fleet': resources,
    'concurrency per worker': concurrency,
    mode: live ? `watch (live snapshots, debounce ${options.debounceMs ?? 25} ms) and ticks` : 'ticks only (poll)',
    'workers run': options.compiled === true ? 'compiled (esbuild bundle)' : 'from the TypeScript sources (tsx)',
    'worker Node': workerNode.version,
    'worker environment':
      workerEnv === undefined
        ? "this shell's"
        : Object.entries(workerEnv)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ') + ' (deploy/kubernetes/worker.yaml)',
    'ownership heartbeat / lease ms': `${heartbeatMs} / ${leaseMs}`,
  };
  const db = await createScratchDatabase('scaleout');
  const prefixes: string[] = [];
  const redis = connectRedis();
  let clustersChild: ReadyChild<ClustersReady> | undefined;
  let tickAt = Date.now();
  let mutation = 0;
  let baseline: number | undefined;
  let baselineWatches: number | undefined;
  let oneWorkerRss: number | undefined;
  try {
    await migrateDatabase(db.connectionString);
    clustersChild = await startReadyChild<ClustersReady>(CLUSTERS_FILE, [JSON.stringify(shape)], 120_000);
    const emulators = clustersChild.child;
    const { kubeconfigs } = clustersChild.ready;
    const names = kubeconfigs.map((k) => k.name);
    let seenSeq = 0n;
    for (const n of counts) {
      const prefix = `${benchPrefix('scale-out')}n${n}`;
      prefixes.push(prefix);
      const queueName = 'snapshots';
      const owners = ownershipPrefix(prefix, queueName);
      const workerOptions: ScaleOutWorkerOptions = {
        databaseUrl: db.connectionString,
        redisUrl: BENCH_REDIS_URL,
        queueName,
        prefix,
        concurrency,
        kubeconfigs,
        ownership: { heartbeatMs, leaseMs },
        ...(live ? { live: { debounceMs: options.debounceMs ?? 25 } } : {}),
      };
      // Hundreds of kubeconfigs exceed the argument size limit (E2BIG): hand them over in a file.
      const optionsFile = path.join(mkdtempSync(path.join(tmpdir(), 'phaselog-scale-out-')), 'worker-options.json');
      writeFileSync(optionsFile, JSON.stringify(workerOptions));
      // --expose-gc: the heap figure is read after a full collection.
      const { worker: workerFile, preload } =
        options.compiled === true ? await compiledWorker() : { worker: WORKER_FILE, preload: LEAN_CLIENT_NODE_FILE };
      const nodeFlags = ['--import', pathToFileURL(preload).href, '--expose-gc', ...workerNodeFlags];
      const started = await Promise.allSettled(
        Array.from({ length: n }, () =>
          startReadyChild<WorkerReady>(workerFile, [`@${optionsFile}`], 120_000, nodeFlags, {
            ...(workerEnv !== undefined ? { env: workerEnv } : {}),
            execPath: workerNode.execPath,
          }),
        ),
      );
      const workers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const notStarted = started.find((s) => s.status === 'rejected');
      if (notStarted !== undefined) {
        await Promise.all(workers.map((w) => w.stop(15_000)));
        throw notStarted.reason;
      }
      const connection = new Redis(BENCH_REDIS_URL, { maxRetriesPerRequest: null });
      const queue = new Queue(queueName, { connection, prefix });
      const events = new QueueEvents(queueName, { connection: { url: BENCH_REDIS_URL }, prefix });
      // Ticks are stamped with the clock: a new owner's first snapshot is, and an older tick than a written one writes nothing.
      const tick = () =>
        fleetTick(queue, events, names, (tickAt = Math.max(tickAt + 1, Date.now())), options.tickTimeoutMs ?? 60_000);
      const label = `${n} worker${n === 1 ? '' : 's'}`;
      try {
        await events.waitUntilReady();
        const settleMs = await waitForAssignment(
          redis,
          owners,
          names,
          workers.map((w) => w.ready.instance),
          3 * leaseMs + 60_000,
        );
        figures[`${label}: ownership settled after start s`] = round(settleMs / 1000, 1);
        const results: TickResult[] = [];
        let firstTimedSeq = seenSeq;
        for (let t = 0; t < warmup + ticks; t++) {
          if (t === warmup) firstTimedSeq = (await otherChanges(db.connectionString, seenSeq)).maxSeq;
          const changed = await request(emulators, { mutate: ++mutation }, (m) =>
            (m as { mutated?: number; changed?: number }).mutated === mutation
              ? (m as { changed: number }).changed
              : undefined,
          );
          const result = await tick();
          if (t >= warmup) results.push(result);
          flips = changed;
        }
        const tickMs = median(results.map((r) => r.ms));
        const perS = perSecond(resources, tickMs);
        baseline ??= perS;
        figures[`${label}: fleet tick ms (median)`] = round(tickMs);
        figures[`${label}: resources/s`] = perS;
        figures[`${label}: longest queue wait ms (median tick)`] = Math.round(median(results.map((r) => r.waitMs)));
        figures[`${label}: longest job run ms (median tick)`] = Math.round(median(results.map((r) => r.processMs)));
        figures[`${label}: speed-up vs ${counts[0]} worker${counts[0] === 1 ? '' : 's'}`] = round(perS / baseline, 2);
        figures[`${label}: status changes per tick`] = Math.round(median(results.map((r) => r.changes)));
        figures[`${label}: rows written per tick`] = Math.round(median(results.map((r) => r.rows)));
        figures[`${label}: jobs that wrote nothing (timed ticks)`] = results.reduce((sum, r) => sum + r.skipped, 0);
        figures[`${label}: failed jobs`] = results.reduce((sum, r) => sum + r.failed, 0);
        const other = await otherChanges(db.connectionString, firstTimedSeq);
        seenSeq = other.maxSeq;
        // Counted in the database: in watch mode live snapshots record most flips before the tick's job runs.
        figures[`${label}: status changes recorded per tick (database)`] = round(other.total / Math.max(1, ticks), 1);
        figures[`${label}: changes besides the flips (timed ticks)`] = other.summary;
        const watches = await countOpenWatches(emulators, live);
        baselineWatches ??= watches.total;
        figures[`${label}: open watches (total)`] = watches.total;
        figures[`${label}: open watches vs ${counts[0]} worker${counts[0] === 1 ? '' : 's'}`] =
          baselineWatches > 0 ? round(watches.total / baselineWatches, 2) : 'no watches';
        figures[`${label}: clusters watched by more than one worker`] = watches.multiple;
        if (live) figures[`${label}: clusters not watched`] = watches.unwatched;
        // A worker writing a heap snapshot (BENCH_HEAP_SNAPSHOT_DIR) answers once it is written.
        const reportMs = process.env.BENCH_HEAP_SNAPSHOT_DIR === undefined ? 30_000 : 600_000;
        const reports = await Promise.all(
          workers.map((w) =>
            request(
              w.child,
              { report: true },
              (m) => ((m as { rss?: number }).rss !== undefined ? (m as ScaleOutWorkerReport) : undefined),
              reportMs,
            ),
          ),
        );
        const owned = reports.map((r) => r.owned);
        figures[`${label}: clusters owned per worker (min-max)`] = `${Math.min(...owned)}-${Math.max(...owned)}`;
        figures[`${label}: RSS MB per worker (max)`] = Math.round(Math.max(...reports.map((r) => r.rss)) / MB);
        // The first worker up holds every cluster until the others join; its RSS may keep that high-water mark.
        figures[`${label}: RSS MB per worker (min)`] = Math.round(Math.min(...reports.map((r) => r.rss)) / MB);
        figures[`${label}: RSS MB (sum over workers)`] = Math.round(reports.reduce((sum, r) => sum + r.rss, 0) / MB);
        const rssSum = reports.reduce((sum, r) => sum + r.rss, 0) / MB;
        oneWorkerRss ??= n === 1 ? rssSum : undefined;
        // If each worker is a fixed base plus 1/N of the clusters' share, N workers sum to N bases plus one share.
        if (n >= 2 && oneWorkerRss !== undefined) {
          const base = (rssSum - oneWorkerRss) / (n - 1);
          figures[`${label}: implied fixed base per worker / clusters' share MB`] =
            `${Math.round(base)} / ${Math.round(oneWorkerRss - base)}`;
        }
        const after = reports.every((r) => r.collected) ? 'after GC' : 'no GC';
        figures[`${label}: heap MB per worker, ${after} (max)`] = round(
          Math.max(...reports.map((r) => r.heapUsed)) / MB,
          1,
        );
        figures[`${label}: heap MB, ${after} (sum over workers)`] = round(
          reports.reduce((sum, r) => sum + r.heapUsed, 0) / MB,
          1,
        );
        // Where RSS goes besides the live heap: heap V8 keeps reserved, and Buffers and WebAssembly memories outside it.
        figures[`${label}: heap reserved / external / array buffers MB (max worker)`] = (() => {
          const top = reports.reduce((a, b) => (b.rss > a.rss ? b : a));
          return `${Math.round(top.heapTotal / MB)} / ${Math.round(top.external / MB)} / ${Math.round(top.arrayBuffers / MB)}`;
        })();
        const mapped = reports.reduce((a, b) => (b.rss > a.rss ? b : a)).rssByMapping;
        if (mapped !== undefined) {
          figures[`${label}: RSS by mapping MB (max worker): anonymous / malloc brk / node executable / other files`] =
            `${Math.round(mapped.anonymous / MB)} / ${Math.round(mapped.mallocBrk / MB)} / ${Math.round(mapped.executable / MB)} / ${Math.round(mapped.otherFiles / MB)}`;
        }
        if (options.kill !== false && n >= 2) {
          const victim = workers[n - 1] as ReadyChild<WorkerReady>;
          const killed = await killOneWorker({
            redis,
            ownershipPrefix: owners,
            connectionString: db.connectionString,
            clustersChild: emulators,
            shape,
            clusters: names,
            victim: { child: victim.child, instance: victim.ready.instance },
            survivors: workers.slice(0, n - 1).map((w) => w.ready.instance),
            lastMutation: mutation,
            share: FLIP_SHARE,
            live,
            leaseMs,
            timeoutMs: 3 * leaseMs + 60_000,
            fleetTick: tick,
          });
          figures[`${label}: clusters of the killed worker`] = killed.clusters;
          figures[`${label}: takeover after kill -9 (s)`] = round(killed.takeoverMs / 1000, 1);
          figures[`${label}: changes made during takeover missing from the change log`] = killed.missing;
          figures[`${label}: of those changes, recorded by the new owner's first snapshot (before a tick)`] =
            killed.recordedByNewOwner;
          const during = await otherChanges(db.connectionString, seenSeq);
          seenSeq = during.maxSeq;
          figures[
            `${label}: changes besides the flips (kill -9 to recovery, with the ${killed.clusters} made Failed and back)`
          ] = during.summary;
          if (live) {
            figures[`${label}: after the takeover: clusters watched by more than one worker`] = killed.watches.multiple;
            figures[`${label}: after the takeover: clusters not watched`] = killed.watches.unwatched;
          }
        }
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
      phasesPerNamespace: readNumberFlag('phases-per-namespace'),
      ticks: readNumberFlag('ticks'),
      warmupTicks: readNumberFlag('warmup-ticks'),
      workers: workersIndex === -1 ? undefined : process.argv[workersIndex + 1],
      concurrency: readNumberFlag('concurrency'),
      tickTimeoutMs: readNumberFlag('tick-timeout-ms'),
      live: process.argv.includes('--live'),
      debounceMs: readNumberFlag('debounce-ms'),
      kill: !process.argv.includes('--no-kill'),
      heartbeatMs: readNumberFlag('heartbeat-ms'),
      leaseMs: readNumberFlag('lease-ms'),
      compiled: process.argv.includes('--compiled'),
      asDeployed: process.argv.includes('--as-deployed'),
    }),
  );
}
