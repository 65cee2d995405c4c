/**
 * What changed inside a phase's member objects (issue #20, `manifest --diff`): a real snapshot of an
 * emulated cluster, a second after the Deployment's image, a Secret's data and labels, and a big
 * ConfigMap changed and the inventory added and removed an entry; the API gives each change's
 * stored, redacted revisions and their unified diff, in a bounded number of statements. A Secret's
 * values never appear, a token restricted to another namespace reads nothing, a context out of
 * range is refused and a huge object is cut with a marker.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiClient } from '../../../src/cli/api-client.ts';
import { runManifest } from '../../../src/cli/commands/manifest.ts';
import { runStatus, type StatusOptions } from '../../../src/cli/commands/status.ts';
import { CliError } from '../../../src/cli/errors.ts';
import { painter } from '../../../src/cli/format.ts';
import type { CommandContext } from '../../../src/cli/context.ts';
import { loadConfig } from '../../../src/config.ts';
import { CONTENT_MAX_BYTES, DIFF_MAX_BYTES } from '../../../src/history/revision-diff.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDbOnPool, type Db } from '../../../src/store/prisma.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { inventoryConfigMap, readyDeployment } from '../snapshot/fleet.ts';
import {
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  type EmulatedCluster,
  type TestDatabase,
} from '../snapshot/helpers.ts';
import { gql, gqlData, startTestApi, type TestApi } from './helpers.ts';

const PASSWORD_1 = 'hunter2-first-password';
const PASSWORD_2 = 'hunter2-second-password';
const b64 = (s: string) => Buffer.from(s).toString('base64');

let database: TestDatabase;
let db: Db;
let pool: pg.Pool;
let statements = 0;
let cluster: EmulatedCluster;
let publisher: ChangePublisher;
let api: TestApi;
let reader: string;
let payReader: string;
let shopReader: string;
let shopId: string;
let shopName: string;

function deployment(image: string): Record<string, unknown> {
  const d = readyDeployment('shop', 'web');
  (d.spec as { template: { spec: { containers: { name: string; image: string }[] } } }).template.spec.containers = [
    { name: 'app', image },
  ];
  return d;
}

function secret(password: string, version: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds', namespace: 'shop', labels: { version } },
    type: 'Opaque',
    data: { password: b64(password) },
    stringData: { token: password },
  };
}

/** A ConfigMap far over the content cap: 3,000 lines of about 100 bytes, one line changed per revision. */
function bigConfigMap(revision: string): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (let i = 0; i < 3000; i += 1)
    data[`key-${String(i).padStart(4, '0')}`] = `${i === 1500 ? revision : 'same'}-${'x'.repeat(90)}`;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'shop' }, data };
}

