/**
 * Ingest rate of the history write path (issue #6: changes ingested at >= half the rate of raw
 * 1,000-row INSERT batches). One emulated cluster (in this process) of `phases` x `resources`
 * Deployments; every round flips every Deployment between rolling and ready, so one snapshot holds
 * `phases x resources` resource status changes plus the phases' own. The cluster is observed
 * first (not timed); the timed part is `Recorder.record` (src/snapshot/record.ts): lock, load current state, plan, and the
 * one transaction that ends intervals, opens statuses, stores details and revisions and appends
 * the change log. The baseline (the `postgres-write` baseline's multi-row INSERT of 1,000-row
 * batches) is measured in the same process just before, against the same Postgres. It also prints
 * the heap a worker holds for the cluster's state it keeps between snapshots.
 *
 *   node --import tsx bench/ingest.ts [--phases 200] [--resources 50] [--rounds 5] [--baseline-rows 200000]
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { planSnapshot } from '../src/history/plan-snapshot.ts';
import type { ClusterObservation, StoredClusterState } from '../src/history/types.ts';
import { startEmulator } from '../src/emulator/index.ts';
import { createClusterClient } from '../src/kube/cluster-client.ts';
import { loadKubeconfigClusters } from '../src/kube/clusters.ts';
import { observeCluster } from '../src/snapshot/observe.ts';
import { ObservationMemos } from '../src/snapshot/memos.ts';
import { loadClusterState, lockCluster } from '../src/store/history-state.ts';
import { createRecorder } from '../src/snapshot/record.ts';
import { createSnapshotStore } from '../src/store/snapshot-store.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { createDb, type Db } from '../src/store/prisma.ts';
import { measureStorage } from '../src/store/retention.ts';
import { withSqlTransaction } from '../src/store/sql-transaction.ts';
import {
  applyFleet,
  deploymentRef,
  readyStatus,
  rollingStatus,
  type FleetShape,
} from '../test/integration/snapshot/fleet.ts';
import { run as runPostgresBaseline } from './baselines/postgres-write.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, nowMs, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';

/** Options of {@link run}. */
export interface IngestBenchOptions {
  /** @default 200 */
  phases?: number;
  /** Deployments per phase. @default 50 */
  resources?: number;
  /** Timed snapshots, each changing every resource; the median is reported. @default 5 */
  rounds?: number;
  /** Rows of the in-run baseline. @default 200000 */
  baselineRows?: number;
}

async function countRows(db: Db): Promise<number> {
  return (await measureStorage(db)).reduce((sum, t) => sum + t.rows, 0);
}

