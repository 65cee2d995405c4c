/**
 * `database.readUrl` (issue #23): the API's queries read a second database while every write, token
 * check and subscription catch-up stays on the primary. No streaming replica runs here, so the
 * "replica" is a second database seeded like the primary and then made to differ: an answer shows
 * which database it came from. phaselog runs in-process with role `api`, as an API replica would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPhaselog, type RunningPhaselog } from '../../src/app.ts';
import { createToken } from '../../src/auth/tokens.ts';
import { loadConfig } from '../../src/config.ts';
import { createApiTokenStore } from '../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../src/store/prisma.ts';
import { insertStatusChange } from '../helpers/history-rows.ts';
import { freePort } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';
import { gql, wsClient } from '../integration/graphql/helpers.ts';
import { at, seedHistory, type Seeded } from '../integration/graphql/seed.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-read-db-'));
let primary: TestDatabase;
let replica: TestDatabase;
let primaryDb: Db;
let replicaDb: Db;
let seeded: Seeded;
let adminSecret: string;
let phaselog: RunningPhaselog | undefined;

beforeAll(async () => {
  [primary, replica] = await Promise.all([createTestDatabase('read_primary'), createTestDatabase('read_replica')]);
  [seeded] = await Promise.all([seedHistory(primary.url), seedHistory(replica.url)]);
  primaryDb = createDb(primary.url, { poolSize: 2 });
  replicaDb = createDb(replica.url, { poolSize: 2 });
  await primaryDb.cluster.create({ data: { name: 'only-on-primary' } });
  await replicaDb.cluster.create({ data: { name: 'only-on-replica' } });
  // As a hot standby refuses writes: anything phaselog tried to write there would fail (SQLSTATE 25006).
  await replicaDb.$executeRawUnsafe(`ALTER DATABASE ${replica.name} SET default_transaction_read_only = on`);
  adminSecret = (await createToken(createApiTokenStore(primaryDb), { name: 'admin', scopes: ['admin'] })).secret;
});

afterEach(async () => {
  await phaselog?.close();
  phaselog = undefined;
});

afterAll(async () => {
  await primaryDb?.$disconnect();
  await replicaDb?.$disconnect();
  await primary?.drop();
  await replica?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts an API-only phaselog on the primary, reading from `readUrl` when given. */
async function startApi(
  readUrl?: string,
  extraEnv: Record<string, string> = {},
): Promise<{ url: string; base: string; wsUrl: string }> {
  const config = loadConfig(
    {
      DATABASE_URL: primary.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_PORT: '0',
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_ROLE: 'api',
      PHASELOG_ANONYMOUS_READ: 'true',
      PHASELOG_REDIS_PREFIX: uniquePrefix('read-db'),
      ...(readUrl === undefined ? {} : { PHASELOG_DATABASE_READ_URL: readUrl }),
      ...extraEnv,
    },
    dir,
  );
  phaselog = await startPhaselog(config, pino({ level: 'silent' }));
  const base = phaselog.url as string;
  return { base, url: `${base}/graphql`, wsUrl: `${base.replace(/^http/, 'ws')}/graphql` };
}

async function readyz(
  base: string,
): Promise<{ status: number; body: { status: string; checks: Record<string, { ok: boolean; code?: string }> } }> {
  const res = await fetch(`${base}/readyz`);
  return {
    status: res.status,
    body: (await res.json()) as { status: string; checks: Record<string, { ok: boolean; code?: string }> },
  };
}

async function clusterNames(url: string): Promise<string[]> {
  const result = await gql<{ clusters: { name: string }[] }>(url, '{ clusters { name } }');
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return (result.data?.clusters ?? []).map((c) => c.name).sort();
}

const CREATE = 'mutation($name: String!) { createToken(name: $name, scopes: [read]) { secret token { name } } }';
const REVOKE = 'mutation($name: String!) { revokeToken(name: $name) }';

async function tokenRow(db: Db, name: string) {
  return db.apiToken.findFirst({ where: { name }, select: { name: true, revokedAt: true } });
}