beforeAll(async () => {
  database = await createTestDatabase('gql_revision_diff');
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    statements += 1;
    return query(...args);
  }) as typeof pool.query;
  db = createDbOnPool(pool);
  cluster = await startEmulatedCluster('diffs');
  publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('revision-diff') });
  const deps: SnapshotDeps = {
    recorder: createRecorder(createSnapshotStore(database.db)),
    publisher,
    log: testLogger(),
  };

  cluster.emulator.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pay' } },
    deployment('registry.example/web:1'),
    secret(PASSWORD_1, 'v1'),
    bigConfigMap('first'),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'old', namespace: 'shop' },
      spec: { ports: [{ port: 80 }] },
    },
    // The shop phase also lists an object of the pay namespace.
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'shared', namespace: 'pay' },
      data: { rate: 'pay-rate-1' },
    },
    inventoryConfigMap('shop', 'inventory', 'shop', [
      ['shop', 'apps', 'Deployment', 'web'],
      ['shop', '', 'Secret', 'creds'],
      ['shop', '', 'ConfigMap', 'big'],
      ['shop', '', 'Service', 'old'],
      ['pay', '', 'ConfigMap', 'shared'],
    ]),
    readyDeployment('pay', 'ledger'),
    inventoryConfigMap('pay', 'inventory', 'pay', [['pay', 'apps', 'Deployment', 'ledger']]),
  ]);
  const t0 = Date.now();
  expect(await snapshotCluster(deps, cluster.client, new Date(t0))).toMatchObject({ written: true });

  cluster.emulator.apply([
    deployment('registry.example/web:2'),
    secret(PASSWORD_2, 'v2'),
    bigConfigMap('second'),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'extra', namespace: 'shop' },
      data: { greeting: 'hello' },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'shared', namespace: 'pay' },
      data: { rate: 'pay-rate-2' },
    },
    inventoryConfigMap('shop', 'inventory', 'shop', [
      ['shop', 'apps', 'Deployment', 'web'],
      ['shop', '', 'Secret', 'creds'],
      ['shop', '', 'ConfigMap', 'big'],
      ['shop', '', 'ConfigMap', 'extra'],
      ['pay', '', 'ConfigMap', 'shared'],
    ]),
  ]);
  expect(await snapshotCluster(deps, cluster.client, new Date(t0 + 60_000))).toMatchObject({ written: true });

  const tokens = createApiTokenStore(db);
  reader = (await createToken(tokens, { name: 'reader', scopes: ['read'] })).secret;
  payReader = (await createToken(tokens, { name: 'pay-reader', scopes: ['read'], namespaces: ['pay'] })).secret;
  shopReader = (await createToken(tokens, { name: 'shop-reader', scopes: ['read'], namespaces: ['shop'] })).secret;
  api = await startTestApi({ db, anonymousRead: false });
  const phases = await gqlData<{ phases: { edges: { node: { id: string; namespace: string; name: string } }[] } }>(
    api.url,
    '{ phases { edges { node { id namespace name } } } }',
    {},
    reader,
  );
  const shop = phases.phases.edges.find((e) => e.node.namespace === 'shop')?.node;
  shopId = shop?.id ?? '';
  shopName = shop?.name ?? '';
  expect(shopId).not.toBe('');
}, 60_000);

afterAll(async () => {
  await api?.close();
  await publisher?.close();
  await cluster?.close();
  await db?.$disconnect();
  await database?.drop();
});

interface Revision {
  id: string;
  hash: string | null;
  at: string;
  content: string | null;
  truncated: boolean;
}
interface Change {
  key: string;
  kind: string;
  namespace: string;
  name: string;
  change: 'ADDED' | 'REMOVED' | 'CHANGED';
  withheld: boolean;
  before: Revision | null;
  after: Revision | null;
  diff: string | null;
}
interface Version {
  manifest: { from: string };
  changes: Change[];
}

const CHANGES = `query($id: ID!, $context: Int) { phase(id: $id) { manifests(first: 10) { edges { node {
  manifest { from }
  changes { key kind namespace name change withheld before { id hash at content truncated } after { id hash at content truncated } diff(context: $context) }
} } } } }`;

async function versions(token: string, context?: number): Promise<Version[]> {
  const data = await gqlData<{ phase: { manifests: { edges: { node: Version }[] } } | null }>(
    api.url,
    CHANGES,
    { id: shopId, ...(context === undefined ? {} : { context }) },
    token,
  );
  return data.phase?.manifests.edges.map((e) => e.node) ?? [];
}

const changeOf = (list: Change[], key: string): Change => {
  const found = list.find((c) => c.key === key);
  if (found === undefined) throw new Error(`no change of ${key} in ${list.map((c) => c.key).join(', ')}`);
  return found;
};

/** What the CLI's commands get, asking this test's API with `token`, printing into `out` (no colour). */
function cliContext(token: string, out: string[]): CommandContext {
  return {
    api: createApiClient({ url: api.url, token }),
    hasToken: true,
    config: loadConfig({}, mkdtempSync(path.join(tmpdir(), 'phaselog-cli-'))),
    out: (text) => void out.push(text),
    err: () => {},
    errIsTerminal: false,
    decorated: false,
    paint: painter(false),
    now: () => new Date(),
  };
}

