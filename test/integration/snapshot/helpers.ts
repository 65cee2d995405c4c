/**
 * Set-up for the snapshot tests: a fresh migrated database per test file (dropped afterwards), a
 * unique prefix for queues and channels, emulated clusters as phaselog cluster handles, and row
 * counts of the history tables.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { createClusterClient, type ClusterClient } from '../../../src/kube/cluster-client.ts';
import { loadKubeconfigClusters, type ClusterHandle } from '../../../src/kube/clusters.ts';
import { ensureDatabase, migrateDatabase } from '../../../src/store/migrate.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { parseDatabaseUrl } from '../../../src/store/schema-engine.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVER = process.env.PHASELOG_TEST_POSTGRES ?? 'postgresql://postgres@127.0.0.1:5432';

/** A unique id for database, queue and channel names of one test file. */
export function uniqueId(label: string): string {
  return `${label}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** A migrated database of its own. */
export interface TestDatabase {
  url: string;
  /** A Prisma client, for tests' own reads and set-up. */
  db: Db;
  /** What a worker process gets (`prisma: false`): its pool only, any Prisma query throws. Give it to what workers run. */
  workerDb: Db;
  /** Disconnects and drops the database. */
  drop(): Promise<void>;
}

/** Creates and migrates `phaselog_test_<random>`. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const url = `${SERVER}/phaselog_test_${uniqueId(label)}`;
  await ensureDatabase(url);
  await migrateDatabase(url);
  const db = createDb(url, { poolSize: 5 });
  const workerDb = createDb(url, { poolSize: 5, prisma: false });
  return {
    url,
    db,
    workerDb,
    async drop() {
      await db.$disconnect();
      await workerDb.$disconnect();
      const fields = parseDatabaseUrl(url);
      const admin = new pg.Client({ ...fields, database: 'postgres' });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${fields.database}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** An emulated cluster with a handle and a client for it. */
export interface EmulatedCluster {
  name: string;
  emulator: Emulator;
  handle: ClusterHandle;
  client: ClusterClient;
  close(): Promise<void>;
}

/** Starts an emulator on port 0 and loads it as cluster `name`. */
export async function startEmulatedCluster(name: string): Promise<EmulatedCluster> {
  const emulator = await startEmulator({ port: 0 });
  const loaded = loadKubeconfigClusters({ yaml: emulator.kubeconfig(), name, labels: { env: 'test' } });
  const handle = loaded.clusters[0];
  if (handle === undefined) throw new Error(`kubeconfig did not load: ${JSON.stringify(loaded.errors)}`);
  const client = createClusterClient(handle, { transport: { timeoutMs: 2000 } });
  return {
    name,
    emulator,
    handle,
    client,
    async close() {
      client.close();
      await emulator.close();
    },
  };
}

const TABLES = [
  'Cluster',
  'ClusterReachability',
  'Phase',
  'Manifest',
  'PhaseManifest',
  'ObjectRevision',
  'ResourceCurrentStatus',
  'ResourceStatusInterval',
  'PhaseCurrentStatus',
  'PhaseStatusInterval',
  'StatusChange',
  'ObservationTick',
] as const;

/** Row counts of every history table. */
export type RowCounts = Record<(typeof TABLES)[number], number>;

/** Counts the rows of every history table. */
export async function countRows(db: Db): Promise<RowCounts> {
  const counts = {} as RowCounts;
  for (const table of TABLES) {
    const rows = await db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "${table}"`);
    counts[table] = Number(rows[0]?.n ?? 0);
  }
  return counts;
}

/** One run of observation ticks that saw the same thing. */
export interface ObservationRun {
  outcome: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  count: number;
}

/** A cluster's observation runs, oldest first: the ended ones, then the current one (kept on the cluster's row). */
export async function observationRuns(db: Db, cluster: string): Promise<ObservationRun[]> {
  const row = await db.cluster.findUniqueOrThrow({
    where: { name: cluster },
    include: { ticks: { orderBy: { id: 'asc' } } },
  });
  const runs: ObservationRun[] = row.ticks.map((t) => ({
    outcome: t.outcome,
    firstSeenAt: t.firstSeenAt,
    lastSeenAt: t.lastSeenAt,
    count: t.count,
  }));
  if (row.tickOutcome !== null && row.tickFirstSeenAt !== null && row.tickLastSeenAt !== null) {
    runs.push({
      outcome: row.tickOutcome,
      firstSeenAt: row.tickFirstSeenAt,
      lastSeenAt: row.tickLastSeenAt,
      count: row.tickCount,
    });
  }
  return runs;
}

/** A logger that prints nothing (set PHASELOG_TEST_LOG=debug to see more). */
export function testLogger(): Logger {
  return pino({ level: process.env.PHASELOG_TEST_LOG ?? 'silent' });
}

/** Polls `check` until it is true; throws naming `what` after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
