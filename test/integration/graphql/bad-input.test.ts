/**
 * Bad input gets a clear 4xx with a code, never INTERNAL_SERVER_ERROR: NUL characters in any text
 * argument, cursors the database could not take, report filters outside a token's scope, a
 * subscription POSTed over HTTP, an unknown operation name, impossible or offset-less timestamps and
 * reversed ranges. Each case runs on the real server over real PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { encodeCursor } from '../../../src/graphql/cursor.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, wsClient, type GqlResult, type TestApi } from './helpers.ts';
import { iso, seedHistory, type Seeded } from './seed.ts';
import { closeAll, openSocket } from './ws-raw.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let seeded: Seeded;
let paymentsReader: string;

beforeAll(async () => {
  database = await createTestDatabase('gql_bad_input');
  seeded = await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  paymentsReader = (
    await createToken(createApiTokenStore(db), {
      name: 'payments-ci',
      scopes: ['read'],
      clusters: ['prod'],
      namespaces: ['payments'],
    })
  ).secret;
  api = await startTestApi({
    db,
    anonymousRead: true,
    redisUrl: testRedisUrl(),
    channelPrefix: uniquePrefix('gql-bad-input'),
  });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

/** A 4xx answer carrying `code` and no internal error. */
function expectRefused(result: GqlResult, code = 'BAD_USER_INPUT'): void {
  expect(result.errors?.map((e) => e.extensions?.code)).toContain(code);
  expect(result.errors?.map((e) => e.extensions?.code)).not.toContain('INTERNAL_SERVER_ERROR');
  expect(result.status).toBeGreaterThanOrEqual(400);
  expect(result.status).toBeLessThan(500);
}

const NUL = '\u0000';
const WEB = 'phase(cluster: "prod", namespace: "shop", name: "web")';

describe('NUL characters (PostgreSQL text cannot hold them)', () => {
  it.each([
    [
      'a root argument, as a variable',
      'query($c: String!) { phase(cluster: $c, namespace: "shop", name: "web") { name } }',
      { c: `prod${NUL}` },
    ],
    [
      'a root argument, as a literal escape',
      '{ phase(cluster: "prod\\u0000", namespace: "shop", name: "web") { name } }',
      {},
    ],
    [
      'an input object field',
      'query($s: String) { phases(filter: { search: $s }) { edges { node { name } } } }',
      { s: `we${NUL}b` },
    ],
    [
      'a JSON label value',
      'query($l: JSON) { phases(filter: { labels: $l }) { edges { node { name } } } }',
      { l: { team: `shop${NUL}` } },
    ],
    [
      'a JSON label key',
      'query($l: JSON) { phases(filter: { labels: $l }) { edges { node { name } } } }',
      { l: { [`te${NUL}am`]: 'shop' } },
    ],
    [
      'an argument below the root',
      `query($k: String) { ${WEB} { resources(filter: { kind: $k }) { edges { node { key } } } } }`,
      { k: `Deploy${NUL}ment` },
    ],
    [
      'a list element',
      'query($n: [String!]) { auditReport(from: "2026-01-01T00:00:00Z", filter: { namespaces: $n }) { content } }',
      { n: ['shop', NUL] },
    ],
    [
      'the change log filter',
      'query($c: String) { statusChanges(filter: { cluster: $c }) { edges { cursor } } }',
      { c: NUL },
    ],
    [
      'a gate',
      'query($n: String!) { gate(phase: { cluster: "prod", namespace: "shop", name: $n }, for: "1m") { passed } }',
      { n: `web${NUL}` },
    ],
  ])('in %s: 400 BAD_USER_INPUT', async (_label, query, variables) => {
    expectRefused(await gql(api.url, query, variables));
  });

  it('in a subscription filter over WebSocket: BAD_USER_INPUT', async () => {
    const client = wsClient(api.wsUrl);
    try {
      const results: { errors?: { extensions?: { code?: string } }[] }[] = [];
      const query = 'subscription($c: String) { phaseStatusChanged(filter: { cluster: $c }) { seq } }';
      for await (const result of client.iterate({ query, variables: { c: `prod${NUL}` } }))
        results.push(result as (typeof results)[number]);
      expect(results.flatMap((r) => r.errors ?? []).map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    } finally {
      await client.dispose();
    }
  });
});

describe('deeply nested JSON variables', () => {
  const LABELS = 'query($l: JSON) { phases(filter: { labels: $l }) { edges { node { name } } } }';
  // Written as text: JSON.stringify itself recurses, and a client need not use it.
  const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
  const deepArray = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;
  const body = (labels: string) => `{"query":${JSON.stringify(LABELS)},"variables":{"l":${labels}}}`;
  async function post(labels: string): Promise<GqlResult> {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body(labels),
    });
    return { status: res.status, ...((await res.json()) as Omit<GqlResult, 'status'>) };
  }

  it.each([
    ['100,000 objects deep', `{"team":${deepObject(100_000)}}`],
    ['100,000 arrays deep', `{"team":${deepArray(100_000)}}`],
    ['one level past the limit of 64', deepObject(65)],
    ['past the limit, arrays and objects mixed', `{"t":[{"u":[${deepArray(62)}]}]}`],
  ])('%s: 400 BAD_USER_INPUT naming the depth limit', async (_label, labels) => {
    const result = await post(labels);
    expectRefused(result);
    expect(result.errors?.[0]?.message).toMatch(/nested deeper than 64 levels/);
  });

  it('at the limit the value is read, and judged by the labels rule instead', async () => {
    const result = await post(deepObject(64));
    expectRefused(result);
    expect(result.errors?.[0]?.message).toMatch(/filter.labels must be an object of string values/);
  });

  it('over WebSocket: BAD_USER_INPUT, and the connection serves the next operation', async () => {
    const { socket, next } = await openSocket(api.wsUrl);
    try {
      socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
      await next((m) => m.type === 'connection_ack');
      const variables = `{"l":{"team":${deepObject(100_000)}}}`;
      socket.send(
        `{"id":"1","type":"subscribe","payload":{"query":${JSON.stringify(LABELS)},"variables":${variables}}}`,
      );
      const refused = await next((m) => m.id === '1');
      // Variables are coerced when the operation executes: graphql-ws answers with its errors.
      expect(refused.type).toBe('next');
      expect(refused.payload).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
      expect(JSON.stringify(refused.payload)).toMatch(/nested deeper than 64 levels/);
      socket.send(
        JSON.stringify({ id: '2', type: 'subscribe', payload: { query: '{ phases(first: 1) { edges { cursor } } }' } }),
      );
      const answered = await next((m) => m.id === '2');
      expect(answered).toMatchObject({ type: 'next', payload: { data: { phases: { edges: [expect.anything()] } } } });
    } finally {
      await closeAll([socket]);
    }
  });
});