describe('ManifestVersion.changes', () => {
  it('gives each changed member its stored revisions and a unified diff, a changed image as one -/+ pair', async () => {
    const [latest, first] = await versions(reader);
    expect(first?.changes).toEqual([]);
    const changes = latest?.changes ?? [];
    expect(changes.map((c) => [c.change, c.key])).toEqual([
      ['CHANGED', '/ConfigMap/pay/shared'],
      ['CHANGED', '/ConfigMap/shop/big'],
      ['ADDED', '/ConfigMap/shop/extra'],
      ['CHANGED', '/Secret/shop/creds'],
      ['REMOVED', '/Service/shop/old'],
      ['CHANGED', 'apps/Deployment/shop/web'],
    ]);

    const web = changeOf(changes, 'apps/Deployment/shop/web');
    expect(web).toMatchObject({
      kind: 'Deployment',
      namespace: 'shop',
      name: 'web',
      before: { at: first?.manifest.from, truncated: false },
      after: { at: latest?.manifest.from, truncated: false },
    });
    expect(web.before?.content).toMatch(/^apiVersion: apps\/v1\nkind: Deployment\nmetadata:\n/);
    expect(web.before?.content).toContain('image: registry.example/web:1');
    expect(web.after?.content).toContain('image: registry.example/web:2');
    // Redacted as stored: no status, no last-applied copy.
    expect(web.after?.content).not.toContain('status:');
    expect(web.after?.content).not.toContain('last-applied-configuration');
    const diff = web.diff ?? '';
    expect(diff.split('\n').slice(0, 2)).toEqual([
      `--- before (${web.before?.hash?.slice(0, 12)}, ${first?.manifest.from})`,
      `+++ after (${web.after?.hash?.slice(0, 12)}, ${latest?.manifest.from})`,
    ]);
    expect(diff.split('\n').filter((l) => /^[-+](?![-+]{2} )/.test(l))).toEqual([
      '-      - image: registry.example/web:1',
      '+      - image: registry.example/web:2',
    ]);
    // Three lines of context before the change; the object ends one line after it.
    expect(diff).toMatch(/^@@ -(\d+),5 \+\1,5 @@\n {9}app: web\n/m);

    const added = changeOf(changes, '/ConfigMap/shop/extra');
    expect(added.before).toBeNull();
    expect(added.diff?.split('\n')[0]).toBe('--- before (not in the manifest)');
    expect(added.diff).toContain('+  greeting: hello');
    expect(
      added.diff
        ?.split('\n')
        .slice(3)
        .filter((l) => l !== '')
        .every((l) => l.startsWith('+')),
    ).toBe(true);

    const removed = changeOf(changes, '/Service/shop/old');
    expect(removed.after).toBeNull();
    expect(removed.diff).toContain('-  name: old');
    expect(
      removed.diff
        ?.split('\n')
        .slice(3)
        .filter((l) => l !== '')
        .every((l) => l.startsWith('-')),
    ).toBe(true);
  });

  it('never shows a Secret data or stringData value: only what is stored, its metadata', async () => {
    const [latest] = await versions(reader);
    const creds = changeOf(latest?.changes ?? [], '/Secret/shop/creds');
    const text = JSON.stringify(creds);
    for (const value of [PASSWORD_1, PASSWORD_2, b64(PASSWORD_1), b64(PASSWORD_2)]) expect(text).not.toContain(value);
    expect(creds.after?.content).not.toMatch(/^(data|stringData):/m);
    expect(creds.diff).toContain('-    version: v1');
    expect(creds.diff).toContain('+    version: v2');
  });

  it('cuts a huge object at the cap with a marker, and its diff still shows the one changed line', async () => {
    const [latest] = await versions(reader);
    const big = changeOf(latest?.changes ?? [], '/ConfigMap/shop/big');
    expect(big.after?.truncated).toBe(true);
    const content = big.after?.content ?? '';
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(CONTENT_MAX_BYTES + 200);
    expect(content.trimEnd().split('\n').at(-1)).toMatch(
      /^# \.\.\. truncated by phaselog: \d+ more bytes \(limit 65536 bytes\)$/,
    );
    expect(Buffer.byteLength(big.diff ?? '')).toBeLessThanOrEqual(DIFF_MAX_BYTES);
    expect(big.diff).toMatch(/^- {2}key-1500: first-x+$/m);
    expect(big.diff).toMatch(/^\+ {2}key-1500: second-x+$/m);
  });

  it('reads every revision of a page in one statement: the query costs the same few statements however many members changed', async () => {
    statements = 0;
    await versions(reader);
    // The phase, its manifests, the revision ids at both times, the revision contents (and the token's check, when not cached).
    expect(statements).toBeLessThanOrEqual(5);
  });

  it('gives a token restricted to another namespace no revision of the phase', async () => {
    const data = await gqlData<{ phase: unknown }>(api.url, CHANGES, { id: shopId }, payReader);
    expect(data.phase).toBeNull();
    const result = await gql(
      api.url,
      '{ phases { edges { node { namespace manifests { edges { node { changes { key diff after { content } } } } } } } } }',
      {},
      payReader,
    );
    expect(JSON.stringify(result)).not.toContain('registry.example/web');
    expect(JSON.stringify(result)).not.toContain('shop');
  });

  it("withholds, from a token restricted to the phase's namespace, the content of a member of another namespace", async () => {
    const [everything] = await versions(reader);
    expect(changeOf(everything?.changes ?? [], '/ConfigMap/pay/shared')).toMatchObject({
      withheld: false,
      diff: expect.stringContaining('+  rate: pay-rate-2'),
    });
    const [latest] = await versions(shopReader);
    const shared = changeOf(latest?.changes ?? [], '/ConfigMap/pay/shared');
    expect(shared).toMatchObject({
      withheld: true,
      diff: null,
      before: { hash: null, content: null, truncated: false },
      after: { hash: null, content: null, truncated: false },
    });
    expect(JSON.stringify(latest)).not.toContain('pay-rate');
    // Its own namespace's members it reads as anyone.
    expect(changeOf(latest?.changes ?? [], 'apps/Deployment/shop/web')).toMatchObject({
      withheld: false,
      diff: expect.stringContaining('+      - image: registry.example/web:2'),
    });
  });

  it('refuses, by its cost, a query for the diffs of 100 versions, before reading anything', async () => {
    const result = await gql(
      api.url,
      'query($id: ID!) { phase(id: $id) { manifests(first: 100) { edges { node { changes { diff } } } } } }',
      { id: shopId },
      reader,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
    expect(result.data ?? null).toBeNull();
  });

  it('refuses a negative or huge context with BAD_USER_INPUT naming the range', async () => {
    for (const context of [-1, 100_000]) {
      const result = await gql(api.url, CHANGES, { id: shopId, context }, reader);
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.message).toContain('context must be an integer from 0 to 1000');
    }
    const [latest] = await versions(reader, 0);
    expect(changeOf(latest?.changes ?? [], 'apps/Deployment/shop/web').diff).toMatch(
      /^@@ -(\d+),1 \+\1,1 @@\n-.*\n\+.*\n$/m,
    );
  });

  it('is what `phaselog manifest --diff` prints: per member a ref, before/after headers and the -/+ lines; data in -o json', async () => {
    const out: string[] = [];
    const ctx = cliContext(reader, out);
    expect(await runManifest(ctx, { phase: `diffs/shop/${shopName}`, diff: true, output: 'table', color: false })).toBe(
      0,
    );
    const text = out.join('');
    expect(text).not.toContain('\u001b[');
    expect(text).toMatch(
      /^~ apps\/Deployment\/shop\/web \(changed\)\n--- before \([0-9a-f]{12}, [^)]+\)\n\+\+\+ after \([0-9a-f]{12}, [^)]+\)\n@@/m,
    );
    expect(text).toContain('\n-      - image: registry.example/web:1\n+      - image: registry.example/web:2\n');
    expect(text).toContain('+ ConfigMap/shop/extra (added)');
    expect(text).toContain('- Service/shop/old (removed)');
    expect(text).not.toContain('hunter2');

    out.length = 0;
    expect(await runManifest(ctx, { phase: `diffs/shop/${shopName}`, diff: true, output: 'json', context: 1 })).toBe(0);
    const versions = JSON.parse(out.join('')) as { changes: { key: string; diff: string }[] }[];
    expect(versions[0]?.changes.find((c) => c.key === 'apps/Deployment/shop/web')?.diff).toMatch(
      /@@ -\d+,3 \+\d+,3 @@\n {7}containers:\n- {6}- image: registry.example\/web:1\n\+ {6}- image: registry.example\/web:2\n {9}name: app\n$/,
    );
  });
});

