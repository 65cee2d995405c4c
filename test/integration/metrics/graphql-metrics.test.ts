/**
 * The API's machinery series on /metrics: GraphQL requests timed by operation type (never by a
 * name a client chose) and the operations running on open WebSocket connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createMetrics, type Metrics } from '../../../src/metrics/registry.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { gql, startTestApi, wsClient, type TestApi } from '../graphql/helpers.ts';
import { waitUntil } from '../snapshot/helpers.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let metrics: Metrics;
let reader: string;

const scrape = async (): Promise<string> => (await fetch(api.url.replace(/\/graphql$/, '/metrics'))).text();
const countOf = (body: string, operation: string): number =>
  Number(
    new RegExp(`^phaselog_graphql_request_duration_seconds_count\\{operation="${operation}"\\} (\\d+)$`, 'm').exec(
      body,
    )?.[1] ?? 0,
  );
const activeOperations = (body: string): number =>
  Number(/^phaselog_graphql_active_operations (\d+)$/m.exec(body)?.[1] ?? NaN);

beforeAll(async () => {
  database = await createTestDatabase('graphql_metrics');
  db = createDb(database.url, { poolSize: 4 });
  reader = (await createToken(createApiTokenStore(db), { name: 'reader', scopes: ['read'] })).secret;
  metrics = createMetrics();
  api = await startTestApi({
    db,
    anonymousRead: false,
    redisUrl: testRedisUrl(),
    channelPrefix: uniquePrefix('gql-metrics'),
    metrics,
  });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('GraphQL series on /metrics', () => {
  it('times requests by operation type; an operation name or a broken query adds no label value of its own', async () => {
    expect((await gql(api.url, 'query SomeNameAClientChose { __typename }', {}, reader)).errors).toBeUndefined();
    expect((await gql(api.url, '{ phases(first: 1) { edges { node { id } } } }', {}, reader)).errors).toBeUndefined();
    expect((await gql(api.url, '{ nope', {}, reader)).errors).toBeDefined();
    expect(
      (await gql(api.url, 'mutation { refreshCluster(cluster: "x") { __typename } }', {}, reader)).errors,
    ).toBeDefined();
    const body = await scrape();
    expect(countOf(body, 'query')).toBe(2);
    expect(countOf(body, 'unknown')).toBe(1);
    expect(countOf(body, 'mutation')).toBe(1);
    expect(body).not.toContain('SomeNameAClientChose');
    expect(body).not.toContain(reader);
  });

  it('counts the subscriptions open on WebSocket connections, and forgets them when the client leaves', async () => {
    expect(activeOperations(await scrape())).toBe(0);
    const client = wsClient(api.wsUrl, reader);
    const done = new Promise<void>((resolve) => {
      client.subscribe(
        { query: 'subscription { phaseStatusChanged { seq } }' },
        { next: () => {}, error: () => resolve(), complete: () => resolve() },
      );
    });
    let body = '';
    await waitUntil(
      async () => activeOperations((body = await scrape())) === 1,
      'one active subscription on /metrics',
      15_000,
    );
    await client.dispose();
    await done;
    await waitUntil(
      async () => activeOperations((body = await scrape())) === 0,
      'no active subscription on /metrics',
      15_000,
    );
    expect(activeOperations(body)).toBe(0);
  });
});
