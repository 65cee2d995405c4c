/**
 * A page of phases with summaries, since and worst resources costs the same number of SQL
 * statements for 10 phases as for 100: one, which reads the page with each phase's since, worst
 * resource and its since (the per-request DataLoaders batch these where a read did not bring them).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbOnPool, type Db } from '../../../src/store/prisma.ts';
import { insertPhaseInterval, insertResourceInterval } from '../../helpers/history-rows.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gqlData, startTestApi, type TestApi } from './helpers.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let statements = 0;

const T0 = Date.parse('2026-02-01T00:00:00.000Z');
const minutes = (m: number) => new Date(T0 + m * 60_000);

async function seedFleet(client: Db, count: number): Promise<void> {
  const cluster = await client.cluster.create({ data: { name: 'fleet', reachable: true, lastGoodReadAt: minutes(100) } });
  await client.phase.createMany({
    data: Array.from({ length: count }, (_, i) => ({ clusterId: cluster.id, sourceKind: 'cli-utils', namespace: 'apps', name: `phase-${String(i).padStart(3, '0')}`, firstSeenAt: minutes(0), lastSeenAt: minutes(0) })),
  });
  const phases = await client.phase.findMany({ select: { id: true } });
  const key = (id: number) => `apps/Deployment/apps/app-${id}`;
  for (const { id } of phases) {
    await insertPhaseInterval(client, { phaseId: id, status: 'Current', summary: { Current: 2 }, from: minutes(0), to: minutes(10) });
    await insertPhaseInterval(client, { phaseId: id, status: 'Failed', summary: { Current: 1, Failed: 1 }, worstResource: key(id), message: 'failing', from: minutes(10), to: null });
    await insertResourceInterval(client, { phaseId: id, key: key(id), status: 'Current', from: minutes(0), to: minutes(10) });
    await insertResourceInterval(client, { phaseId: id, key: key(id), status: 'Failed', message: 'crash loop', from: minutes(10), to: null });
    await insertResourceInterval(client, { phaseId: id, key: `/Service/apps/svc-${id}`, status: 'Current', from: minutes(0), to: null });
  }
}

beforeAll(async () => {
  database = await createTestDatabase('gql_nplus1');
  // Every statement outside a transaction, Prisma's and the read side's prepared ones, goes through pool.query.
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    statements += 1;
    return query(...args);
  }) as typeof pool.query;
  db = createDbOnPool(pool);
  await seedFleet(db, 100);
  api = await startTestApi({ db, anonymousRead: true });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

const QUERY = `query($first: Int!) { phases(first: $first) { edges { node {
  name status since message summary { current failed total }
  worstResource { key status message since }
} } } }`;

type Result = { phases: { edges: { node: { name: string; status: string; since: string; summary: { total: number }; worstResource: { key: string; status: string; message: string; since: string } } }[] } };

async function countStatements(first: number): Promise<{ count: number; data: Result }> {
  const before = statements;
  const data = await gqlData<Result>(api.url, QUERY, { first });
  return { count: statements - before, data };
}

describe('phase list statement count', () => {
  it('is the same for 10 and 100 phases (one statement)', async () => {
    const ten = await countStatements(10);
    const hundred = await countStatements(100);
    expect(ten.data.phases.edges).toHaveLength(10);
    expect(hundred.data.phases.edges).toHaveLength(100);
    const node = hundred.data.phases.edges[99]?.node;
    expect(node).toMatchObject({ name: 'phase-099', status: 'Failed', since: minutes(10).toISOString(), summary: { total: 2 } });
    expect(node?.worstResource).toMatchObject({ status: 'Failed', message: 'crash loop', since: minutes(10).toISOString() });
    // The page with when each status began, the worst resources and when their statuses began.
    expect(ten.count).toBe(1);
    expect(hundred.count).toBe(1);
  });
});
