/**
 * A page of phases with summaries, since and worst resources costs the same number of SQL
 * statements for 10 phases as for 100: one, which reads the page with each phase's since, worst
 * resource and its since (the per-request DataLoaders batch these where a read did not bring them).
 * A phase's history page costs one statement with the phase's lookup, and the history pages of
 * many phases one statement between them.
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
  const cluster = await client.cluster.create({
    data: { name: 'fleet', reachable: true, lastGoodReadAt: minutes(100) },
  });
  await client.phase.createMany({
    data: Array.from({ length: count }, (_, i) => ({
      clusterId: cluster.id,
      sourceKind: 'cli-utils',
      namespace: 'apps',
      name: `phase-${String(i).padStart(3, '0')}`,
      firstSeenAt: minutes(0),
      lastSeenAt: minutes(0),
    })),
  });
  const phases = await client.phase.findMany({ select: { id: true } });
  const key = (id: number) => `apps/Deployment/apps/app-${id}`;
  for (const { id } of phases) {
    await insertPhaseInterval(client, {
      phaseId: id,
      status: 'Current',
      summary: { Current: 2 },
      from: minutes(0),
      to: minutes(10),
    });
    await insertPhaseInterval(client, {
      phaseId: id,
      status: 'Failed',
      summary: { Current: 1, Failed: 1 },
      worstResource: key(id),
      message: 'failing',
      from: minutes(10),
      to: null,
    });
    await insertResourceInterval(client, {
      phaseId: id,
      key: key(id),
      status: 'Current',
      from: minutes(0),
      to: minutes(10),
    });
    await insertResourceInterval(client, {
      phaseId: id,
      key: key(id),
      status: 'Failed',
      message: 'crash loop',
      from: minutes(10),
      to: null,
    });
    await insertResourceInterval(client, {
      phaseId: id,
      key: `/Service/apps/svc-${id}`,
      status: 'Current',
      from: minutes(0),
      to: null,
    });
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

type Result = {
  phases: {
    edges: {
      node: {
        name: string;
        status: string;
        since: string;
        summary: { total: number };
        worstResource: { key: string; status: string; message: string; since: string };
      };
    }[];
  };
};

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
    expect(node).toMatchObject({
      name: 'phase-099',
      status: 'Failed',
      since: minutes(10).toISOString(),
      summary: { total: 2 },
    });
    expect(node?.worstResource).toMatchObject({
      status: 'Failed',
      message: 'crash loop',
      since: minutes(10).toISOString(),
    });
    // The page with when each status began, the worst resources and when their statuses began.
    expect(ten.count).toBe(1);
    expect(hundred.count).toBe(1);
  });
});

type HistoryNode = { status: string; from: string; to: string | null; message?: string };
type HistoryPage = {
  name: string;
  history: { edges: { cursor: string; node: HistoryNode }[]; pageInfo: { hasNextPage: boolean } };
};

/** Runs a query twice (the first run interpreted, the second compiled) and counts the statements of each. */
async function countBoth<T>(
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ counts: number[]; data: T }> {
  const counts: number[] = [];
  let data: T | undefined;
  for (let run = 0; run < 2; run++) {
    const before = statements;
    data = await gqlData<T>(api.url, query, variables);
    counts.push(statements - before);
  }
  return { counts, data: data as T };
}

