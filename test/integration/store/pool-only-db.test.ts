/**
 * The database handle of a worker process (`createDb(url, { prisma: false })`): its SQL runs on
 * `pg`, and any use of Prisma fails where it is made, with an error naming the fix, instead of
 * loading Prisma's query compiler into the worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterStore } from '../../../src/store/cluster-store.ts';
import { pingDatabase } from '../../../src/store/database-readiness.ts';
import { createDb, poolOf, PrismaUnavailableError, type Db } from '../../../src/store/prisma.ts';
import { sqlOn, withSqlTransaction } from '../../../src/store/sql-transaction.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('pool_only');
  db = createDb(database.url, { poolSize: 2, prisma: false });
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe('a database handle without Prisma', () => {
  it('runs the stores a worker uses, reading back bigint, Date and json as Prisma did', async () => {
    await pingDatabase(db);
    const store = createClusterStore(db);
    await store.registerClusters({
      configured: ['prod', 'staging'],
      snapshotIntervalMs: 60_000,
      at: new Date('2026-11-27T00:00:00Z'),
    });
    await sqlOn(db)
      .$executeRaw`UPDATE "Cluster" SET "labels" = ${JSON.stringify({ env: 'prod' })}::jsonb, "lastGoodReadAt" = ${new Date('2026-11-27T01:02:03.456Z')}::timestamptz(3) WHERE "name" = 'prod'`;
    const [prod] = await store.listClusters();
    expect(prod).toMatchObject({
      name: 'prod',
      labels: { env: 'prod' },
      lastGoodReadAt: new Date('2026-11-27T01:02:03.456Z'),
      observation: { snapshotIntervalMs: 60_000, retiredAt: null },
    });
    const [count] = await sqlOn(db).$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM "Cluster"`;
    expect(count?.n).toBe(2n);
    const written = await withSqlTransaction(
      db,
      async (tx) => tx.$executeRaw`UPDATE "Cluster" SET "reachable" = true WHERE "name" = ${'staging'}`,
      { timeoutMs: 5_000, maxWaitMs: 2_000 },
    );
    expect(written).toBe(1);
  });

  it('refuses every Prisma query where it is made, naming the fix, and keeps its pool', async () => {
    const model = () => (db as unknown as { cluster: { findMany(): Promise<unknown> } }).cluster.findMany();
    expect(model).toThrow(PrismaUnavailableError);
    expect(model).toThrow(/db\.cluster: .*no Prisma client.*sqlOn\/withSqlTransaction/);
    expect(() => db.$queryRaw`SELECT 1`).toThrow(PrismaUnavailableError);
    expect(() => db.$transaction(async () => 1)).toThrow(/db\.\$transaction/);
    // Awaiting or inspecting the handle is not a query.
    expect(await Promise.resolve(db)).toBe(db);
    expect(poolOf(db).totalCount).toBeGreaterThanOrEqual(0);
    // Nothing was lost: the pool still serves the stores.
    expect((await createClusterStore(db).listClusters()).map((c) => c.name)).toEqual(['prod', 'staging']);
  });

  it('loses nothing when PostgreSQL ends its connections (a restart): the next statement opens another', async () => {
    const store = createClusterStore(db);
    await store.listClusters();
    expect(poolOf(db).idleCount).toBeGreaterThan(0);
    // From a connection of another handle, as an operator's restart would: every backend of this database but that one.
    const admin = createDb(database.url, { poolSize: 1, prisma: false });
    try {
      const ended = await sqlOn(admin).$queryRaw<{ ended: boolean }[]>`
        SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
      expect(ended.length).toBeGreaterThan(0);
    } finally {
      await admin.$disconnect();
    }
    // The ended idle connections leave the pool (an 'error' it listens to, not an uncaught one).
    await expect.poll(() => poolOf(db).totalCount, { timeout: 5_000 }).toBe(0);
    expect((await store.listClusters()).map((c) => c.name)).toEqual(['prod', 'staging']);
    const written = await withSqlTransaction(
      db,
      async (tx) => tx.$executeRaw`UPDATE "Cluster" SET "reachable" = false WHERE "name" = ${'prod'}`,
      { timeoutMs: 5_000, maxWaitMs: 2_000 },
    );
    expect(written).toBe(1);
  });

  it('ends its pool on $disconnect, and a second $disconnect does nothing', async () => {
    const other = createDb(database.url, { poolSize: 1, prisma: false });
    await pingDatabase(other);
    await other.$disconnect();
    expect(poolOf(other).ended).toBe(true);
    await expect(other.$disconnect()).resolves.toBeUndefined();
    await expect(pingDatabase(other)).rejects.toThrow(/pool/i);
  });
});
