/**
 * Which database failures the API answers as SERVICE_UNAVAILABLE (retry later) rather than as an
 * internal error: real failures from a real PostgreSQL, through Prisma and through `pg` directly
 * (the read side's prepared statements).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../../src/store/database-errors.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { freePort } from '../../helpers/process.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase('db_errors');
  db = createDb(database.url, { poolSize: 2 });
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

function urlWith(change: (url: URL) => void): string {
  const url = new URL(database.url);
  change(url);
  return url.toString();
}

describe('isDatabaseUnavailable', () => {
  it('is true for a server nobody listens for, through Prisma and through pg', async () => {
    const port = await freePort();
    const down = createDb(
      urlWith((u) => (u.port = String(port))),
      { poolSize: 1 },
    );
    try {
      expect(isDatabaseUnavailable(await failureOf(() => down.cluster.findMany()))).toBe(true);
    } finally {
      await down.$disconnect();
    }
    const client = new pg.Client({ connectionString: urlWith((u) => (u.port = String(port))) });
    expect(isDatabaseUnavailable(await failureOf(() => client.connect()))).toBe(true);
  });

  it('is true for a database that does not exist (a replica URL naming the wrong one)', async () => {
    const missing = createDb(
      urlWith((u) => (u.pathname = '/phaselog_no_such_database')),
      { poolSize: 1 },
    );
    try {
      expect(isDatabaseUnavailable(await failureOf(() => missing.cluster.findMany()))).toBe(true);
    } finally {
      await missing.$disconnect();
    }
  });

  it('is true for a connection the server ends (a replica restarting)', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    client.on('error', () => undefined);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const failure = failureOf(() => client.query('SELECT pg_sleep(5)'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
    await admin.end();
    expect(isDatabaseUnavailable(await failure)).toBe(true);
  });

  it('is false for statements that fail on a working database', async () => {
    expect(isDatabaseUnavailable(await failureOf(() => db.$queryRawUnsafe('SELEC 1')))).toBe(false);
    await db.cluster.create({ data: { name: 'twice' } });
    expect(isDatabaseUnavailable(await failureOf(() => db.cluster.create({ data: { name: 'twice' } })))).toBe(false);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      expect(isDatabaseUnavailable(await failureOf(() => client.query('SELECT * FROM no_such_table')))).toBe(false);
    } finally {
      await client.end();
    }
  });

  it('is false for what is not a database error', () => {
    for (const value of [
      new Error('boom'),
      new TypeError('x is undefined'),
      'ECONNREFUSED',
      null,
      undefined,
      { code: 42 },
    ]) {
      expect(isDatabaseUnavailable(value)).toBe(false);
    }
  });
});
