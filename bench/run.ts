/**
 * `npm run bench`: runs every benchmark in the registry below, baselines first, each in its own
 * child process; prints one table per benchmark with each figure, its ratio to a baseline measured
 * in the same run and what it means for a fleet; writes bench/results/latest.json.
 *
 *   npm run bench
 *   npm run bench -- --size small
 *   npm run bench -- --only status,read-path --read-path.clusters 4
 *   npm run bench -- --list
 *
 * A module that does not exist yet is reported as "not built yet"; one that throws or hangs is
 * reported with its error and the others still run. Nothing here asserts on time.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseHarnessArgs, UsageError } from './lib/args.ts';
import { describeMachine } from './lib/machine.ts';
import { renderMarkdown, renderText } from './lib/report.ts';
import type { RunReport } from './lib/report.ts';
import { entryPath, runEntries } from './lib/runner.ts';
import { nowMs, round } from './lib/stats.ts';
import type { BenchEntry, Figures } from './lib/types.ts';

/** The fleet the "what it means" figures are computed for. */
const FLEET = 20_000;
/** Snapshot ticks per minute at phaselog's default 30 s interval. */
const TICKS_PER_MINUTE = 2;

/** `figure` as a number, or undefined. */
function num(figures: Figures, figure: string): number | undefined {
  const v = figures[figure];
  return typeof v === 'number' && v > 0 ? v : undefined;
}

/** Milliseconds to handle `count` items `times` times at `figure` items per second. */
function msFor(count: number, figure: string, times = 1): (f: Figures) => number | undefined {
  return (f) => {
    const rate = num(f, figure);
    return rate === undefined ? undefined : ((count * times) / rate) * 1000;
  };
}

/**
 * Every benchmark the harness knows about, in run order (baselines first). Add a scenario here; a
 * missing module is fine until it lands.
 */