describe('history page statement count', () => {
  const failed = { status: 'Failed', from: minutes(10).toISOString(), to: null };
  const current = { status: 'Current', from: minutes(0).toISOString(), to: minutes(10).toISOString() };
  let ids: Map<string, number>;

  beforeAll(async () => {
    ids = new Map((await db.phase.findMany({ select: { id: true, name: true } })).map((p) => [p.name, p.id]));
    // phase-001 has a namesake from another source whose inventory was deleted: the live one is meant, and its page given.
    const fleet = await db.cluster.findUniqueOrThrow({ where: { name: 'fleet' } });
    const gone = await db.phase.create({
      data: {
        clusterId: fleet.id,
        sourceKind: 'flux',
        namespace: 'apps',
        name: 'phase-001',
        firstSeenAt: minutes(0),
        lastSeenAt: minutes(5),
        deletedAt: minutes(5),
      },
    });
    await insertPhaseInterval(db, {
      phaseId: gone.id,
      status: 'InProgress',
      summary: { InProgress: 1 },
      from: minutes(0),
      to: minutes(5),
    });
  });

  it.each([
    ['by cluster, namespace and name', 'phase(cluster: "fleet", namespace: "apps", name: "phase-007")'],
    ['by id', 'phase(id: "ID")'],
  ])('is one statement for a phase named %s, with the page asked', async (_label, phase) => {
    const query = `{ ${phase.replace('ID', String(ids.get('phase-007')))} { name history(from: "${minutes(0).toISOString()}") { edges { cursor node { status from to message } } pageInfo { hasNextPage } } } }`;
    const { counts, data } = await countBoth<{ phase: HistoryPage }>(query);
    expect(data.phase.name).toBe('phase-007');
    expect(data.phase.history.edges.map((e) => e.node)).toEqual([
      { ...current, message: '' },
      { ...failed, message: 'failing' },
    ]);
    expect(data.phase.history.pageInfo.hasNextPage).toBe(false);
    // Was two, one after the other: the phase, then its page.
    expect(counts).toEqual([1, 1]);
  });

  it('is one statement for each page of a phase walked with cursors, each its own window', async () => {
    const query = `query($after: String, $to: DateTime) { phase(cluster: "fleet", namespace: "apps", name: "phase-001") { name history(from: "${minutes(0).toISOString()}", to: $to, first: 1, after: $after) { edges { cursor node { status from to } } pageInfo { hasNextPage } } } }`;
    const first = await countBoth<{ phase: HistoryPage }>(query);
    expect(first.data.phase.history.edges.map((e) => e.node)).toEqual([current]);
    expect(first.data.phase.history.pageInfo.hasNextPage).toBe(true);
    const second = await countBoth<{ phase: HistoryPage }>(query, { after: first.data.phase.history.edges[0]?.cursor });
    expect(second.data.phase.history.edges.map((e) => e.node)).toEqual([failed]);
    expect(second.data.phase.history.pageInfo.hasNextPage).toBe(false);
    const early = await countBoth<{ phase: HistoryPage }>(query, { to: minutes(5).toISOString() });
    expect(early.data.phase.history.edges.map((e) => e.node)).toEqual([current]);
    expect(early.data.phase.history.pageInfo.hasNextPage).toBe(false);
    expect([first.counts, second.counts, early.counts]).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
  });

  it('is one statement for several phases asked by name in one query', async () => {
    const page = `history(from: "${minutes(0).toISOString()}") { edges { node { status from to } } pageInfo { hasNextPage } }`;
    const { counts, data } = await countBoth<Record<string, HistoryPage | null>>(
      `{ a: phase(cluster: "fleet", namespace: "apps", name: "phase-010") { name ${page} } b: phase(cluster: "fleet", namespace: "apps", name: "phase-020") { name ${page} }
         none: phase(cluster: "fleet", namespace: "apps", name: "no-such-phase") { name ${page} } }`,
    );
    expect(data).toEqual({
      a: {
        name: 'phase-010',
        history: { edges: [{ node: current }, { node: failed }], pageInfo: { hasNextPage: false } },
      },
      b: {
        name: 'phase-020',
        history: { edges: [{ node: current }, { node: failed }], pageInfo: { hasNextPage: false } },
      },
      none: null,
    });
    expect(counts).toEqual([1, 1]);
  });

  it('reads two history pages of one phase as before: the lookup with one, then the other', async () => {
    const { counts, data } = await countBoth<{
      phase: { early: { edges: { node: HistoryNode }[] }; late: { edges: { node: HistoryNode }[] } };
    }>(
      `{ phase(cluster: "fleet", namespace: "apps", name: "phase-030") { early: history(from: "${minutes(0).toISOString()}", to: "${minutes(5).toISOString()}") { edges { node { status from to } } }
         late: history(from: "${minutes(20).toISOString()}") { edges { node { status from to } } } } }`,
    );
    expect(data.phase.early.edges.map((e) => e.node)).toEqual([current]);
    expect(data.phase.late.edges.map((e) => e.node)).toEqual([failed]);
    expect(counts).toEqual([2, 2]);
  });

  it.each([10, 50])(
    'is the same for the history pages of %i phases of a list (the list, then one statement for every page)',
    async (first) => {
      const { counts, data } = await countBoth<{ phases: { edges: { node: HistoryPage }[] } }>(
        `query($first: Int!) { phases(first: $first) { edges { node { name history(from: "${minutes(0).toISOString()}", first: 5) { edges { node { status from to } } pageInfo { hasNextPage } } } } } }`,
        { first },
      );
      expect(data.phases.edges).toHaveLength(first);
      for (const edge of data.phases.edges)
        expect(edge.node.history.edges.map((e) => e.node)).toEqual([current, failed]);
      expect(counts).toEqual([2, 2]);
    },
  );
});
