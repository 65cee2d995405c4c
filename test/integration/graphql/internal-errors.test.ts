/**
 * Internal errors (here: a history table the database lost) reach the client masked, with
 * INTERNAL_SERVER_ERROR and a request id, and reach the log in full under the same request id;
 * fields that did not fail still answer.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, startTestApi, type TestApi } from './helpers.ts';
import { seedHistory } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  database = await createTestDatabase('gql_internal_errors');
  await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 2 });
  // Lost before the server prepares its statements: every read of phase history fails in PostgreSQL.
  await db.$executeRawUnsafe('ALTER TABLE "PhaseStatusInterval" RENAME TO "PhaseStatusInterval_lost"');
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  api = await startTestApi({ db, log: pino({ level: 'info' }, sink) });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('internal errors', () => {
  it('are masked for the client and logged in full under the request id the client sees', async () => {
    const result = await gql<{ about: { version: string }; phase: { name: string; history: unknown } | null }>(
      api.url,
      '{ about { version } phase(cluster: "prod", namespace: "shop", name: "web") { name history(from: "2026-01-01T00:00:00Z") { edges { node { status from to } } } } }',
    );
    expect(result.data?.about).toEqual({ version: 'test' });
    expect(result.data?.phase).toBeNull();
    expect(result.errors).toHaveLength(1);
    const error = result.errors?.[0];
    expect(error?.message).toMatch(/^Internal server error \(request id [0-9a-f-]{36}\)$/);
    expect(error?.path).toEqual(['phase', 'history']);
    const requestId = (error?.extensions as { code?: string; requestId?: string } | undefined)?.requestId;
    expect(error?.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', requestId });
    // Nothing of the database's error reaches the client.
    expect(JSON.stringify(result)).not.toMatch(/PhaseStatusInterval|relation|does not exist|stack/i);

    const logged = logLines.filter((l) => l.msg === 'internal error in a GraphQL operation');
    expect(logged).toHaveLength(1);
    expect(logged[0]?.requestId).toBe(requestId);
    expect(logged[0]?.path).toEqual(['phase', 'history']);
    expect(JSON.stringify(logged[0]?.err)).toMatch(/PhaseStatusInterval/);
  });

  it('give each request its own id', async () => {
    const query =
      '{ phase(cluster: "prod", namespace: "shop", name: "api") { history(from: "2026-01-01T00:00:00Z") { edges { node { status } } } } }';
    const ids = await Promise.all([gql(api.url, query), gql(api.url, query)]).then((rs) =>
      rs.map((r) => (r.errors?.[0]?.extensions as { requestId?: string } | undefined)?.requestId),
    );
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });
});
