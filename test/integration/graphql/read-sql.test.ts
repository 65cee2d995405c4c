/**
 * The read repositories run as named prepared statements on the pool Prisma shares: each
 * connection prepares a statement once and reuses it, and the rows are the ones Prisma's
 * `$queryRaw` gave for the same statement, at the edges of intervals ([from, to): a status that
 * changed at T is the new one at T).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../../src/generated/prisma/client.ts';
import { createDbOnPool, type Db } from '../../../src/store/prisma.ts';
import { createHistoryReader, type HistoryReader } from '../../../src/store/read-history.ts';
import { createPhaseReader, type PhaseReader } from '../../../src/store/read-phases.ts';
import { createReadSql } from '../../../src/store/read-sql.ts';
import { FULL_ACCESS } from '../../../src/store/read-types.ts';
import { insertPhaseInterval, insertResourceInterval } from '../../helpers/history-rows.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';

let database: TestDatabase;
let pool: pg.Pool;
let db: Db;
let phases: PhaseReader;
let history: HistoryReader;
let phaseId: number;

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const at = (m: number) => new Date(T0 + m * 60_000);
const KEY = 'apps/Deployment/shop/api';
const WEB_KEY = 'apps/Deployment/shop/web';

beforeAll(async () => {
  database = await createTestDatabase('read_sql');
  // One connection, so the test sees the statements that connection prepared.
  pool = new pg.Pool({ connectionString: database.url, max: 1 });
  db = createDbOnPool(pool);
  const cluster = await db.cluster.create({ data: { name: 'c1', reachable: true, lastGoodReadAt: at(30) } });
  const phase = await db.phase.create({
    data: {
      clusterId: cluster.id,
      sourceKind: 'cli-utils',
      namespace: 'shop',
      name: 'api',
      firstSeenAt: at(0),
      lastSeenAt: at(0),
    },
  });
  phaseId = phase.id;
  await insertPhaseInterval(db, {
    phaseId,
    status: 'InProgress',
    from: at(0),
    to: at(10),
    summary: { InProgress: 1 },
    worstResource: KEY,
  });
  await insertPhaseInterval(db, { phaseId, status: 'Current', from: at(10), to: at(20), summary: { Current: 1 } });
  await insertPhaseInterval(db, {
    phaseId,
    status: 'Failed',
    from: at(20),
    to: null,
    summary: { Failed: 1 },
    worstResource: KEY,
    message: 'crash loop',
  });
  await insertResourceInterval(db, { phaseId, key: KEY, status: 'InProgress', from: at(0), to: at(10) });
  await insertResourceInterval(db, { phaseId, key: KEY, status: 'Current', from: at(10), to: at(20) });
  await insertResourceInterval(db, {
    phaseId,
    key: KEY,
    status: 'Failed',
    message: 'crash loop',
    from: at(20),
    to: null,
  });
  // A phase whose worst resource has been Failed over two contiguous intervals after a gap in the record.
  const web = await db.phase.create({
    data: {
      clusterId: cluster.id,
      sourceKind: 'cli-utils',
      namespace: 'shop',
      name: 'web',
      firstSeenAt: at(0),
      lastSeenAt: at(0),
    },
  });
  await insertPhaseInterval(db, {
    phaseId: web.id,
    status: 'Failed',
    from: at(0),
    to: null,
    summary: { Failed: 1 },
    worstResource: WEB_KEY,
  });
  await insertResourceInterval(db, { phaseId: web.id, key: WEB_KEY, status: 'Failed', from: at(0), to: at(5) });
  await insertResourceInterval(db, { phaseId: web.id, key: WEB_KEY, status: 'Failed', from: at(8), to: at(15) });
  await insertResourceInterval(db, {
    phaseId: web.id,
    key: WEB_KEY,
    status: 'Failed',
    message: 'still failing',
    from: at(15),
    to: null,
  });
  phases = createPhaseReader(db);
  history = createHistoryReader(db);
});

/** Runs `fn` and counts the statements sent on the pool meanwhile. */
async function countStatements<T>(fn: () => Promise<T>): Promise<{ result: T; count: number }> {
  const query = pool.query;
  let count = 0;
  pool.query = ((...args: unknown[]) => {
    count += 1;
    return (query as (...a: unknown[]) => unknown).apply(pool, args);
  }) as typeof pool.query;
  try {
    return { result: await fn(), count };
  } finally {
    pool.query = query;
  }
}

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe('read statements', () => {
  it.each([
    ['the first instant of the first interval', 0, 'InProgress'],
    ['the last millisecond before a change', 10 - 1 / 60_000, 'InProgress'],
    ['the instant of a change (the new status)', 10, 'Current'],
    ['the instant the current status began', 20, 'Failed'],
    ['long after the last change', 500, 'Failed'],
  ])('phaseStatusAt %s', async (_name, minute, status) => {
    expect((await history.phaseStatusAt(phaseId, at(minute)))?.status).toBe(status);
  });

  it('finds nothing before the first interval', async () => {
    expect(await history.phaseStatusAt(phaseId, at(-1))).toBeNull();
    expect((await history.listResources(phaseId, { at: at(-1), first: 10 })).items).toEqual([]);
  });

  it('reads a resource at the instant of a change as its new status', async () => {
    const page = await history.listResources(phaseId, { at: at(10), first: 10 });
    expect(page.items.map((r) => [r.key, r.status, r.from, r.to])).toEqual([[KEY, 'Current', at(10), at(20)]]);
  });

  it('pages intervals overlapping [from, to) with the same edges as before', async () => {
    // An interval ending exactly at `from` is not in the window; one starting exactly at `to` is not either.
    const page = await history.listPhaseIntervals(phaseId, { range: { from: at(10), to: at(20) }, first: 10 });
    expect(page.items.map((i) => [i.status, i.from, i.to])).toEqual([['Current', at(10), at(20)]]);
    const all = await history.listPhaseIntervals(phaseId, { range: { from: at(0), to: at(60) }, first: 2 });
    expect(all.items.map((i) => i.status)).toEqual(['InProgress', 'Current']);
    expect(all.hasMore).toBe(true);
    const rest = await history.listPhaseIntervals(phaseId, {
      range: { from: at(0), to: at(60) },
      first: 2,
      after: { from: at(10), id: String(at(10).getTime()) },
    });
    expect(rest.items.map((i) => [i.status, i.from, i.to, i.detail?.message])).toEqual([
      ['Failed', at(20), null, 'crash loop'],
    ]);
    expect(rest.hasMore).toBe(false);
  });

  it('pages intervals without their detail when asked, the same intervals otherwise', async () => {
    const full = await history.listPhaseIntervals(phaseId, { range: { from: at(0), to: at(60) }, first: 10 });
    const bare = await history.listPhaseIntervals(phaseId, {
      range: { from: at(0), to: at(60) },
      first: 10,
      detail: false,
    });
    expect(bare.items).toEqual(full.items.map((i) => ({ ...i, detail: undefined })));
    expect(full.items.map((i) => i.detail)).toEqual([
      { message: '', summary: { InProgress: 1 }, worstResource: KEY },
      { message: '', summary: { Current: 1 }, worstResource: null },
      { message: 'crash loop', summary: { Failed: 1 }, worstResource: KEY },
    ]);
  });

  it('gives the rows Prisma gave for the same statement', async () => {
    const statement = Prisma.sql`
      SELECT s."phaseId", s."status", d."body", s."conditionTimes", s."stale", s."from", s."to"
      FROM "PhaseStatusInterval" s JOIN "StatusDetail" d ON d."id" = s."detailId"
      WHERE s."phaseId" = ${phaseId}::int AND s."from" <= ${at(10)} AND s."to" > ${at(10)} ORDER BY s."from"`;
    const prepared = await createReadSql(db).query<Record<string, unknown>>(statement);
    const viaPrisma = await db.$queryRaw<Record<string, unknown>[]>(statement);
    expect(prepared).toHaveLength(1);
    expect(prepared).toEqual(viaPrisma);
  });

  it('reads a page of phases with since, worst resource and its since as the separate reads give them', async () => {
    const page = await phases.listPhases(FULL_ACCESS, { filter: {}, order: 'NAME', first: 10 });
    expect(page.items.map((p) => p.name)).toEqual(['api', 'web']);
    for (const phase of page.items) {
      const [since] = await phases.currentRunStarts([phase.id]);
      expect(phase.since).toEqual(since?.from);
      const key = phase.current?.worstResource as string;
      const [resource] = await history.getCurrentResources([{ phaseId: phase.id, key }]);
      const [run] = await history.resourceRunStarts([{ phaseId: phase.id, key, at: resource!.from }]);
      expect(phase.worstResource).toEqual({ ...resource, since: run?.from });
    }
    // web's resource: Failed since 8 (two contiguous intervals; the one before ended at 5, a gap).
    expect(page.items[1]?.worstResource).toMatchObject({
      key: WEB_KEY,
      status: 'Failed',
      message: 'still failing',
      from: at(15),
      since: at(8),
    });
  });

  it('answers concurrent identity lookups in one statement, each with its own answer and scope', async () => {
    const asks = [
      () => phases.findPhases(FULL_ACCESS, { cluster: 'c1', namespace: 'shop', name: 'api' }),
      () => phases.findPhases(FULL_ACCESS, { cluster: 'c1', namespace: 'shop', name: 'web', source: 'cli-utils' }),
      () => phases.findPhases(FULL_ACCESS, { cluster: 'c1', namespace: 'shop', name: 'web', source: 'flux' }),
      () =>
        phases.findPhases(
          { clusters: ['elsewhere'], namespaces: [] },
          { cluster: 'c1', namespace: 'shop', name: 'api' },
        ),
      () =>
        phases.findPhases(
          { clusters: [], namespaces: ['shop'] },
          { cluster: 'c1', namespace: 'shop', name: 'nothing' },
        ),
    ];
    const sequential = [];
    for (const ask of asks) sequential.push(await ask());
    const { result: together, count } = await countStatements(() => Promise.all(asks.map((ask) => ask())));
    expect(together).toEqual(sequential);
    expect(together.map((found) => found.map((p) => p.name))).toEqual([['api'], ['web'], [], [], []]);
    // One statement per distinct scope: three here.
    expect(count).toBe(3);
  });

  it('answers concurrent history pages in one statement, each its own window, page and cursor', async () => {
    const asks = [
      () => history.listPhaseIntervals(phaseId, { range: { from: at(0), to: at(60) }, first: 2 }),
      () =>
        history.listPhaseIntervals(phaseId, {
          range: { from: at(0), to: at(60) },
          first: 2,
          after: { from: at(10), id: String(at(10).getTime()) },
        }),
      () => history.listPhaseIntervals(phaseId, { range: { from: at(10), to: at(20) }, first: 10 }),
      () => history.listPhaseIntervals(phaseId, { range: { from: at(30), to: at(40) }, first: 1 }),
      () => history.listPhaseIntervals(phaseId + 1000, { range: { from: at(0), to: at(60) }, first: 5 }),
    ];
    const sequential = [];
    for (const ask of asks) sequential.push(await ask());
    const { result: together, count } = await countStatements(() => Promise.all(asks.map((ask) => ask())));
    expect(together).toEqual(sequential);
    expect(together.map((page) => [page.items.map((i) => i.status), page.hasMore])).toEqual([
      [['InProgress', 'Current'], true],
      [['Failed'], false],
      [['Current'], false],
      [['Failed'], false],
      [[], false],
    ]);
    expect(count).toBe(1);
  });

  it('answers concurrent lookups with history pages in one statement per shape and scope, each its phases with the page listPhaseIntervals gives', async () => {
    const window = { from: at(0), to: at(60) };
    const page = (key: string, first: number, after?: Date, detail = true) => ({
      key,
      range: window,
      first,
      detail,
      ...(after ? { after } : {}),
    });
    const api = { cluster: 'c1', namespace: 'shop', name: 'api' };
    const asks = [
      () => phases.findPhasesWithHistory(FULL_ACCESS, api, page('a', 2)),
      () => phases.findPhasesWithHistory(FULL_ACCESS, api, page('b', 2, at(10))),
      () => phases.findPhasesWithHistory(FULL_ACCESS, { ...api, source: 'flux' }, page('c', 2)),
      () => phases.findPhasesWithHistory({ clusters: ['elsewhere'], namespaces: [] }, api, page('d', 2)),
      () => phases.findPhasesWithHistory(FULL_ACCESS, { id: phaseId }, page('e', 1, undefined, false)),
      () => phases.findPhasesWithHistory(FULL_ACCESS, { id: phaseId + 1000 }, page('f', 1, undefined, false)),
    ];
    const { result: together, count } = await countStatements(() => Promise.all(asks.map((ask) => ask())));
    // By identity in full access, by identity in another scope, by id without the detail.
    expect(count).toBe(3);
    const [lookup] = await phases.findPhases(FULL_ACCESS, api);
    const { history: _history, ...withoutPage } = together[0]?.[0] ?? {};
    expect(withoutPage).toEqual(lookup);
    expect(together.map((found) => found.map((p) => [p.name, p.history?.key]))).toEqual([
      [['api', 'a']],
      [['api', 'b']],
      [],
      [],
      [['api', 'e']],
      [],
    ]);
    expect(together[0]?.[0]?.history?.page).toEqual(
      await history.listPhaseIntervals(phaseId, { range: window, first: 2 }),
    );
    expect(together[1]?.[0]?.history?.page).toEqual(
      await history.listPhaseIntervals(phaseId, {
        range: window,
        first: 2,
        after: { from: at(10), id: String(at(10).getTime()) },
      }),
    );
    expect(together[4]?.[0]?.history?.page).toEqual(
      await history.listPhaseIntervals(phaseId, { range: window, first: 1, detail: false }),
    );
    expect(together[4]?.[0]?.history?.page.items.map((i) => [i.status, i.detail])).toEqual([['InProgress', undefined]]);
    expect(together[4]?.[0]?.history?.page.hasMore).toBe(true);
  });

  it('carries on when the server closes an idle connection of the pool (the next read opens another)', async () => {
    // A client whose pool only the read side has used: Prisma never connected, so never listened on the pool.
    const readOnlyPool = new pg.Pool({ connectionString: database.url, max: 1 });
    const readOnly = createDbOnPool(readOnlyPool);
    try {
      const reader = createPhaseReader(readOnly);
      expect(
        (await reader.findPhases(FULL_ACCESS, { cluster: 'c1', namespace: 'shop', name: 'api' })).map((p) => p.name),
      ).toEqual(['api']);
      const [{ pid }] = (await readOnlyPool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [
        { pid: number },
      ];
      await pool.query('SELECT pg_terminate_backend($1)', [pid]);
      const deadline = Date.now() + 5_000;
      while (readOnlyPool.totalCount > 0 && Date.now() < deadline)
        await new Promise((resolve) => setImmediate(resolve));
      expect(readOnlyPool.totalCount).toBe(0);
      expect(
        (await reader.findPhases(FULL_ACCESS, { cluster: 'c1', namespace: 'shop', name: 'api' })).map((p) => p.name),
      ).toEqual(['api']);
    } finally {
      await readOnly.$disconnect();
    }
  });

  it('prepares each statement once per connection and reuses it', async () => {
    await phases.findPhases(FULL_ACCESS, { cluster: 'c1', namespace: 'shop', name: 'api' });
    const prepared = async () =>
      (await pool.query<{ name: string }>(`SELECT name FROM pg_prepared_statements WHERE name LIKE 'plg_%'`)).rows.map(
        (r) => r.name,
      );
    const before = await prepared();
    expect(before.length).toBeGreaterThan(0);
    const found = await phases.findPhases(FULL_ACCESS, { cluster: 'c1', namespace: 'shop', name: 'api' });
    expect(found.map((p) => [p.name, p.current?.status])).toEqual([['api', 'Failed']]);
    expect(await prepared()).toEqual(before);
  });
});