describe('cursors the database could not take', () => {
  const phaseCursor = (id: unknown) =>
    encodeCursor({ severity: 5, cluster: 'prod', namespace: 'shop', name: 'web', id });
  const intervalCursor = (f: string, i: string) => encodeCursor({ f, i });

  it.each([
    ['a phase id of 1e300', phaseCursor(1e300)],
    ['a phase id of -1.5', phaseCursor(-1.5)],
    ['a phase id past 2^31', phaseCursor(9_999_999_999)],
    ['a NUL in a name', encodeCursor({ severity: 5, cluster: `prod${NUL}`, namespace: 'shop', name: 'web', id: 1 })],
  ])('phases after %s: 400 BAD_USER_INPUT', async (_label, after) => {
    expectRefused(
      await gql(api.url, 'query($a: String) { phases(after: $a) { edges { node { name } } } }', { a: after }),
    );
  });

  it.each([
    ['an interval id of 9999999999999999999', intervalCursor(iso(0), '9999999999999999999')],
    ['an interval id of 1e300', intervalCursor(iso(0), '1e300')],
    ['an instant past year 9999', intervalCursor('+275760-09-13T00:00:00.000Z', '1')],
  ])('history after %s: 400 BAD_USER_INPUT', async (_label, after) => {
    expectRefused(
      await gql(
        api.url,
        `query($a: String) { ${WEB} { history(from: "${iso(0)}", after: $a) { edges { cursor } } manifests(after: $a) { edges { cursor } } } }`,
        { a: after },
      ),
    );
  });

  it('manifests after a manifest id past 2^31: 400 BAD_USER_INPUT', async () => {
    expectRefused(
      await gql(api.url, `query($a: String) { ${WEB} { manifests(after: $a) { edges { cursor } } } }`, {
        a: intervalCursor(iso(0), '9999999999'),
      }),
    );
  });

  it.each(['9999999999999999999', '99999999999999999999'])(
    'the change log after seq %s: 400 BAD_USER_INPUT',
    async (after) => {
      expectRefused(
        await gql(api.url, 'query($a: String) { statusChanges(after: $a) { edges { cursor } } }', { a: after }),
      );
      expectRefused(
        await gql(api.url, `query($a: String) { ${WEB} { changes(after: $a) { edges { cursor } } } }`, { a: after }),
      );
    },
  );

  it('a stored report id past 2^31: 400 BAD_USER_INPUT', async () => {
    expectRefused(await gql(api.url, '{ storedReport(id: "9999999999") { content } }'));
  });

  it('the largest seq PostgreSQL holds is still a cursor (an empty page)', async () => {
    const page = await gqlData<{ statusChanges: { edges: unknown[] } }>(
      api.url,
      '{ statusChanges(after: "9223372036854775807") { edges { cursor } } }',
    );
    expect(page.statusChanges.edges).toEqual([]);
  });
});