/** Measures the baseline, then `rounds` snapshots in which every resource changes status. */
export async function run(options: IngestBenchOptions = {}): Promise<Figures> {
  const shape: FleetShape = { phases: options.phases ?? 200, resourcesPerPhase: options.resources ?? 50 };
  const rounds = Math.max(1, options.rounds ?? 5);
  const resources = shape.phases * shape.resourcesPerPhase;
  const baseline = await runPostgresBaseline({ rows: options.baselineRows ?? 200_000 });
  const baselineRate = baseline['INSERT 1,000-row batches rows/s'];
  const scratch = await createScratchDatabase('ingest');
  const emulator = await startEmulator({ port: 0, requestLogSize: 100 });
  applyFleet(emulator, shape);
  const handle = loadKubeconfigClusters({ yaml: emulator.kubeconfig(), name: 'ingest' }).clusters[0];
  if (handle === undefined) throw new Error('emulator kubeconfig did not load');
  const client = createClusterClient(handle, { transport: { timeoutMs: 120_000 } });
  let db: Db | undefined;
  try {
    await migrateDatabase(scratch.connectionString);
    db = createDb(scratch.connectionString, { poolSize: 2 });
    const history = createRecorder(createSnapshotStore(db));
    const memos = new ObservationMemos();
    let at = Date.now();
    const record = async (): Promise<{ ms: number; changes: number; rows: number; added: number }> => {
      const observation = await observeCluster(client, { memos });
      if (observation.outcome !== 'ok') throw new Error('emulated cluster unreachable');
      const before = await countRows(db as Db);
      const started = nowMs();
      const result = await history.record(observation, { tickAt: new Date((at += 1000)) });
      const ms = nowMs() - started;
      if (!result.written) throw new Error('snapshot not written');
      return { ms, changes: result.changes.length, rows: result.rows, added: (await countRows(db as Db)) - before };
    };
    const first = await record();
    const flipAll = (to: 'ready' | 'rolling'): void => {
      for (let p = 0; p < shape.phases; p += 1) {
        for (let r = 0; r < shape.resourcesPerPhase; r += 1)
          emulator.patchStatus(deploymentRef(p, r, shape), to === 'ready' ? readyStatus() : rollingStatus());
      }
    };
    // One untimed round first: new status details and the first ended intervals.
    flipAll('rolling');
    await record();
    const timed: Awaited<ReturnType<typeof record>>[] = [];
    for (let i = 0; i < rounds; i += 1) {
      flipAll(i % 2 === 0 ? 'ready' : 'rolling');
      timed.push(await record());
    }
    const keptMb = await keptStateHeap(db, 'ingest', await observeCluster(client));
    const ms = median(timed.map((t) => t.ms));
    const changes = median(timed.map((t) => t.changes));
    const rate = Math.round(changes / (ms / 1000));
    const figures: Figures = {
      'resources in the cluster': resources,
      'first snapshot ms (records everything)': round(first.ms),
      'status changes per snapshot': changes,
      'rows written per snapshot (store count)': median(timed.map((t) => t.rows)),
      'rows added per snapshot (all history tables)': median(timed.map((t) => t.added)),
      'recordSnapshot ms (median)': round(ms),
      'recordSnapshot ms (each)': timed.map((t) => round(t.ms)).join(', '),
      'status changes/s': rate,
      'raw INSERT 1,000-row batches rows/s (same run)': typeof baselineRate === 'number' ? baselineRate : 'n/a',
      'status changes/s / raw INSERT rows/s': typeof baselineRate === 'number' ? round(rate / baselineRate, 2) : 'n/a',
      'kept cluster state: heap MB per 10,000 resources (median of 3)': keptMb,
    };
    return figures;
  } finally {
    await db?.$disconnect();
    client.close();
    await emulator.close();
    await scratch.drop();
  }
}

/**
 * Heap a worker holds for a cluster's state kept between snapshots: the state loaded from the
 * store and planned against once (as a snapshot does), per 10,000 resources, median of 3; the
 * worker keeps it for the 64 clusters it snapshotted last.
 */
async function keptStateHeap(db: Db, cluster: string, observation: ClusterObservation): Promise<number> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const kept: StoredClusterState[] = [];
  const perTenThousand: number[] = [];
  // One untimed load first: code and caches the first one creates are not the state's.
  for (let i = 0; i < 4; i += 1) {
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const state = await withSqlTransaction(db, async (tx) => loadClusterState(tx, await lockCluster(tx, cluster)), {
      timeoutMs: 120_000,
      maxWaitMs: 5_000,
    });
    planSnapshot(state, observation);
    gc();
    gc();
    const after = process.memoryUsage().heapUsed;
    kept.push(state);
    const count = state.phases.reduce((sum, p) => sum + p.resources.length, 0);
    if (i > 0) perTenThousand.push((((after - before) / count) * 10_000) / 1e6);
  }
  return round(median(perTenThousand), 2);
}

if (isMain(import.meta.url)) {
  printFigures(
    'history ingest: status changes per second through recordSnapshot vs raw INSERT batches',
    await run({
      phases: readNumberFlag('phases'),
      resources: readNumberFlag('resources'),
      rounds: readNumberFlag('rounds'),
      baselineRows: readNumberFlag('baseline-rows'),
    }),
  );
}
