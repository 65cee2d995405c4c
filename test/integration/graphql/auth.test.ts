/**
 * Bearer tokens: scopes, cluster/namespace restrictions (the same for queries, gates and WebSocket
 * operations), admin token management, anonymous access rules and the start-up refusal.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiWiring, decideAnonymousRead } from '../../../src/graphql/api-wiring.ts';
import { StartupError } from '../../../src/runtime/errors.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, wsClient, type TestApi } from './helpers.ts';
import { seedHistory, type Seeded } from './seed.ts';
import pino from 'pino';
import { createLogger } from '../../../src/runtime/logger.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let seeded: Seeded;
let admin: string;
let paymentsReader: string;

beforeAll(async () => {
  database = await createTestDatabase('gql_auth');
  seeded = await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  const tokens = createApiTokenStore(db);
  admin = (await createToken(tokens, { name: 'root', scopes: ['admin'] })).secret;
  paymentsReader = (
    await createToken(tokens, { name: 'payments-ci', scopes: ['read'], clusters: ['prod'], namespaces: ['payments'] })
  ).secret;
  api = await startTestApi({ db, anonymousRead: false });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

const PHASE_NAMES = '{ phases { edges { node { cluster namespace name } } } }';

describe('authentication', () => {
  it.each([
    ['no Authorization header', undefined],
    ['an unknown token', 'plg_not-a-real-token'],
    ['a token without the prefix', 'abc'],
  ])('refuses %s with 401 UNAUTHENTICATED', async (_label, token) => {
    const result = await gql(api.url, PHASE_NAMES, {}, token);
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('tells a caller who it is: its token name, scopes and restrictions (viewer)', async () => {
    const query = '{ viewer { name anonymous scopes clusters namespaces } }';
    expect((await gqlData<{ viewer: unknown }>(api.url, query, {}, paymentsReader)).viewer).toEqual({
      name: 'payments-ci',
      anonymous: false,
      scopes: ['read'],
      clusters: ['prod'],
      namespaces: ['payments'],
    });
    expect((await gqlData<{ viewer: unknown }>(api.url, query, {}, admin)).viewer).toEqual({
      name: 'root',
      anonymous: false,
      scopes: ['admin'],
      clusters: [],
      namespaces: [],
    });
  });

  it('stores only the sha256 of a secret, and shows the secret only when it is made', async () => {
    const rows = await db.apiToken.findMany({ orderBy: { name: 'asc' } });
    expect(rows.map((r) => r.name)).toEqual(['payments-ci', 'root']);
    const root = rows.find((r) => r.name === 'root');
    expect(root?.tokenHash).toBe(createHash('sha256').update(admin).digest('hex'));
    expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(admin);
    const listed = await gqlData<{ tokens: Record<string, unknown>[] }>(
      api.url,
      '{ tokens { name scopes clusters namespaces revokedAt } }',
      {},
      admin,
    );
    expect(listed.tokens).toEqual([
      { name: 'payments-ci', scopes: ['read'], clusters: ['prod'], namespaces: ['payments'], revokedAt: null },
      { name: 'root', scopes: ['admin'], clusters: [], namespaces: [], revokedAt: null },
    ]);
  });
});

describe('restrictions', () => {
  it('a restricted token sees only its clusters and namespaces in lists, lookups and the change log', async () => {
    const phases = await gqlData<{ phases: { edges: { node: unknown }[] } }>(api.url, PHASE_NAMES, {}, paymentsReader);
    expect(phases.phases.edges.map((e) => e.node)).toEqual([
      { cluster: 'prod', namespace: 'payments', name: 'ledger' },
    ]);
    const other = await gqlData<Record<string, unknown>>(
      api.url,
      `{ web: phase(id: "${seeded.web}") { name } clusters { name } }`,
      {},
      paymentsReader,
    );
    expect(other).toEqual({ web: null, clusters: [{ name: 'prod' }] });
    const changes = await gqlData<{
      statusChanges: { edges: { node: { phase: { name: string } | null; scope: string } }[] };
    }>(api.url, '{ statusChanges { edges { node { scope phase { name } } } } }', {}, paymentsReader);
    expect(changes.statusChanges.edges.map((e) => e.node)).toEqual([{ scope: 'phase', phase: { name: 'ledger' } }]);
  });

  it("a restricted token's change-log head is the newest change it may see, not the whole log's", async () => {
    const seqs = async (token?: string) =>
      (
        await gqlData<{ statusChanges: { edges: { node: { seq: string } }[] } }>(
          api.url,
          '{ statusChanges { edges { node { seq } } } }',
          {},
          token,
        )
      ).statusChanges.edges.map((e) => e.node.seq);
    const head = async (token?: string) =>
      (await gqlData<{ statusChangeHead: string | null }>(api.url, '{ statusChangeHead }', {}, token)).statusChangeHead;
    const mine = await seqs(paymentsReader);
    const all = await seqs(admin);
    expect(await head(paymentsReader)).toBe(mine.at(-1));
    // Naming another namespace's phase by id gets nothing either.
    const byIds = await gqlData<{ phases: { edges: { node: { name: string } }[] } }>(
      api.url,
      `{ phases(filter: { ids: ["${seeded.web}", "${seeded.ledger}"] }) { edges { node { name } } } }`,
      {},
      paymentsReader,
    );
    expect(byIds.phases.edges.map((e) => e.node.name)).toEqual(['ledger']);
    expect(await head(admin)).toBe(all.at(-1));
    expect(BigInt(all.at(-1) as string)).toBeGreaterThan(BigInt(mine.at(-1) as string));
    expect(
      (
        await gqlData<{ statusChangeHead: string | null }>(
          api.url,
          '{ statusChangeHead(filter: { cluster: "nowhere" }) }',
          {},
          admin,
        )
      ).statusChangeHead,
    ).toBeNull();
  });

  it('a restricted token reads the history only of phases it may see (the others are null, as if they did not exist)', async () => {
    const history = 'history(from: "2026-01-01T00:00:00Z") { edges { node { status } } }';
    const answer = await gqlData<Record<string, unknown>>(
      api.url,
      `{ byId: phase(id: "${seeded.web}") { name ${history} } byName: phase(cluster: "prod", namespace: "shop", name: "web") { name ${history} }
         otherCluster: phase(cluster: "staging", namespace: "shop", name: "web") { name ${history} }
         ledger: phase(cluster: "prod", namespace: "payments", name: "ledger") { name ${history} } ledgerById: phase(id: "${seeded.ledger}") { name ${history} } }`,
      {},
      paymentsReader,
    );
    const ledger = { name: 'ledger', history: { edges: [{ node: { status: 'Current' } }] } };
    expect(answer).toEqual({ byId: null, byName: null, otherCluster: null, ledger, ledgerById: ledger });
  });

  it('a restricted token cannot gate on a phase it may not see (NOT_FOUND, as if it did not exist)', async () => {
    const hidden = await gql(
      api.url,
      '{ gate(phase: { cluster: "prod", namespace: "shop", name: "web" }, for: "1m") { passed } }',
      {},
      paymentsReader,
    );
    expect(hidden.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const visible = await gqlData<{ gate: { passed: boolean } }>(
      api.url,
      '{ gate(phase: { cluster: "prod", namespace: "payments", name: "ledger" }, for: "1m") { passed } }',
      {},
      paymentsReader,
    );
    expect(visible.gate.passed).toBe(true);
  });

  it('applies the same restrictions to operations over WebSocket, authenticated at connection_init', async () => {
    const client = wsClient(api.wsUrl, paymentsReader);
    try {
      const results: unknown[] = [];
      for await (const result of client.iterate({ query: PHASE_NAMES })) results.push(result);
      expect(results).toEqual([
        { data: { phases: { edges: [{ node: { cluster: 'prod', namespace: 'payments', name: 'ledger' } }] } } },
      ]);
    } finally {
      await client.dispose();
    }
  });

  it('closes a WebSocket whose connection_init has no valid token (4403)', async () => {
    const client = wsClient(api.wsUrl, 'plg_wrong');
    try {
      const error = await (async () => {
        try {
          for await (const _ of client.iterate({ query: PHASE_NAMES })) void _;
          return undefined;
        } catch (caught) {
          return caught as { code?: number };
        }
      })();
      expect(error?.code).toBe(4403);
    } finally {
      await client.dispose();
    }
  });
});

describe('admin mutations', () => {
  it('need the admin scope', async () => {
    for (const query of [
      '{ tokens { name } }',
      'mutation { createToken(name: "x", scopes: [read]) { secret } }',
      'mutation { revokeToken(name: "root") }',
    ]) {
      const result = await gql(api.url, query, {}, paymentsReader);
      expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  });

  it('create a token whose secret works at once, and revoke it so it stops working', async () => {
    const created = await gqlData<{
      createToken: { secret: string; token: { name: string; scopes: string[]; clusters: string[] } };
    }>(
      api.url,
      'mutation { createToken(name: "staging-ci", scopes: [read], clusters: ["staging"]) { secret token { name scopes clusters } } }',
      {},
      admin,
    );
    expect(created.createToken.token).toEqual({ name: 'staging-ci', scopes: ['read'], clusters: ['staging'] });
    expect(created.createToken.secret).toMatch(/^plg_[A-Za-z0-9_-]{43}$/);
    const secret = created.createToken.secret;
    const seen = await gqlData<{ phases: { edges: { node: unknown }[] } }>(api.url, PHASE_NAMES, {}, secret);
    expect(seen.phases.edges.map((e) => e.node)).toEqual([{ cluster: 'staging', namespace: 'shop', name: 'web' }]);

    const duplicate = await gql(
      api.url,
      'mutation { createToken(name: "staging-ci", scopes: [read]) { secret } }',
      {},
      admin,
    );
    expect(duplicate.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const noScopes = await gql(api.url, 'mutation { createToken(name: "empty", scopes: []) { secret } }', {}, admin);
    expect(noScopes.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    expect(await gqlData(api.url, 'mutation { revokeToken(name: "staging-ci") }', {}, admin)).toEqual({
      revokeToken: true,
    });
    expect(await gqlData(api.url, 'mutation { revokeToken(name: "staging-ci") }', {}, admin)).toEqual({
      revokeToken: false,
    });
    const after = await gql(api.url, PHASE_NAMES, {}, secret);
    expect(after.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('token management by a restricted admin (only tokens at most as narrow as itself)', () => {
  let prodAdmin: string;
  let paymentsAdmin: string;
  const TOKENS = '{ tokens { name clusters namespaces } }';

  beforeAll(async () => {
    const tokens = createApiTokenStore(db);
    prodAdmin = (await createToken(tokens, { name: 'prod-admin', scopes: ['admin'], clusters: ['prod'] })).secret;
    paymentsAdmin = (await createToken(tokens, { name: 'payments-admin', scopes: ['admin'], namespaces: ['payments'] }))
      .secret;
  });

  it('lists only the tokens within its restriction', async () => {
    const listed = await gqlData<{ tokens: { name: string }[] }>(api.url, TOKENS, {}, prodAdmin);
    expect(listed.tokens.map((t) => t.name)).toEqual(['payments-ci', 'prod-admin']);
    const byNamespace = await gqlData<{ tokens: { name: string }[] }>(api.url, TOKENS, {}, paymentsAdmin);
    expect(byNamespace.tokens.map((t) => t.name)).toEqual(['payments-admin', 'payments-ci']);
  });

  it.each([
    [
      'an unrestricted admin token',
      'mutation { createToken(name: "escape-all", scopes: [admin]) { secret } }',
      () => prodAdmin,
    ],
    [
      'a token for another cluster',
      'mutation { createToken(name: "escape-staging", scopes: [read], clusters: ["staging"]) { secret } }',
      () => prodAdmin,
    ],
    [
      'a token for its cluster and another',
      'mutation { createToken(name: "escape-both", scopes: [read], clusters: ["prod", "staging"]) { secret } }',
      () => prodAdmin,
    ],
    [
      'a token for every namespace of a cluster',
      'mutation { createToken(name: "escape-ns", scopes: [read], clusters: ["prod"]) { secret } }',
      () => paymentsAdmin,
    ],
  ])('may not create %s (FORBIDDEN, nothing created)', async (_label, mutation, token) => {
    const result = await gql(api.url, mutation, {}, token());
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(result.data ?? null).toBeNull();
    const names = (await db.apiToken.findMany({ select: { name: true } })).map((t) => t.name);
    expect(names.filter((n) => n.startsWith('escape'))).toEqual([]);
  });

  it('creates tokens within its restriction, which see no more than it does', async () => {
    const created = await gqlData<{
      createToken: { secret: string; token: { clusters: string[]; namespaces: string[] } };
    }>(
      api.url,
      'mutation { createToken(name: "prod-payments-ci", scopes: [admin], clusters: ["prod"], namespaces: ["payments"]) { secret token { clusters namespaces } } }',
      {},
      prodAdmin,
    );
    expect(created.createToken.token).toEqual({ clusters: ['prod'], namespaces: ['payments'] });
    const seen = await gqlData<{ phases: { edges: { node: unknown }[] } }>(
      api.url,
      PHASE_NAMES,
      {},
      created.createToken.secret,
    );
    expect(seen.phases.edges.map((e) => e.node)).toEqual([{ cluster: 'prod', namespace: 'payments', name: 'ledger' }]);
    const byNamespace = await gqlData<{ createToken: { token: { clusters: string[]; namespaces: string[] } } }>(
      api.url,
      'mutation { createToken(name: "payments-staging-ci", scopes: [read], clusters: ["staging"], namespaces: ["payments"]) { token { clusters namespaces } } }',
      {},
      paymentsAdmin,
    );
    expect(byNamespace.createToken.token).toEqual({ clusters: ['staging'], namespaces: ['payments'] });
  });

  it('may not revoke a broader token, and cannot tell it from a name no token has; revokes one within', async () => {
    const revoke = (name: string) => gql(api.url, `mutation { revokeToken(name: "${name}") }`, {}, prodAdmin);
    const nobody = await revoke('no-such-token');
    expect(nobody).toEqual({ status: 200, data: { revokeToken: false } });
    // Broader (unrestricted, or another namespace's) tokens: the very same answer, and they keep working.
    expect(await revoke('root')).toEqual(nobody);
    expect(await revoke('payments-admin')).toEqual(nobody);
    expect((await gql(api.url, '{ about { version } }', {}, admin)).status).toBe(200);
    expect(await db.apiToken.count({ where: { name: { in: ['root', 'payments-admin'] }, revokedAt: null } })).toBe(2);

    expect(await gqlData(api.url, 'mutation { revokeToken(name: "prod-payments-ci") }', {}, prodAdmin)).toEqual({
      revokeToken: true,
    });
    expect(await gqlData(api.url, 'mutation { revokeToken(name: "prod-payments-ci") }', {}, prodAdmin)).toEqual({
      revokeToken: false,
    });
  });

  it('creating a taken name: the same answer whether the other token is within its restriction or not', async () => {
    const create = (name: string) =>
      gql(
        api.url,
        'mutation($n: String!) { createToken(name: $n, scopes: [read], clusters: ["prod"]) { secret } }',
        { n: name },
        prodAdmin,
      );
    const within = await create('payments-ci');
    const outside = await create('root');
    expect(within.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(outside).toEqual({
      ...within,
      errors: within.errors?.map((e) => ({ ...e, message: e.message.replace('payments-ci', 'root') })),
    });
    // Nothing about the other token: not its scopes, restriction or anything but the name asked for.
    expect(JSON.stringify(outside)).not.toMatch(/admin|staging|payments/);
  });
});

describe('audit log of token management', () => {
  it('says which token was created or revoked (name, scopes, restriction, by whom), never its secret', async () => {
    const lines: Record<string, unknown>[] = [];
    const destination = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
    const logged = await startTestApi({ db, anonymousRead: false, log: createLogger('info', { destination }) });
    try {
      const created = await gqlData<{ createToken: { secret: string } }>(
        logged.url,
        'mutation { createToken(name: "audited-ci", scopes: [read], clusters: ["prod"], namespaces: ["shop"]) { secret } }',
        {},
        admin,
      );
      await gqlData(logged.url, 'mutation { revokeToken(name: "audited-ci") }', {}, admin);
      const audit = lines.filter((l) => l.msg === 'API token created' || l.msg === 'API token revoked');
      const facts = { tokenName: 'audited-ci', scopes: ['read'], clusters: ['prod'], namespaces: ['shop'], by: 'root' };
      expect(audit).toEqual([
        expect.objectContaining({ msg: 'API token created', ...facts }),
        expect.objectContaining({ msg: 'API token revoked', ...facts }),
      ]);
      expect(JSON.stringify(lines)).not.toContain(created.createToken.secret);
    } finally {
      await logged.close();
    }
  });
});

describe('anonymous access', () => {
  it('is on by default for a loopback bind and off elsewhere once a token exists', () => {
    expect(decideAnonymousRead({ host: '127.0.0.1', configured: undefined, activeTokens: 0 })).toBe(true);
    expect(decideAnonymousRead({ host: '::1', configured: undefined, activeTokens: 0 })).toBe(true);
    expect(decideAnonymousRead({ host: '0.0.0.0', configured: undefined, activeTokens: 1 })).toBe(false);
    expect(decideAnonymousRead({ host: '0.0.0.0', configured: true, activeTokens: 0 })).toBe(true);
    expect(decideAnonymousRead({ host: '10.1.2.3', configured: false, activeTokens: 0 })).toBe(false);
  });

  it('a non-loopback bind without tokens and without an explicit choice refuses to start', async () => {
    const empty = await createTestDatabase('gql_auth_empty');
    const emptyDb = createDb(empty.url, { poolSize: 1 });
    try {
      const start = createApiWiring({
        db: emptyDb,
        config: { server: { host: '0.0.0.0' }, api: {} },
        log: pino({ level: 'silent' }),
      });
      await expect(start).rejects.toThrow(StartupError);
      await expect(start).rejects.toThrow(/no API token exists/);
    } finally {
      await emptyDb.$disconnect();
      await empty.drop();
    }
  });

  it('anonymous readers may read but not administer', async () => {
    const open = await startTestApi({ db, anonymousRead: true });
    try {
      const phases = await gqlData<{ phases: { edges: unknown[] } }>(open.url, PHASE_NAMES);
      expect(phases.phases.edges).toHaveLength(5);
      const tokens = await gql(open.url, '{ tokens { name } }');
      expect(tokens.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    } finally {
      await open.close();
    }
  });
});
