/**
 * The snapshot write path end to end: discover + batched read + statuses (observeCluster) against
 * emulated clusters over real HTTP, then the one-transaction write into a scratch Postgres and
 * Redis publishing (snapshotCluster). Prints, for a fleet of clusters x phases x resources:
 * - fleet tick wall time for the first (recording) tick and for ticks with 0 %, 1 % and 10 % of
 *   resources changing status;
 * - rows added per tick (all history tables) at each change rate, and rows written (inserted or
 *   updated) as the store counts them;
 * - bytes per 1,000 status changes (pg_total_relation_size growth of every history table, details,
 *   resources, phases and clusters included, over the changing ticks), and the tables it went to.
 * The emulators run in this process, so their CPU is part of the tick time (as it is not in
 * production); figures are medians over `ticks` ticks. Nothing here asserts on time.
 *
 *   node --import tsx bench/snapshot.ts [--clusters 10] [--phases 100] [--resources 20] [--ticks 3] [--concurrency 4]
 */
import { pino } from 'pino';
import { startEmulator, type Emulator } from '../src/emulator/index.ts';
import { createClusterClient, type ClusterClient } from '../src/kube/cluster-client.ts';
import { loadKubeconfigClusters } from '../src/kube/clusters.ts';
import { runLimited } from '../src/kube/read-objects.ts';
import { createChangePublisher } from '../src/pubsub/change-publisher.ts';
import { createHolderConditions } from '../src/services/record-holder-conditions.ts';
import { createConditionStore } from '../src/store/condition-store.ts';
import { snapshotCluster, type SnapshotDeps, type SnapshotOutcome } from '../src/snapshot/snapshot-cluster.ts';
import { createRecorder } from '../src/snapshot/record.ts';
import { ObservationMemos } from '../src/snapshot/memos.ts';
import { createSnapshotStore } from '../src/store/snapshot-store.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { createDb, type Db } from '../src/store/prisma.ts';
import { measureStorage } from '../src/store/retention.ts';
import {
  applyFleet,
  deploymentRef,
  readyStatus,
  rollingStatus,
  type FleetShape,
} from '../test/integration/snapshot/fleet.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { benchPrefix, BENCH_REDIS_URL } from './lib/redis-scratch.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, nowMs, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';

/** Options of {@link run}. */
export interface SnapshotBenchOptions {
  /** @default 10 */
  clusters?: number;
  /** Phases per cluster. @default 100 */
  phases?: number;
  /** Resources per phase. @default 20 */
  resources?: number;
  /** Timed ticks per change rate; the median is reported. @default 3 */
  ticks?: number;
  /** Clusters snapshotted at once (as a worker's concurrency). @default 4 */
  concurrency?: number;
  /** Print the table. @default true */
  print?: boolean;
}

interface Fleet {
  shape: FleetShape;
  clusters: { emulator: Emulator; client: ClusterClient }[];
}

async function startFleet(count: number, shape: FleetShape): Promise<Fleet> {
  const clusters = [];
  for (let i = 0; i < count; i += 1) {
    const emulator = await startEmulator({ port: 0, requestLogSize: 1000 });
    applyFleet(emulator, shape);
    const handle = loadKubeconfigClusters({ yaml: emulator.kubeconfig(), name: `bench-${i}` }).clusters[0];
    if (handle === undefined) throw new Error('emulator kubeconfig did not load');
    clusters.push({ emulator, client: createClusterClient(handle) });
  }
  return { shape, clusters };
}

async function totalRows(db: Db): Promise<{ rows: number; historyBytes: number; bytes: Map<string, number> }> {
  const storage = await measureStorage(db);
  return {
    rows: storage.reduce((sum, t) => sum + t.rows, 0),
    historyBytes: storage.reduce((sum, t) => sum + t.bytes, 0),
    bytes: new Map(storage.map((t) => [t.table, t.bytes])),
  };
}

/** Flips `rate` of each cluster's resources between ready and rolling (a status change each). */
function changeStatuses(fleet: Fleet, rate: number, round: number): void {
  if (rate === 0) return;
  const { phases, resourcesPerPhase } = fleet.shape;
  const total = phases * resourcesPerPhase;
  const count = Math.max(1, Math.round(total * rate));
  const stride = Math.max(1, Math.floor(total / count));
  for (const { emulator } of fleet.clusters) {
    for (let i = 0; i < count; i += 1) {
      const index = (i * stride + round) % total;
      const p = Math.floor(index / resourcesPerPhase);
      const r = index % resourcesPerPhase;
      const ref = deploymentRef(p, r, fleet.shape);
      const current = emulator.get(ref)?.status as { updatedReplicas?: number } | undefined;
      emulator.patchStatus(ref, current?.updatedReplicas === 2 ? rollingStatus() : readyStatus());
    }
  }
}

