/** Request limits: depth, cost, page size, body size, introspection switch and CSRF prevention. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, type TestApi } from './helpers.ts';
import { seedHistory } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;

beforeAll(async () => {
  database = await createTestDatabase('gql_limits');
  await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 2 });
  api = await startTestApi({ db, introspection: false, maxDepth: 7, maxCost: 2_000 });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('query limits', () => {
  it('refuses a query deeper than the limit before running it', async () => {
    const result = await gql(api.url, '{ phases { edges { node { statusAt(at: "2026-01-01T00:30:00Z") { resources { edges { node { key } } } } } } } }');
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'depth' });
    expect(result.errors?.[0]?.message).toBe('the query is 8 levels deep; the limit is 7');
  });

  it('prices page sizes: the same selection passes with small pages and is refused with large ones', async () => {
    const query = (n: number) => `{ phases(first: ${n}) { edges { node { resources(first: ${n}) { edges { node { key status } } } } } } }`;
    expect((await gql(api.url, query(5))).errors).toBeUndefined();
    const big = await gql(api.url, query(100));
    expect(big.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
    expect(big.errors?.[0]?.message).toMatch(/^the query costs \d+; the limit is 2000/);
  });

  it('prices a phases page size the rule cannot see at the largest phases page (1,000), other lists at 100', async () => {
    const phases = await gql(api.url, 'query($n: Int) { phases(first: $n) { edges { node { name } } } }', {});
    expect(phases.errors?.[0]?.message).toMatch(/^the query costs 3001; the limit is 2000/);
    const phase = await gql(api.url, 'query($n: Int) { phase(cluster: "prod", namespace: "shop", name: "web") { resources(first: $n) { edges { node { key } } } } }', {});
    expect(phase.errors).toBeUndefined();
  });

  it('refuses introspection when it is switched off, and still answers ordinary queries', async () => {
    const result = await gql(api.url, '{ __schema { types { name } } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await gqlData(api.url, '{ about { version } }')).toEqual({ about: { version: 'test' } });
  });

  it('refuses a body over the size cap with 413', async () => {
    const res = await fetch(api.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ about { version } } #${'x'.repeat(1024 * 1024)}` }) });
    expect(res.status).toBe(413);
  });
});

describe('CSRF prevention', () => {
  it('refuses a simple GET without a preflight-forcing header', async () => {
    const res = await fetch(`${api.url}?query=${encodeURIComponent('{ about { version } }')}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('CSRF');
  });

  it('refuses a text/plain POST (a "simple" cross-site request)', async () => {
    const res = await fetch(api.url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: '{ about { version } }' }) });
    expect(res.status).toBe(400);
  });

  it('answers a GET that carries apollo-require-preflight', async () => {
    const res = await fetch(`${api.url}?query=${encodeURIComponent('{ about { version } }')}`, { headers: { 'apollo-require-preflight': 'true' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { about: { version: 'test' } } });
  });
});