export const REGISTRY: BenchEntry[] = [
  {
    id: 'json-parse',
    kind: 'baseline',
    file: 'baselines/json-parse.ts',
    title: 'JSON.parse of typical ~4 KB Kubernetes objects',
    refresh: true,
    options: { small: { count: 5_000, rounds: 3 }, default: { count: 20_000, rounds: 5 } },
  },
  {
    id: 'postgres-write',
    kind: 'baseline',
    file: 'baselines/postgres-write.ts',
    title: 'Postgres writes of a 6-column row with 2 indexes (scratch database)',
    options: { small: { rows: 20_000 }, default: { rows: 200_000 } },
  },
  {
    id: 'http-apollo',
    kind: 'baseline',
    file: 'baselines/http-apollo.ts',
    title: 'bare node:http and bare Apollo Server 5 `{ __typename }`, closed loop, 16 keep-alive clients',
    options: { small: { requests: 3_000 }, default: { requests: 20_000 } },
  },
  {
    id: 'redis-pubsub',
    kind: 'baseline',
    file: 'baselines/redis-pubsub.ts',
    title: 'raw Redis pub/sub (ioredis): round trip and pipelined throughput',
    options: { small: { roundTrips: 1_000, messages: 20_000 }, default: { roundTrips: 5_000, messages: 200_000 } },
  },
  {
    id: 'status',
    kind: 'scenario',
    file: 'status.ts',
    title: 'status engine (kstatus rules) over a realistic object mix',
    options: { small: { count: 10_000, rounds: 3 }, default: { count: 100_000, rounds: 5 } },
    compare: [
      {
        figure: 'computeStatus evaluations/s',
        baseline: 'json-parse',
        baselineFigure: 'objects/s',
        label: '× JSON.parse objects/s',
      },
    ],
    derive: [
      {
        name: `worker ms per pass over ${FLEET.toLocaleString('en-US')} resources`,
        compute: msFor(FLEET, 'computeStatus evaluations/s'),
      },
      {
        name: `worker ms per minute, ${FLEET.toLocaleString('en-US')} resources at ${TICKS_PER_MINUTE} ticks/min`,
        compute: msFor(FLEET, 'computeStatus evaluations/s', TICKS_PER_MINUTE),
      },
    ],
  },
  {
    id: 'custom-health',
    kind: 'scenario',
    file: 'custom-health.ts',
    title: 'custom health checks: Flux CEL and Argo CD Lua on a Kafka resource',
    options: { small: { seconds: 0.5 }, default: { seconds: 2 } },
    compare: [
      {
        figure: 'celEvaluationsPerSecond',
        baseline: 'json-parse',
        baselineFigure: 'objects/s',
        label: '× JSON.parse objects/s',
      },
      {
        figure: 'luaEvaluationsPerSecond',
        baseline: 'json-parse',
        baselineFigure: 'objects/s',
        label: '× JSON.parse objects/s',
      },
    ],
    derive: [
      {
        name: 'CEL worker ms per pass over 1,000 custom-checked resources',
        compute: msFor(1_000, 'celEvaluationsPerSecond'),
      },
      {
        name: 'Lua worker ms per pass over 1,000 custom-checked resources',
        compute: msFor(1_000, 'luaEvaluationsPerSecond'),
      },
    ],
  },
  {
    id: 'http-checks',
    kind: 'scenario',
    file: 'http-checks.ts',
    title:
      'http checks: one check over every phase of a cluster, one batch per tick, against a local endpoint in another process',
    options: { small: { phases: 200, ticks: 2 }, default: { phases: 1_000, ticks: 5 } },
  },
  {
    id: 'read-path',
    kind: 'scenario',
    file: 'read-path.ts',
    title: 'read path against the emulator over HTTP: batched LIST vs one GET per object',
    options: {
      small: { clusters: 2, resources: 500, ticks: 2 },
      default: { clusters: 10, resources: 2_000, ticks: 3 },
    },
    compare: [
      {
        figure: 'resources/s (batched LIST)',
        baseline: 'json-parse',
        baselineFigure: 'objects/s',
        label: '× JSON.parse objects/s',
      },
      {
        figure: 'one cluster, per-object GETs: resources/s',
        baseline: 'http-apollo',
        baselineFigure: 'node:http requests/s',
        label: '× bare node:http requests/s',
      },
    ],
    derive: [
      {
        name: `ms to read ${FLEET.toLocaleString('en-US')} resources, batched LIST`,
        compute: msFor(FLEET, 'resources/s (batched LIST)'),
      },
      {
        name: `ms to read ${FLEET.toLocaleString('en-US')} resources, one GET each`,
        compute: msFor(FLEET, 'one cluster, per-object GETs: resources/s'),
      },
    ],
  },
  {
    id: 'emulator',
    kind: 'scenario',
    file: 'emulator.ts',
    title:
      'the Kubernetes API emulator itself (a test instrument, not phaselog): fill, LIST, paging, GETs, watch fan-out',
    options: {
      small: { objects: 10_000, list: 500, repeats: 3 },
      default: { objects: 100_000, list: 2_000, repeats: 7 },
    },
  },
  {
    id: 'snapshot',
    kind: 'scenario',
    file: 'snapshot.ts',
    title: 'snapshot write path in one process: observe + one transaction per cluster + publish, at 0/1/10% change',
    options: {
      small: { clusters: 2, phases: 10, resources: 10, ticks: 1 },
      default: { clusters: 10, phases: 100, resources: 20, ticks: 3 },
    },
    compare: [
      {
        figure: 'resources/s, 1% changed',
        baseline: 'json-parse',
        baselineFigure: 'objects/s',
        label: '× JSON.parse objects/s',
      },
      {
        figure: 'history bytes per 1,000 status changes',
        baseline: 'postgres-write',
        baselineFigure: 'bytes per row (heap + 2 indexes)',
        label: '× one raw 6-column row, per change',
        scale: 0.001,
      },
    ],
    derive: [
      {
        name: `worker ms per minute, ${FLEET.toLocaleString('en-US')} resources at ${TICKS_PER_MINUTE} ticks/min, 1% changing`,
        compute: msFor(FLEET, 'resources/s, 1% changed', TICKS_PER_MINUTE),
      },
      {
        name: `% of each minute busy, ${FLEET.toLocaleString('en-US')} resources at ${TICKS_PER_MINUTE} ticks/min, 1% changing`,
        compute: (f) => {
          const ms = msFor(FLEET, 'resources/s, 1% changed', TICKS_PER_MINUTE)(f);
          return ms === undefined ? undefined : (ms / 60_000) * 100;
        },
      },
      {
        name: 'history MB per 1,000,000 status changes',
        compute: (f) => {
          const b = num(f, 'history bytes per 1,000 status changes');
          return b === undefined ? undefined : (b * 1_000) / 1e6;
        },
      },
    ],
    timeoutMs: 360_000,
  },
  {
    id: 'ingest',
    kind: 'scenario',
    file: 'ingest.ts',
    title:
      'history ingest: snapshots in which every resource of one cluster (10,000 at default size) changes status (Recorder.record: load, plan, one transaction), raw INSERT batches measured in the same process',
    options: {
      small: { phases: 20, resources: 50, rounds: 2, baselineRows: 20_000 },
      default: { phases: 200, resources: 50, rounds: 5, baselineRows: 200_000 },
    },
    compare: [
      {
        figure: 'status changes/s',
        baseline: 'postgres-write',
        baselineFigure: 'INSERT 1,000-row batches rows/s',
        label: '× raw INSERT 1,000-row batches rows/s (baseline run)',
      },
    ],
  },
  {
    id: 'ui-board',
    kind: 'scenario',
    file: 'ui-board.ts',
    title:
      'Web UI fleet board in headless Chromium over a seeded fleet (each phase name in 10 clusters, API server in its own process): navigation to matrix drawn, the board query and the render apart; board script size gzipped; on an open board, commit -> cell latency of 100 changes one at a time, and long tasks while 100 changes/s stream in',
    options: {
      small: { phases: 200, loads: 3, changes: 20, streamRate: 50, streamSeconds: 2 },
      default: { phases: 1_000, loads: 7, changes: 100, streamRate: 100, streamSeconds: 5 },
    },
    timeoutMs: 300_000,
  },
  {
    id: 'metrics',
    kind: 'scenario',
    file: 'metrics.ts',
    title:
      'GET /metrics over HTTP at 50,000 phases in 10 clusters (phase state series written by PostgreSQL in two statements at once; gzipped when asked, as Prometheus asks), half the phases InProgress and then all Current: body size (plain and as sent gzipped), scrape time one at a time (with and without gzip), 4 concurrent scrapes (coalesced into one read)',
    options: { small: { phases: 2_000, scrapes: 5 }, default: { phases: 50_000, scrapes: 20 } },
    timeoutMs: 300_000,
  },
  {
    id: 'graphql-api',
    kind: 'scenario',
    file: 'graphql-api.ts',
    title:
      'GraphQL API over a history of 1.1M status changes (1,000 phases x 10 resources x 100 changes, with their intervals), API server in its own process, read token; 1 client and 16 clients, bare Apollo measured in the same run',
    options: {
      small: { phases: 100, resources: 10, intervals: 20, requests: 300, concurrency: 16 },
      default: { phases: 1_000, resources: 10, intervals: 100, requests: 3_000, concurrency: 16 },
    },
    compare: [
      {
        figure: 'history page (50 intervals), 16 clients: requests/s',
        baseline: 'http-apollo',
        baselineFigure: 'Apollo requests/s',
        label: '× bare Apollo requests/s (baseline run)',
      },
      {
        figure: 'gate (10m), 16 clients: requests/s',
        baseline: 'http-apollo',
        baselineFigure: 'Apollo requests/s',
        label: '× bare Apollo requests/s (baseline run)',
      },
    ],
    timeoutMs: 420_000,
  },
  {
    id: 'subscriptions',
    kind: 'scenario',
    file: 'subscriptions.ts',
    title:
      'graphql-ws subscription fan-out: one published status change to 1,000 phaseStatusChanged subscribers (API server in its own process)',
    options: { small: { clients: 50, events: 5 }, default: { clients: 1_000, events: 20 } },
    compare: [
      {
        figure: 'publish -> client p50 ms (median change)',
        baseline: 'redis-pubsub',
        baselineFigure: 'publish -> receive p50 ms',
        label: '× raw Redis publish -> receive p50',
      },
    ],
  },
  {
    id: 'watch-latency',
    kind: 'scenario',
    file: 'watch-latency.ts',
    title:
      'a Deployment status change in a cluster to the event at a Redis subscriber: watch mode (watch cache, debounced job, snapshot, commit, publish) and poll mode (next scheduled tick)',
    options: {
      small: {
        phases: 4,
        resourcesPerPhase: 10,
        changes: 20,
        pollChanges: 5,
        pollIntervalMs: 1000,
        tickResources: 2_000,
      },
      default: {
        phases: 40,
        resourcesPerPhase: 50,
        changes: 200,
        pollChanges: 20,
        pollIntervalMs: 2000,
        tickResources: 20_000,
      },
    },
    timeoutMs: 600_000,
    compare: [
      {
        figure: 'p50 beyond the debounce ms',
        baseline: 'redis-pubsub',
        baselineFigure: 'publish -> receive p50 ms',
        label: '× raw Redis publish -> receive p50',
      },
    ],
  },
  {
    id: 'worker-rss',
    kind: 'scenario',
    file: 'worker-rss.ts',
    title:
      'worker memory per 10,000 watched resources: the watch caches alone, and a worker holding a cluster whose objects are phase members (caches, status memos, kept state), vs the same objects in a plain Map',
    options: { small: { resources: 2_000 }, default: { resources: 40_000 } },
    // 5 watch probes, 3 worker probes (two snapshots of 40,000 objects each) and a plain Map: ~5 minutes here.
    timeoutMs: 480_000,
    derive: [
      {
        name: `worker RSS MB watching ${FLEET.toLocaleString('en-US')} resources (loaded process + caches)`,
        compute: (f) => {
          const base = num(f, 'worker RSS before watching MB');
          const per10k = num(f, 'watch caches: RSS MB per 10k resources');
          return base === undefined || per10k === undefined ? undefined : base + (per10k * FLEET) / 10_000;
        },
      },
    ],
  },
  {
    id: 'tree-pods',
    kind: 'scenario',
    file: 'tree-pods.ts',
    title:
      'resource trees: the JS heap a worker adds to watch Pods and ReplicaSets for trees (status views, no revisions) per 10,000 Pods, the time to build every tree, and the bytes published to Redis',
    options: { small: { pods: 2_000, probes: 1 }, default: { pods: 20_000, probes: 3 } },
    timeoutMs: 300_000,
  },
  {
    id: 'scale-out',
    kind: 'scenario',
    file: 'scale-out.ts',
    title:
      'N snapshot worker processes (startWorkers) sharing M emulated clusters through BullMQ, end to end into Postgres; each cluster owned (and with live: true watched) by one process; then one killed with SIGKILL and its clusters taken over',
    options: {
      small: { clusters: 2, phases: 5, resourcesPerPhase: 10, ticks: 2, warmupTicks: 1, workers: [1, 2] },
      default: { clusters: 8, phases: 20, resourcesPerPhase: 25, ticks: 5, warmupTicks: 3, workers: [1, 2, 4] },
    },
    compare: [
      {
        figure: '1 worker: resources/s',
        baseline: 'json-parse',
        baselineFigure: 'objects/s',
        label: '× JSON.parse objects/s',
      },
    ],
    derive: [
      {
        name: `1 worker: ms per minute for ${FLEET.toLocaleString('en-US')} resources at ${TICKS_PER_MINUTE} ticks/min (end to end)`,
        compute: msFor(FLEET, '1 worker: resources/s', TICKS_PER_MINUTE),
      },
      {
        name: `1 worker: % of each minute busy, ${FLEET.toLocaleString('en-US')} resources at ${TICKS_PER_MINUTE} ticks/min`,
        compute: (f) => {
          const ms = msFor(FLEET, '1 worker: resources/s', TICKS_PER_MINUTE)(f);
          return ms === undefined ? undefined : (ms / 60_000) * 100;
        },
      },
    ],
    timeoutMs: 900_000,
  },
  {
    id: 'cluster-footprint',
    kind: 'scenario',
    file: 'cluster-footprint.ts',
    title:
      'fixed memory per idle cluster in a worker process (startWorkers, HTTPS emulators with a CA each): RSS and JS heap per cluster, poll and watch mode',
    options: { small: { clusters: 20, snapshots: 1 }, default: { clusters: 100, snapshots: 2 } },
    // 6 worker processes (no cluster, a tenth, all; poll and watch), each idling 6 s before measuring.
    timeoutMs: 480_000,
    derive: [
      // RSS moves by tens of MB between processes (malloc, V8 page release): at the small size the per-cluster RSS is noise, the heap is not.
      {
        name: 'watch: JS heap MB for 1,000 idle clusters',
        compute: (f) => {
          const per = num(f, 'watch: JS heap MB per cluster');
          return per === undefined ? undefined : per * 1000;
        },
      },
      {
        name: 'watch: RSS MB for 1,000 idle clusters',
        compute: (f) => {
          const per = num(f, 'watch: RSS MB per cluster');
          return per === undefined ? undefined : per * 1000;
        },
      },
    ],
  },
  {
    id: 'start-time',
    kind: 'scenario',
    file: 'start-time.ts',
    title:
      '`npm start` to GET /healthz 200 with the demo: first in a copy of the project as a fresh clone has it after `npm install` (no dist/, no .phaselog/: compile, initdb, migrations, UI bundle), then restarts with nothing changed',
    options: { small: { starts: 1 }, default: { starts: 3 } },
    timeoutMs: 600_000,
  },
];