async function tick(
  fleet: Fleet,
  deps: SnapshotDeps,
  concurrency: number,
  at: number,
): Promise<{ ms: number; outcomes: SnapshotOutcome[] }> {
  const outcomes: SnapshotOutcome[] = [];
  const start = nowMs();
  await runLimited(fleet.clusters, concurrency, async ({ client }) => {
    outcomes.push(await snapshotCluster(deps, client, new Date(at)));
  });
  return { ms: nowMs() - start, outcomes };
}

/** Runs the benchmark and returns its figures. */
export async function run(options: SnapshotBenchOptions = {}): Promise<Figures> {
  const shape: FleetShape = { phases: options.phases ?? 100, resourcesPerPhase: options.resources ?? 20 };
  const clusterCount = options.clusters ?? 10;
  const ticks = options.ticks ?? 3;
  const concurrency = options.concurrency ?? 4;
  const scratch = await createScratchDatabase('snapshot');
  const fleet = await startFleet(clusterCount, shape);
  let db: Db | undefined;
  const publisher = createChangePublisher(BENCH_REDIS_URL, { prefix: benchPrefix('snapshot') });
  try {
    await migrateDatabase(scratch.connectionString);
    db = createDb(scratch.connectionString, { poolSize: concurrency + 1 });
    // As a worker: the inventory holders' conditions (here the applier's kpt/Applied) are recorded after each snapshot.
    const holders = createHolderConditions(createConditionStore(db));
    const deps: SnapshotDeps = {
      recorder: createRecorder(createSnapshotStore(db)),
      publisher,
      log: pino({ level: 'silent' }),
      observe: { memos: new ObservationMemos() },
      afterRecord: (observation) => holders.afterSnapshot(observation, 30_000),
    };
    let at = Date.now();
    const resources = clusterCount * shape.phases * shape.resourcesPerPhase;
    const figures: Figures = {
      fleet: `${clusterCount} clusters x ${shape.phases} phases x ${shape.resourcesPerPhase} resources = ${resources.toLocaleString('en-US')}`,
    };
    const first = await tick(fleet, deps, concurrency, (at += 1000));
    figures['first tick ms (records everything)'] = round(first.ms);
    let round_ = 0;
    let changedBytes = 0;
    let changes = 0;
    const byTable = new Map<string, number>();
    for (const rate of [0, 0.01, 0.1]) {
      const times: number[] = [];
      const added: number[] = [];
      const written: number[] = [];
      for (let i = 0; i < ticks; i += 1) {
        round_ += 1;
        changeStatuses(fleet, rate, round_);
        const before = await totalRows(db);
        const result = await tick(fleet, deps, concurrency, (at += 1000));
        const after = await totalRows(db);
        times.push(result.ms);
        added.push(after.rows - before.rows);
        written.push(result.outcomes.reduce((sum, o) => sum + o.rows, 0));
        if (rate > 0) {
          changedBytes += after.historyBytes - before.historyBytes;
          for (const [table, bytes] of after.bytes)
            byTable.set(table, (byTable.get(table) ?? 0) + bytes - (before.bytes.get(table) ?? 0));
          changes += result.outcomes.reduce((sum, o) => sum + o.changes, 0);
        }
      }
      const label = `${rate * 100}% changed`;
      figures[`tick ms, ${label}`] = round(median(times));
      figures[`rows added per tick, ${label}`] = median(added);
      figures[`rows written per tick, ${label}`] = median(written);
      figures[`resources/s, ${label}`] = Math.round(resources / (median(times) / 1000));
    }
    figures['status changes recorded (1% + 10% ticks)'] = changes;
    figures['history bytes per 1,000 status changes'] =
      changes > 0 ? Math.round((changedBytes / changes) * 1000) : 'n/a';
    const grew = [...byTable].filter(([, bytes]) => bytes !== 0).sort((a, b) => b[1] - a[1]);
    figures['  of which (bytes per change)'] =
      changes > 0 ? grew.map(([table, bytes]) => `${table} ${Math.round(bytes / changes)}`).join(', ') : 'n/a';
    // Closing an interval should be a HOT update (same page, no index entry); stats reach pg_stat_* within a second or so.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const hot = await db.$queryRaw<{ relname: string; upd: bigint; hot: bigint }[]>`
      SELECT relname, n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables
      WHERE relname IN ('ResourceStatusInterval', 'PhaseStatusInterval', 'Phase', 'Cluster') ORDER BY relname`;
    figures['HOT updates / all updates'] = hot.map((t) => `${t.relname} ${t.hot}/${t.upd}`).join(', ');
    if (options.print !== false)
      printFigures('snapshot write path (observe + one transaction per cluster + publish)', figures);
    return figures;
  } finally {
    await publisher.close();
    await db?.$disconnect();
    for (const { client, emulator } of fleet.clusters) {
      client.close();
      await emulator.close();
    }
    await scratch.drop();
  }
}

if (isMain(import.meta.url)) {
  await run({
    clusters: readNumberFlag('clusters'),
    phases: readNumberFlag('phases'),
    resources: readNumberFlag('resources'),
    ticks: readNumberFlag('ticks'),
    concurrency: readNumberFlag('concurrency'),
  });
}