/** The first event of a phaseStatusChanged subscription resumed after `after`. */
async function firstResumedChange(wsUrl: string, after: bigint): Promise<{ seq: string; toStatus: string | null }> {
  const client = wsClient(wsUrl);
  const iterator = client
    .iterate<{ phaseStatusChanged: { seq: string; toStatus: string | null } }>({
      query: 'subscription($after: String) { phaseStatusChanged(after: $after) { seq toStatus } }',
      variables: { after: String(after) },
    })
    [Symbol.asyncIterator]();
  try {
    const result = await iterator.next();
    if (result.done || result.value.errors || !result.value.data)
      throw new Error(`no event: ${JSON.stringify(result.value)}`);
    return result.value.data.phaseStatusChanged;
  } finally {
    await iterator.return?.();
    await client.dispose();
  }
}

/** A phase change written to the primary only, as a worker writes it before the replica has it. */
async function changeOnPrimaryOnly(minutes: number): Promise<{ before: bigint; seq: bigint }> {
  const before = (await primaryDb.statusChange.aggregate({ _max: { seq: true } }))._max.seq ?? 0n;
  const seq = await insertStatusChange(primaryDb, {
    clusterId: seeded.prod,
    phaseId: seeded.web,
    scope: 'phase',
    at: at(minutes),
    fromStatus: 'Current',
    toStatus: 'Failed',
    resourceKey: null,
    message: 'only on the primary',
  });
  return { before, seq };
}

