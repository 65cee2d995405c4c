/**
 * Errors over graphql-ws (issue #17 item 12) are masked and logged as over HTTP: a database error
 * in a query's resolver or in a subscription's stream reaches the client as "Internal server
 * error (request id ...)" and the log in full under that id; expected codes pass unchanged; a
 * syntax error is answered, not a reason to drop the connection.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { startTestApi, type TestApi } from './helpers.ts';
import { seedHistory } from './seed.ts';
import { closeAll, initConnection } from './ws-raw.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  database = await createTestDatabase('gql_ws_errors');
  await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 2 });
  // Lost before the server prepares its statements: reads of phase history and of the change log fail in PostgreSQL.
  await db.$executeRawUnsafe('ALTER TABLE "PhaseStatusInterval" RENAME TO "PhaseStatusInterval_lost"');
  await db.$executeRawUnsafe('ALTER TABLE "StatusChange" RENAME TO "StatusChange_lost"');
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  api = await startTestApi({
    db,
    anonymousRead: true,
    redisUrl: testRedisUrl(),
    channelPrefix: uniquePrefix('gql-ws-errors'),
    log: pino({ level: 'info' }, sink),
  });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

interface WireError {
  message: string;
  path?: string[];
  extensions?: { code?: string; requestId?: string };
}

const subscribe = (id: string, query: string) => JSON.stringify({ id, type: 'subscribe', payload: { query } });

/** The masked form, and the one log line under its request id carrying the database's error. */
function expectMaskedAndLogged(error: WireError | undefined, path: string[] | undefined): void {
  expect(error?.message).toMatch(/^Internal server error \(request id [0-9a-f-]{36}\)$/);
  const requestId = error?.extensions?.requestId;
  expect(error?.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', requestId });
  expect(JSON.stringify(error)).not.toMatch(/PhaseStatusInterval|StatusChange|relation|does not exist|prisma|stack/i);
  const logged = logLines.filter((l) => l.msg === 'internal error in a GraphQL operation' && l.requestId === requestId);
  expect(logged).toHaveLength(1);
  expect(logged[0]?.path).toEqual(path);
  expect(JSON.stringify(logged[0]?.err)).toMatch(/PhaseStatusInterval|StatusChange/);
}

describe('errors over graphql-ws', () => {
  it('masks and logs a database error in a query resolver; fields that did not fail still answer', async () => {
    const connection = await initConnection(api.wsUrl);
    connection.socket.send(
      subscribe(
        'q',
        '{ about { version } phase(cluster: "prod", namespace: "shop", name: "web") { name history(from: "2026-01-01T00:00:00Z") { edges { node { status } } } } }',
      ),
    );
    const message = await connection.next((m) => m.id === 'q' && m.type === 'next');
    const payload = message.payload as { data: { about: unknown; phase: unknown }; errors: WireError[] };
    expect(payload.data).toEqual({ about: { version: 'test' }, phase: null });
    expect(payload.errors).toHaveLength(1);
    expect(payload.errors[0]?.path).toEqual(['phase', 'history']);
    expectMaskedAndLogged(payload.errors[0], ['phase', 'history']);
    await closeAll([connection.socket]);
  });

  it("masks and logs a database error thrown by a subscription's stream (replaying the change log)", async () => {
    const connection = await initConnection(api.wsUrl);
    connection.socket.send(subscribe('s', 'subscription { phaseStatusChanged(after: "0") { seq } }'));
    const message = await connection.next((m) => m.id === 's');
    expect(message.type).toBe('error');
    const errors = message.payload as WireError[];
    expect(errors).toHaveLength(1);
    expectMaskedAndLogged(errors[0], undefined);
    await closeAll([connection.socket]);
  });

  it('passes expected codes and validation errors unchanged', async () => {
    const connection = await initConnection(api.wsUrl);
    connection.socket.send(subscribe('bad-cursor', 'subscription { phaseStatusChanged(after: "x") { seq } }'));
    const badInput = await connection.next((m) => m.id === 'bad-cursor');
    expect((badInput.payload as { errors: WireError[] }).errors[0]).toMatchObject({
      message: expect.stringMatching(/after must be a seq/),
      extensions: { code: 'BAD_USER_INPUT' },
    });

    connection.socket.send(
      JSON.stringify({
        id: 'bad-variable',
        type: 'subscribe',
        payload: {
          query:
            'query($since: DateTime!) { phase(cluster: "prod", namespace: "shop", name: "web") { history(from: $since) { edges { node { status } } } } }',
          variables: { since: 'yesterday' },
        },
      }),
    );
    const badVariable = await connection.next((m) => m.id === 'bad-variable');
    expect((badVariable.payload as { errors: WireError[] }).errors[0]).toMatchObject({
      message: expect.stringMatching(/\$since/),
      extensions: { code: 'BAD_USER_INPUT' },
    });

    connection.socket.send(subscribe('admin-only', '{ tokens { name } }'));
    const forbidden = await connection.next((m) => m.id === 'admin-only');
    // As over HTTP: the code, not Apollo's internal `http` status hint.
    expect((forbidden.payload as { errors: WireError[] }).errors[0]).toMatchObject({
      message: expect.stringMatching(/admin scope/),
      extensions: { code: 'FORBIDDEN' },
    });
    expect((forbidden.payload as { errors: WireError[] }).errors[0]?.extensions).toEqual({ code: 'FORBIDDEN' });

    connection.socket.send(subscribe('unknown-field', '{ noSuchField }'));
    const invalid = await connection.next((m) => m.id === 'unknown-field');
    expect(invalid.type).toBe('error');
    expect((invalid.payload as WireError[])[0]).toMatchObject({
      message: expect.stringMatching(/noSuchField/),
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
    });
    await closeAll([connection.socket]);
  });

  it('answers a syntax error with GRAPHQL_PARSE_FAILED and keeps the connection', async () => {
    const connection = await initConnection(api.wsUrl);
    connection.socket.send(subscribe('syntax', '{ about { version '));
    const answer = await connection.next((m) => m.id === 'syntax');
    expect(answer.type).toBe('error');
    expect((answer.payload as WireError[])[0]).toMatchObject({
      message: expect.stringMatching(/^Syntax Error/),
      extensions: { code: 'GRAPHQL_PARSE_FAILED' },
    });

    connection.socket.send(subscribe('after', '{ about { version } }'));
    expect(await connection.next((m) => m.id === 'after')).toMatchObject({
      type: 'next',
      payload: { data: { about: { version: 'test' } } },
    });
    await closeAll([connection.socket]);
  });
});