interface ResourceRevision {
  key: string;
  status: string;
  revision: { hash: string | null; at: string; content: string | null; truncated: boolean } | null;
}

const RESOURCE_REVISIONS = `query($id: ID!) { phase(id: $id) { resources(first: 100) { edges { node { key status revision { hash at content truncated } } } } } }`;
const RESOURCE_REVISIONS_AT = `query($id: ID!, $at: DateTime!) { phase(id: $id) { statusAt(at: $at) { resources(first: 100) { edges { node { key status revision { hash at content truncated } } } } } } }`;

async function resourceRevisions(token: string, at?: Date): Promise<Map<string, ResourceRevision>> {
  type Page = { resources: { edges: { node: ResourceRevision }[] } };
  const data = at
    ? await gqlData<{ phase: { statusAt: Page | null } | null }>(
        api.url,
        RESOURCE_REVISIONS_AT,
        { id: shopId, at: at.toISOString() },
        token,
      )
    : await gqlData<{ phase: Page | null }>(api.url, RESOURCE_REVISIONS, { id: shopId }, token);
  const page =
    'statusAt' in (data.phase ?? {}) ? (data.phase as { statusAt: Page | null }).statusAt : (data.phase as Page | null);
  return new Map((page?.resources.edges ?? []).map((e) => [e.node.key, e.node]));
}