/** The entries to run: all, or the `--only` ones plus the baselines they compare with. */
function selectEntries(only: string[] | undefined, withBaselines: boolean): BenchEntry[] {
  if (only === undefined) return REGISTRY;
  const unknown = only.filter((id) => !REGISTRY.some((e) => e.id === id));
  if (unknown.length > 0)
    throw new UsageError(`unknown benchmark ${unknown.join(', ')}; known: ${REGISTRY.map((e) => e.id).join(', ')}`);
  const wanted = new Set(only);
  if (withBaselines)
    for (const e of REGISTRY) if (wanted.has(e.id)) for (const c of e.compare ?? []) wanted.add(c.baseline);
  return REGISTRY.filter((e) => wanted.has(e.id));
}

async function main(): Promise<void> {
  const args = parseHarnessArgs(process.argv.slice(2));
  if (args.list) {
    for (const e of REGISTRY)
      console.log(
        `${e.id.padEnd(15)} ${e.kind.padEnd(9)} ${existsSync(entryPath(e)) ? 'present      ' : 'not built yet'} bench/${e.file}`,
      );
    return;
  }
  const entries = selectEntries(args.only, args.baselines);
  const date = new Date().toISOString();
  const machine = describeMachine();
  const started = nowMs();
  const results = await runEntries(entries, {
    size: args.size,
    overrides: args.overrides,
    onProgress: (entry, result, note) => {
      if (result === undefined) process.stderr.write(`▸ ${entry.id}${note ? ` (${note})` : ''} … `);
      else process.stderr.write(`${result.status}${result.status === 'ok' ? ` (${result.seconds} s)` : ''}\n`);
    },
  });
  const report: RunReport = {
    date,
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
    size: args.size,
    machine,
    totalSeconds: round((nowMs() - started) / 1000),
    loadAverageEnd: round(loadavg()[0] ?? 0, 2),
    entries: results,
  };
  const out = args.out ?? fileURLToPath(new URL('./results/latest.json', import.meta.url));
  mkdirSync(dirname(out), { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(out, json);
  // A dated copy beside it keeps earlier runs for comparison (bench/results/*.json is git-ignored).
  if (args.out === undefined)
    writeFileSync(out.replace(/latest\.json$/, `run-${date.replace(/[:.]/g, '-')}.json`), json);
  console.log(args.markdown ? renderMarkdown(report) : renderText(report));
  console.log(`results written to ${relative(process.cwd(), out) || out}`);
  if (results.some((r) => r.status === 'error' || r.status === 'timed out')) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`bench: ${error.message}`);
    process.exitCode = 2;
  } else throw error;
}
