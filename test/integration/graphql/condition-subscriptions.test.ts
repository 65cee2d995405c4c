/**
 * phaseConditionChanged over a real graphql-ws client and real Redis: condition changes written by
 * the condition store are replayed from the change log after `after:`, then delivered live, each
 * once; a token restricted to one namespace receives only its phases' condition changes; the
 * phase's `statusAt` shows the conditions of that moment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createConditionStore, type ConditionStore } from '../../../src/store/condition-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { startTestApi, wsClient, type TestApi } from './helpers.ts';
import { at, seedHistory, type Seeded } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let seeded: Seeded;
let publisher: ChangePublisher;
let store: ConditionStore;
let paymentsReader: string;
const prefix = uniquePrefix('gql-conditions');

beforeAll(async () => {
  database = await createTestDatabase('gql_conditions');
  seeded = await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  store = createConditionStore(db);
  paymentsReader = (
    await createToken(createApiTokenStore(db), {
      name: 'payments',
      scopes: ['read'],
      clusters: ['prod'],
      namespaces: ['payments'],
    })
  ).secret;
  publisher = createChangePublisher(testRedisUrl(), { prefix });
  api = await startTestApi({ db, anonymousRead: true, redisUrl: testRedisUrl(), channelPrefix: prefix });
});

afterAll(async () => {
  await api?.close();
  await publisher?.close();
  await db?.$disconnect();
  await database?.drop();
});

interface Event {
  seq: string;
  scope: string;
  conditionType: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  phase: { name: string } | null;
}

const SUB =
  'subscription($after: String, $filter: StatusChangeFilter) { phaseConditionChanged(after: $after, filter: $filter) { seq scope conditionType fromStatus toStatus phase { name } } }';

function subscribe(variables: Record<string, unknown>, token?: string) {
  const client = wsClient(api.wsUrl, token);
  const iterator = client.iterate<{ phaseConditionChanged: Event }>({ query: SUB, variables })[Symbol.asyncIterator]();
  return {
    async next(): Promise<Event> {
      const result = await iterator.next();
      if (result.done) throw new Error('subscription ended');
      if (result.value.errors) throw new Error(JSON.stringify(result.value.errors));
      return result.value.data?.phaseConditionChanged as Event;
    },
    async close() {
      await iterator.return?.();
      await client.dispose();
    },
  };
}

/** One check run over prod's web and ledger phases, written and published as a worker does. */
async function run(minutes: number, web: 'True' | 'False', ledger: 'True' | 'False') {
  const written = await store.recordRun({
    check: 'health',
    source: 'http',
    cluster: 'prod',
    intervalMs: 30_000,
    at: at(minutes),
    results: [
      {
        phaseId: seeded.web,
        type: 'health',
        status: web,
        reason: web === 'True' ? 'Succeeded' : 'UnexpectedStatus',
        message: '',
      },
      {
        phaseId: seeded.ledger,
        type: 'health',
        status: ledger,
        reason: ledger === 'True' ? 'Succeeded' : 'UnexpectedStatus',
        message: '',
      },
    ],
  });
  await publisher.publish(written.changes);
  return written.changes;
}