describe('audit reports filtered outside the token scope', () => {
  it.each([
    ['another cluster', { clusters: ['staging'] }],
    ['another namespace', { namespaces: ['shop'] }],
    ['its cluster but another namespace', { clusters: ['prod'], namespaces: ['shop'] }],
  ])('%s: an empty report, not an error', async (_label, filter) => {
    const result = await gqlData<{ auditReport: { figures: { phases: unknown[] } } }>(
      api.url,
      'query($f: AuditFilter) { auditReport(from: "2026-01-01T00:00:00Z", filter: $f) { figures } }',
      { f: filter },
      paymentsReader,
    );
    expect(result.auditReport.figures.phases).toEqual([]);
  });

  it('within the scope: only what the token may see', async () => {
    const result = await gqlData<{ auditReport: { figures: { phases: { name: string }[] } } }>(
      api.url,
      '{ auditReport(from: "2026-01-01T00:00:00Z", filter: { clusters: ["prod", "staging"] }) { figures } }',
      {},
      paymentsReader,
    );
    expect(result.auditReport.figures.phases.map((p) => p.name)).toEqual(['ledger']);
  });
});

describe('the HTTP request itself', () => {
  it('a subscription POSTed over HTTP: 400 BAD_REQUEST saying to use graphql-ws', async () => {
    const result = await gql(api.url, 'subscription { phaseStatusChanged { seq } }');
    expectRefused(result, 'BAD_REQUEST');
    expect(result.errors?.[0]?.message).toMatch(/graphql-ws/);
  });

  it('an operationName the document does not define: 400 with a code', async () => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query A { about { version } }', operationName: 'B' }),
    });
    const body = (await res.json()) as Omit<GqlResult, 'status'>;
    expectRefused({ status: res.status, ...body }, 'OPERATION_RESOLUTION_FAILURE');
    expect(body.errors?.[0]?.message).toMatch(/"B"/);
  });

  it('a document of several operations without an operationName: 400 with a code', async () => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query A { about { version } } query B { clusters { name } }' }),
    });
    expectRefused(
      { status: res.status, ...((await res.json()) as Omit<GqlResult, 'status'>) },
      'OPERATION_RESOLUTION_FAILURE',
    );
  });
});

describe('DateTime and ranges', () => {
  it.each([
    ['a day February does not have', '2026-02-31T00:00:00Z', /no such date/],
    ['a thirteenth month', '2026-13-01T00:00:00Z', /no such date/],
    ['an hour 24', '2026-01-01T24:00:00Z', /no such time/],
    ['a timestamp without an offset', '2026-01-01T00:10:00', /needs Z or an offset/],
    ['a date alone', '2026-01-01', /RFC 3339/],
  ])('%s is refused as a variable (400 BAD_USER_INPUT) and as a literal (400)', async (_label, value, message) => {
    const variable = await gql(api.url, `query($at: DateTime!) { ${WEB} { statusAt(at: $at) { status } } }`, {
      at: value,
    });
    expectRefused(variable);
    expect(variable.errors?.[0]?.message).toMatch(message);
    const literal = await gql(api.url, `{ ${WEB} { statusAt(at: "${value}") { status } } }`);
    expect(literal.status).toBe(400);
    expect(literal.errors?.[0]?.message).toMatch(message);
  });

  it('reads an offset as the moment it names', async () => {
    const answer = await gqlData<{ phase: { statusAt: { from: string } } }>(
      api.url,
      `{ ${WEB} { statusAt(at: "2026-01-01T01:35:00+01:00") { from } } }`,
    );
    expect(answer.phase.statusAt.from).toBe(iso(30));
  });

  it.each([
    ['changes', `{ ${WEB} { changes(from: "${iso(30)}", to: "${iso(10)}") { edges { cursor } } } }`],
    ['history', `{ ${WEB} { history(from: "${iso(30)}", to: "${iso(10)}") { edges { cursor } } } }`],
    ['auditReport', `{ auditReport(from: "${iso(30)}", to: "${iso(10)}") { content } }`],
  ])('%s with from after to: 400 BAD_USER_INPUT', async (_label, query) => {
    expectRefused(await gql(api.url, query));
  });

  it('an empty range is no error (from = to)', async () => {
    const answer = await gqlData<{ phase: { changes: { edges: unknown[] } } }>(
      api.url,
      `{ ${WEB} { changes(from: "${iso(10)}", to: "${iso(10)}") { edges { cursor } } } }`,
    );
    expect(answer.phase.changes.edges).toEqual([]);
    expect(seeded.web).toBeDefined();
  });
});