describe('Resource.revision (EMCO detail mode)', () => {
  it('gives each resource the stored revision it has now, and the one it had at a past moment', async () => {
    const now = await resourceRevisions(reader);
    expect(now.get('apps/Deployment/shop/web')?.revision?.content).toContain('image: registry.example/web:2');
    // The moment the first snapshot recorded (the start of the first manifest version).
    const firstAt = new Date((await versions(reader)).at(-1)?.manifest.from ?? 0);
    const then = await resourceRevisions(reader, firstAt);
    expect(then.get('apps/Deployment/shop/web')?.revision).toMatchObject({
      at: firstAt.toISOString(),
      truncated: false,
    });
    expect(then.get('apps/Deployment/shop/web')?.revision?.content).toContain('image: registry.example/web:1');
    expect(then.get('apps/Deployment/shop/web')?.revision?.hash).not.toBe(
      now.get('apps/Deployment/shop/web')?.revision?.hash,
    );
    // Past membership is the past's: the removed Service is there then, not now.
    expect(then.get('/Service/shop/old')?.revision?.content).toContain('name: old');
    expect(now.has('/Service/shop/old')).toBe(false);
  });

  it('never holds Secret data, then or now', async () => {
    for (const at of [undefined, new Date((await versions(reader)).at(-1)?.manifest.from ?? 0)]) {
      const content = (await resourceRevisions(reader, at)).get('/Secret/shop/creds')?.revision?.content ?? '';
      expect(content).toContain('kind: Secret');
      for (const secretText of [PASSWORD_1, PASSWORD_2, b64(PASSWORD_1), b64(PASSWORD_2)])
        expect(content).not.toContain(secretText);
    }
  });

  it("withholds, from a token restricted to the phase's namespace, the revision of a member of another namespace", async () => {
    const seen = await resourceRevisions(shopReader);
    expect(seen.get('/ConfigMap/pay/shared')?.revision).toMatchObject({ hash: null, content: null });
    expect(seen.get('/ConfigMap/shop/extra')?.revision?.content).toContain('greeting: hello');
    // A token restricted to another namespace does not see the phase at all.
    expect(await resourceRevisions(payReader)).toEqual(new Map());
  });

  it('is what `phaselog status <phase> -o detail` prints, now and with --at; -o summary prints counts only', async () => {
    const out: string[] = [];
    const ctx = (token: string): CommandContext => cliContext(token, out);
    const base: StatusOptions = {
      phase: `diffs/shop/${shopName}`,
      output: 'detail',
      headers: true,
      watch: false,
      clusters: [],
      statuses: [],
    };
    expect(await runStatus(ctx(reader), base)).toBe(0);
    const now = out.join('');
    expect(now.split('\n')[0]).toMatch(new RegExp(`^# diffs/shop/${shopName}: Current at \\S+ \\(5/5 Current\\)$`));
    expect(now).toMatch(
      /^# apps\/Deployment\/shop\/web {2}Current {2}revision [0-9a-f]{12}\n# status \(recorded now\): Current\n(#.*\n)*apiVersion: apps\/v1\nkind: Deployment\n/m,
    );
    expect(now).toContain('image: registry.example/web:2');
    // This API has no Redis, so no worker to ask for live status blocks: each resource says so.
    expect(now.match(/^# live status: not available \(UNAVAILABLE: .*\)$/gm)).toHaveLength(5);
    expect(now.split('\n').filter((l) => l === '---')).toHaveLength(5);
    for (const secretText of [PASSWORD_1, PASSWORD_2, b64(PASSWORD_1), b64(PASSWORD_2)])
      expect(now).not.toContain(secretText);

    out.length = 0;
    const firstAt = (await versions(reader)).at(-1)?.manifest.from ?? '';
    expect(await runStatus(ctx(reader), { ...base, at: firstAt })).toBe(0);
    const then = out.join('');
    expect(then).toContain('image: registry.example/web:1');
    expect(then).toMatch(/^# Service\/shop\/old {2}Current {2}revision /m);
    expect(then).not.toContain('# live status');

    // A token of the phase's namespace sees the other namespace's member withheld.
    out.length = 0;
    expect(await runStatus(ctx(shopReader), base)).toBe(0);
    expect(out.join('')).toMatch(/^# ConfigMap\/pay\/shared {2}Current {2}\(revision withheld/m);
    expect(out.join('')).not.toContain('pay-rate');

    out.length = 0;
    expect(await runStatus(ctx(reader), { ...base, output: 'summary' })).toBe(0);
    expect(
      out
        .join('')
        .split('\n')
        .map((l) => l.split(/\s+/).filter(Boolean)),
    ).toEqual([
      ['NAME', 'CLUSTER', 'STATUS', 'CURRENT', 'INPROGRESS', 'FAILED', 'TERMINATING', 'NOTFOUND', 'UNKNOWN', 'TOTAL'],
      [`shop/${shopName}`, 'diffs', 'Current', '5', '0', '0', '0', '0', '0', '5'],
      [],
    ]);
    // `all` is the default table; detail needs a phase and does not watch.
    await expect(runStatus(ctx(reader), { ...base, phase: undefined })).rejects.toThrow(CliError);
    await expect(runStatus(ctx(reader), { ...base, watch: true })).rejects.toThrow(/-o detail prints once/);
  });
});