describe('database.readUrl', () => {
  it('answers queries from the read database while token writes and checks use the primary', async () => {
    const api = await startApi(replica.url);
    expect(await clusterNames(api.url)).toEqual(['only-on-replica', 'prod', 'staging']);
    expect(await readyz(api.base)).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: { database: { ok: true }, readDatabase: { ok: true }, redis: { ok: true }, migrations: { ok: true } },
      },
    });

    const created = await gql<{ createToken: { secret: string; token: { name: string } } }>(
      api.url,
      CREATE,
      { name: 'ci' },
      adminSecret,
    );
    expect(created.errors).toBeUndefined();
    expect(await tokenRow(primaryDb, 'ci')).toEqual({ name: 'ci', revokedAt: null });
    expect(await tokenRow(replicaDb, 'ci')).toBeNull();
    // The token exists on the primary only, and works at once: authentication reads the primary.
    const secret = created.data?.createToken.secret as string;
    expect((await gql(api.url, '{ clusters { name } }', {}, secret)).status).toBe(200);
    const listed = await gql<{ tokens: { name: string }[] }>(api.url, '{ tokens { name } }', {}, adminSecret);
    expect(listed.data?.tokens.map((t) => t.name).sort()).toEqual(['admin', 'ci']);

    const revoked = await gql<{ revokeToken: boolean }>(api.url, REVOKE, { name: 'ci' }, adminSecret);
    expect(revoked.data?.revokeToken).toBe(true);
    expect((await tokenRow(primaryDb, 'ci'))?.revokedAt).toBeInstanceOf(Date);
    const refused = await gql(api.url, '{ clusters { name } }', {}, secret);
    expect(refused.status).toBe(401);
  });

  it('answers every kind of query from a read-only replica (nothing on the query side writes)', async () => {
    const api = await startApi(replica.url);
    const queries = [
      `{ phases(first: 100) { edges { node { id name status since stale summary { total } worstResource { key status since } resources(first: 10) { edges { node { key status since } } } } } } }`,
      `{ phase(id: "${seeded.web}") { history(from: "2026-01-01T00:00:00Z", first: 10) { edges { node { from to status message summary { total } } } } statusAt(at: "2026-01-01T00:25:00Z") { status } manifest { entries { kind name } } manifests(first: 5) { edges { cursor } } changes(first: 5) { edges { node { seq } } } conditions { type } } }`,
      '{ statusChanges(first: 20) { edges { cursor node { seq toStatus } } } statusChangeHead }',
      `{ gate(phase: { id: "${seeded.ledger}" }, for: "1m") { passed } }`,
      '{ plans { name status } }',
      '{ auditReport(from: "2026-01-01T00:00:00Z", to: "2026-01-01T02:00:00Z") { format totals { __typename } phases { name availability } } }',
      '{ storedReports { id } notificationDeliveries(first: 10) { edges { cursor } } clusters { name reachable } about { version } viewer { name } }',
    ];
    for (const query of queries) {
      const result = await gql(api.url, query, {}, adminSecret);
      expect({ query, errors: result.errors }).toEqual({ query, errors: undefined });
    }
    // The replica does refuse writes, so the answers above wrote nothing there.
    const client = new pg.Client({ connectionString: replica.url });
    await client.connect();
    try {
      await expect(client.query(`INSERT INTO "Cluster" (name) VALUES ('written')`)).rejects.toMatchObject({
        code: '25006',
      });
    } finally {
      await client.end();
    }
  });

  it('resumes a subscription from the primary: a change the replica does not have yet is delivered', async () => {
    const api = await startApi(replica.url);
    const { before, seq } = await changeOnPrimaryOnly(70);
    expect(await replicaDb.statusChange.findUnique({ where: { seq } })).toBeNull();
    expect(await firstResumedChange(api.wsUrl, before)).toEqual({ seq: String(seq), toStatus: 'Failed' });
  });

  it('with the read database unreachable: queries fail with SERVICE_UNAVAILABLE, /readyz names it, and writes still reach the primary', async () => {
    const api = await startApi(`postgresql://postgres@127.0.0.1:${await freePort()}/phaselog`);
    const ready = await readyz(api.base);
    expect(ready).toEqual({
      status: 503,
      body: {
        status: 'not ready',
        checks: {
          database: { ok: true },
          readDatabase: { ok: false, code: 'UNAVAILABLE' },
          redis: { ok: true },
          migrations: { ok: true },
        },
      },
    });

    const failed = await gql(api.url, '{ clusters { name } }');
    expect(failed.data ?? null).toBeNull();
    expect(failed.errors?.map((e) => e.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(failed.errors?.[0]?.message).toMatch(
      /^the database is unavailable; try again later \(request id [0-9a-f-]+\)$/,
    );
    expect(failed.errors?.[0]?.message).not.toContain('127.0.0.1');

    // Nothing a client writes is lost: the mutation goes to the primary, which answers.
    const created = await gql(api.url, CREATE, { name: 'while-replica-down' }, adminSecret);
    expect(created.errors).toBeUndefined();
    expect(await tokenRow(primaryDb, 'while-replica-down')).toEqual({ name: 'while-replica-down', revokedAt: null });
    // Subscriptions do not read the replica at all.
    const { before, seq } = await changeOnPrimaryOnly(71);
    expect(await firstResumedChange(api.wsUrl, before)).toEqual({ seq: String(seq), toStatus: 'Failed' });
  });

  it('opens at most database.poolSize connections to the read database, however many queries overlap', async () => {
    const started = new Date();
    const api = await startApi(replica.url, { PHASELOG_DATABASE_POOL_SIZE: '3' });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        gql(
          api.url,
          '{ phases(first: 100) { edges { node { name since worstResource { key since } } } } statusChanges(first: 50) { edges { cursor } } }',
        ),
      ),
    );
    expect(answers.filter((a) => a.errors !== undefined)).toEqual([]);
    const opened = await primaryDb.$queryRaw<
      { n: bigint }[]
    >`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = ${replica.name} AND backend_start >= ${started}`;
    expect(Number(opened[0]?.n)).toBeGreaterThan(0);
    expect(Number(opened[0]?.n)).toBeLessThanOrEqual(3);
  });

  it('a readUrl equal to the primary URL works as without one (one pool, no second check)', async () => {
    const api = await startApi(primary.url);
    expect(await clusterNames(api.url)).toEqual(['only-on-primary', 'prod', 'staging']);
    expect((await readyz(api.base)).body.checks).toEqual({
      database: { ok: true },
      redis: { ok: true },
      migrations: { ok: true },
    });
  });
});