describe('phaseConditionChanged', () => {
  it('replays condition changes after the cursor, then delivers live ones once each; a restricted token gets its namespace only', async () => {
    const first = await run(100, 'True', 'True');
    const second = await run(101, 'False', 'True');
    expect(second.map((c) => c.phaseId)).toEqual([seeded.web]);
    const resumeAfter = first.at(-1)?.seq.toString();

    const sub = subscribe({ after: resumeAfter });
    const restricted = subscribe({ after: '0' }, paymentsReader);
    const replayed = await sub.next();
    expect(replayed).toMatchObject({
      scope: 'condition',
      conditionType: 'health',
      fromStatus: 'True',
      toStatus: 'False',
      phase: { name: 'web' },
    });
    // The restricted token's replay starts at the ledger's first change; web's are not its.
    expect(await restricted.next()).toMatchObject({
      conditionType: 'health',
      fromStatus: null,
      toStatus: 'True',
      phase: { name: 'ledger' },
    });

    const live = await run(102, 'False', 'False');
    expect(live.map((c) => c.phaseId)).toEqual([seeded.ledger]);
    expect(await sub.next()).toMatchObject({
      seq: live[0]?.seq.toString(),
      fromStatus: 'True',
      toStatus: 'False',
      phase: { name: 'ledger' },
    });
    expect(await restricted.next()).toMatchObject({ seq: live[0]?.seq.toString(), phase: { name: 'ledger' } });
    await sub.close();
    await restricted.close();
  });

  it('refuses a filter asking another scope, as the other subscriptions do', async () => {
    const sub = subscribe({ filter: { scopes: ['phase'] } });
    await expect(sub.next()).rejects.toThrow(/condition changes only/);
    await sub.close();
  });

  it("shows a phase's conditions as of a moment in statusAt", async () => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `{ phase(id: "${seeded.web}") { at100: statusAt(at: "${at(100.5).toISOString()}") { conditions { type source status } } at101: statusAt(at: "${at(101.5).toISOString()}") { conditions { type source status } } } }`,
      }),
    });
    const body = (await res.json()) as {
      data: { phase: Record<string, { conditions: { type: string; source: string; status: string }[] } | null> };
      errors?: unknown;
    };
    expect(body.errors).toBeUndefined();
    const health = (key: string) => body.data.phase[key]?.conditions.filter((c) => c.source !== 'derived');
    expect(health('at100')).toEqual([{ type: 'health', source: 'http', status: 'True' }]);
    expect(health('at101')).toEqual([{ type: 'health', source: 'http', status: 'False' }]);
  });
});

describe('conditionHistory', () => {
  it("pages a phase's condition intervals oldest first, and narrows to one type", async () => {
    const query = (after: string | null) =>
      fetch(api.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query:
            'query($id: ID!, $from: DateTime!, $after: String) { phase(id: $id) { conditionHistory(from: $from, type: "health", first: 1, after: $after) { edges { node { type source status from to } } pageInfo { hasNextPage endCursor } } } }',
          variables: { id: String(seeded.web), from: at(0).toISOString(), after },
        }),
      }).then(
        async (r) =>
          (await r.json()) as {
            data: {
              phase: {
                conditionHistory: {
                  edges: { node: { status: string; from: string; to: string | null } }[];
                  pageInfo: { hasNextPage: boolean; endCursor: string | null };
                };
              };
            };
          },
      );
    const first = (await query(null)).data.phase.conditionHistory;
    expect(first.edges.map((e) => [e.node.status, e.node.from, e.node.to])).toEqual([
      ['True', at(100).toISOString(), at(101).toISOString()],
    ]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await query(first.pageInfo.endCursor)).data.phase.conditionHistory;
    expect(second.edges.map((e) => [e.node.status, e.node.from, e.node.to])).toEqual([
      ['False', at(101).toISOString(), null],
    ]);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const none = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `{ phase(id: "${seeded.web}") { conditionHistory(from: "${at(0).toISOString()}", type: "smoke") { edges { node { type } } } } }`,
      }),
    }).then(async (r) => (await r.json()) as { data: { phase: { conditionHistory: { edges: unknown[] } } } });
    expect(none.data.phase.conditionHistory.edges).toEqual([]);
  });
});

describe('bad input about conditions', () => {
  it.each([
    [
      'a gate condition status that is not True, False or Unknown',
      '{ gate(phase: { cluster: "prod", namespace: "shop", name: "web" }, for: "1m", conditions: [{ type: "health", status: "Maybe" }]) { passed } }',
      /True, False or Unknown/,
    ],
    [
      'more gate conditions than a gate takes',
      `{ gate(phase: { cluster: "prod", namespace: "shop", name: "web" }, for: "1m", conditions: [${Array.from({ length: 21 }, (_, n) => `{ type: "c${n}" }`).join(', ')}]) { passed } }`,
      /at most 20 conditions/,
    ],
    [
      'a condition history that ends before it starts',
      `{ phase(cluster: "prod", namespace: "shop", name: "web") { conditionHistory(from: "${at(10).toISOString()}", to: "${at(5).toISOString()}") { edges { cursor } } } }`,
      /to is before from/,
    ],
    [
      'a NUL in a condition filter',
      '{ phases(filter: { conditions: [{ type: "he\\u0000alth", status: "True" }] }) { edges { cursor } } }',
      /.+/,
    ],
  ])('refuses %s with BAD_USER_INPUT', async (_what, query, message) => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    const body = (await res.json()) as { errors?: { message: string; extensions?: { code?: string } }[] };
    expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(body.errors?.[0]?.message).toMatch(message);
  });
});
