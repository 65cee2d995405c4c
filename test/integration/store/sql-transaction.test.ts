/**
 * The snapshot transaction on pg directly (src/store/sql-transaction.ts): what Prisma's interactive
 * transaction guaranteed must still hold on a real PostgreSQL. All or nothing; a transaction past
 * its bound rolled back with its statement cut off; a pool with no free connection answered within
 * the wait bound, without leaking the connection that comes free later; a backend killed in the
 * middle of a transaction leaves nothing and the pool recovers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, poolOf, type Db } from '../../../src/store/prisma.ts';
import {
  ConnectionWaitError,
  TransactionTimeoutError,
  withSqlTransaction,
} from '../../../src/store/sql-transaction.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { sql } from '../../../src/store/sql.ts';

const BOUNDS = { timeoutMs: 5_000, maxWaitMs: 5_000 };

describe('snapshot transactions on pg', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase('sql_tx');
    db = createDb(database.url, { poolSize: 2 });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  const clusterNamed = async (name: string): Promise<number> => db.cluster.count({ where: { name } });

  it('commits every statement when the work resolves, and reads rows as Prisma does (int8 as bigint, timestamptz as Date, json parsed)', async () => {
    const at = new Date('2026-11-27T03:04:05.678Z');
    const read = await withSqlTransaction(
      db,
      async (tx) => {
        await tx.$executeRaw`INSERT INTO "Cluster" ("name", "labels", "lastTickAt") VALUES (${'committed'}, ${JSON.stringify({ env: 'prod' })}::jsonb, ${at}::timestamptz(3))`;
        return tx.$queryRaw<{ big: bigint; labels: unknown; lastTickAt: Date }[]>(
          sql`SELECT 9007199254740993::bigint AS "big", "labels", "lastTickAt" FROM "Cluster" WHERE "name" = ${'committed'}`,
        );
      },
      BOUNDS,
    );
    expect(read).toEqual([{ big: 9007199254740993n, labels: { env: 'prod' }, lastTickAt: at }]);
    expect(await clusterNamed('committed')).toBe(1);
  });

  it('rolls back every statement when the work throws, and passes the error on', async () => {
    const failure = new Error('the plan could not be written');
    await expect(
      withSqlTransaction(
        db,
        async (tx) => {
          await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'rolled-back'})`;
          throw failure;
        },
        BOUNDS,
      ),
    ).rejects.toBe(failure);
    expect(await clusterNamed('rolled-back')).toBe(0);
  });

  it('rolls back a transaction whose statement failed, and the connection serves the next one', async () => {
    await expect(
      withSqlTransaction(
        db,
        async (tx) => {
          await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'before-the-failure'})`;
          await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'before-the-failure'})`;
        },
        BOUNDS,
      ),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await clusterNamed('before-the-failure')).toBe(0);
    for (let i = 0; i < 4; i += 1)
      await withSqlTransaction(
        db,
        async (tx) => tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${`after-${i}`})`,
        BOUNDS,
      );
    expect(await db.cluster.count({ where: { name: { startsWith: 'after-' } } })).toBe(4);
  });

  it('cuts off a transaction that runs past its bound, mid-statement, commits nothing of it and frees the row it locked', async () => {
    await db.cluster.create({ data: { name: 'locked-by-a-slow-one' } });
    const started = Date.now();
    await expect(
      withSqlTransaction(
        db,
        async (tx) => {
          await tx.$queryRaw`SELECT "id" FROM "Cluster" WHERE "name" = ${'locked-by-a-slow-one'} FOR UPDATE`;
          await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'too-slow'})`;
          await tx.$queryRaw`SELECT pg_sleep(${30}::float8)`;
        },
        { timeoutMs: 500, maxWaitMs: 5_000 },
      ),
    ).rejects.toBeInstanceOf(TransactionTimeoutError);
    // The statement was ended: the caller did not wait for pg_sleep.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await clusterNamed('too-slow')).toBe(0);
    // The backend is gone, so the next snapshot of that cluster can lock its row at once.
    await expect
      .poll(
        async () =>
          (
            await db.$queryRaw<
              { n: number }[]
            >`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()`
          )[0]?.n,
        { timeout: 5_000 },
      )
      .toBe(0);
    const relocked = await withSqlTransaction(
      db,
      async (tx) =>
        tx.$queryRaw<
          { id: number }[]
        >`SELECT "id" FROM "Cluster" WHERE "name" = ${'locked-by-a-slow-one'} FOR UPDATE NOWAIT`,
      BOUNDS,
    );
    expect(relocked).toHaveLength(1);
    // And the pool hands out working connections.
    await withSqlTransaction(
      db,
      async (tx) => tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'after-timeout'})`,
      BOUNDS,
    );
    expect(await clusterNamed('after-timeout')).toBe(1);
  });

  it('gives up waiting for a connection at its bound when the pool is exhausted, and the connection that comes free later is not lost', async () => {
    const pool = poolOf(db);
    // Both connections of the pool held by transactions that wait for a signal.
    let letGo: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const holders = [0, 1].map((i) =>
      withSqlTransaction(
        db,
        async (tx) => {
          await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${`holder-${i}`})`;
          await held;
        },
        BOUNDS,
      ),
    );
    await expect.poll(() => pool.totalCount - pool.idleCount).toBe(2);
    const started = Date.now();
    await expect(
      withSqlTransaction(db, async () => 'never runs', { timeoutMs: 5_000, maxWaitMs: 300 }),
    ).rejects.toBeInstanceOf(ConnectionWaitError);
    expect(Date.now() - started).toBeLessThan(3_000);
    letGo();
    await Promise.all(holders);
    // The given-up wait's connection went back to the pool: both connections serve again.
    await Promise.all(
      [0, 1].map((i) =>
        withSqlTransaction(
          db,
          async (tx) => tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${`later-${i}`})`,
          BOUNDS,
        ),
      ),
    );
    expect(await db.cluster.count({ where: { name: { in: ['holder-0', 'holder-1', 'later-0', 'later-1'] } } })).toBe(4);
    await expect.poll(() => pool.waitingCount).toBe(0);
  });

  it('leaves nothing when its backend is killed mid-transaction, and the pool replaces the dead connection', async () => {
    await expect(
      withSqlTransaction(
        db,
        async (tx) => {
          await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'killed'})`;
          // As an administrator restarting or failing over the database would.
          await tx.$queryRaw`SELECT pg_terminate_backend(pg_backend_pid())`;
        },
        BOUNDS,
      ),
    ).rejects.toThrow();
    expect(await clusterNamed('killed')).toBe(0);
    for (let i = 0; i < 3; i += 1)
      await withSqlTransaction(
        db,
        async (tx) => tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${`revived-${i}`})`,
        BOUNDS,
      );
    expect(await db.cluster.count({ where: { name: { startsWith: 'revived-' } } })).toBe(3);
  });

  it('fails, without an uncaught error, a transaction whose connection is ended between two statements (a database restart)', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => {
      uncaught.push(error);
    };
    process.on('uncaughtException', onUncaught);
    try {
      await expect(
        withSqlTransaction(
          db,
          async (tx) => {
            const [me] = await tx.$queryRaw<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
            await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'ended-between'})`;
            // Ended from another session while this one is idle in its transaction: the driver hears
            // of it as an 'error' on the connection, with no statement running to fail.
            await db.$queryRaw`SELECT pg_terminate_backend(${me?.pid}::int)`;
            await new Promise((resolve) => setTimeout(resolve, 500));
            await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'after-the-end'})`;
          },
          BOUNDS,
        ),
      ).rejects.toThrow();
      expect(uncaught).toEqual([]);
      expect(await db.cluster.count({ where: { name: { in: ['ended-between', 'after-the-end'] } } })).toBe(0);
      await withSqlTransaction(
        db,
        async (tx) => tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${'after-the-restart'})`,
        BOUNDS,
      );
      expect(await clusterNamed('after-the-restart')).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
