/**
 * `Resource.liveStatus` end to end: a real worker owns an emulated cluster, a real API asks it over
 * Redis for each member's `status` block, and `phaselog status <phase> -o detail` prints it. The
 * answer follows the object, says why when it cannot be given (deleted, withheld, cluster reset or
 * hanging, nobody owning the cluster, a request over the bound), and never makes the query wait
 * past the timeout.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiClient } from '../../../src/cli/api-client.ts';
import { runStatus } from '../../../src/cli/commands/status.ts';
import type { CommandContext } from '../../../src/cli/context.ts';
import { painter } from '../../../src/cli/format.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Emulator } from '../../../src/emulator/index.ts';
import { deploymentRollout, type ScenarioStep } from '../../../src/emulator/scenario.ts';
import {
  createLiveStatusRequester,
  LIVE_STATUS_TIMEOUT_MS,
  MAX_LIVE_STATUS_OBJECTS,
} from '../../../src/pubsub/live-status.ts';
import { ownershipPrefix, readClusterOwners } from '../../../src/queue/ownership.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { inventoryConfigMap } from '../snapshot/fleet.ts';
import { startEmulatedCluster, testLogger, type EmulatedCluster } from '../snapshot/helpers.ts';
import { gql, gqlData, startTestApi, type TestApi } from './helpers.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let cluster: EmulatedCluster;
let workers: RunningWorkers;
let redis: Redis;
let reader: string;
let shopReader: string;
const prefix = uniquePrefix('gql-live-status');
const owners = (clusters: readonly string[]) => readClusterOwners(redis, ownershipPrefix(prefix, prefix), clusters);

interface Live {
  status: Record<string, unknown> | null;
  readAt: string | null;
  unknownReason: string | null;
}
interface Node {
  kind: string;
  namespace: string;
  name: string;
  liveStatus: Live | null;
}

const LIVE = `{ phases(filter: { cluster: "live" }, first: 5) { edges { node { name resources(first: 100) { edges { node {
  kind namespace name liveStatus { status readAt unknownReason }
} } } } } } }`;

async function resources(token = reader): Promise<Node[]> {
  const data = await gqlData<{
    phases: { edges: { node: { name: string; resources: { edges: { node: Node }[] } } }[] };
  }>(api.url, LIVE, {}, token);
  return data.phases.edges.flatMap((p) => p.node.resources.edges.map((e) => e.node));
}

async function live(name: string, token = reader): Promise<Live | null | undefined> {
  return (await resources(token)).find((r) => r.name === name)?.liveStatus;
}

async function waitFor<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = await read();
    if (ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function run(em: Emulator, steps: ScenarioStep[]): void {
  for (const step of steps) if ('do' in step) step.do(em);
}

const WEB = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' };

beforeAll(async () => {
  database = await createTestDatabase('gql_live_status');
  db = createDb(database.url, { poolSize: 4 });
  redis = new Redis(testRedisUrl());
  cluster = await startEmulatedCluster('live');
  const em = cluster.emulator;
  em.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vault' } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'shop' },
      data: { password: Buffer.from('hunter2').toString('base64') },
    },
    // The phase lists a Deployment in a namespace the shop token may not read.
    inventoryConfigMap('shop', 'inventory-web', 'web', [
      ['shop', 'apps', 'Deployment', 'web'],
      ['shop', '', 'Secret', 'creds'],
      ['shop', 'apps', 'Deployment', 'gone'],
      ['vault', 'apps', 'Deployment', 'keeper'],
    ]),
  ]);
  run(em, deploymentRollout({ name: 'web', namespace: 'shop', replicas: 2, image: 'web:1', pods: false }));
  run(em, deploymentRollout({ name: 'gone', namespace: 'shop', replicas: 1, image: 'gone:1', pods: false }));
  run(em, deploymentRollout({ name: 'keeper', namespace: 'vault', replicas: 1, image: 'keeper:1', pods: false }));
  const tokens = createApiTokenStore(db);
  reader = (await createToken(tokens, { name: 'reader', scopes: ['read'] })).secret;
  shopReader = (await createToken(tokens, { name: 'shop-reader', scopes: ['read'], namespaces: ['shop'] })).secret;
  api = await startTestApi({
    db,
    anonymousRead: false,
    redisUrl: testRedisUrl(),
    channelPrefix: prefix,
    snapshotQueue: { name: prefix, prefix },
  });
  workers = await startWorkers({
    config: { snapshot: { interval: 3_600_000 }, health: undefined, baseDir: process.cwd() },
    db,
    redisUrl: testRedisUrl(),
    log: testLogger(),
    clusters: [cluster.handle],
    queueName: prefix,
    prefix,
    channelPrefix: prefix,
    schedule: false,
  });
  await waitFor(
    async () => workers.ownership.owned(),
    (o) => o.includes('live'),
    'the worker to own the cluster',
  );
  await waitFor(resources, (rs) => rs.length === 4, 'the first snapshot');
});

afterAll(async () => {
  await workers?.close();
  await api?.close();
  await cluster?.close();
  redis?.disconnect();
  await db?.$disconnect();
  await database?.drop();
});

describe('Resource.liveStatus', () => {
  it("gives a Deployment's status block as the cluster has it now, and follows it", async () => {
    const web = await live('web');
    expect(web?.unknownReason).toBeNull();
    expect(web?.status).toMatchObject({ replicas: 2, readyReplicas: 2 });
    expect(Date.parse(web?.readAt ?? '')).toBeGreaterThan(Date.now() - 60_000);

    const status = cluster.emulator.get(WEB)?.['status'] as Record<string, unknown>;
    cluster.emulator.patchStatus(WEB, { ...status, readyReplicas: 1, availableReplicas: 1 });
    // No snapshot in between: the answer is read now, not recorded.
    expect((await live('web'))?.status).toMatchObject({ readyReplicas: 1, availableReplicas: 1 });
  });

  it('gives a Secret only its (empty) status block, never its data', async () => {
    const all = await resources();
    const secret = all.find((r) => r.kind === 'Secret');
    expect(secret?.liveStatus).toEqual({ status: {}, readAt: expect.any(String), unknownReason: null });
    expect(JSON.stringify(all)).not.toContain(Buffer.from('hunter2').toString('base64'));
  });

  it('is null with NOT_FOUND once the object is deleted', async () => {
    cluster.emulator.remove({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'gone' });
    expect(await live('gone')).toEqual({ status: null, readAt: null, unknownReason: 'NOT_FOUND' });
  });

  it("is withheld from a token that may not read the member's namespace, without asking the worker", async () => {
    const requests = cluster.emulator.requestCount({ verb: 'get', namespace: 'vault' });
    expect(await live('keeper', shopReader)).toEqual({ status: null, readAt: null, unknownReason: 'WITHHELD' });
    expect(cluster.emulator.requestCount({ verb: 'get', namespace: 'vault' })).toBe(requests);
    expect((await live('keeper'))?.status).toMatchObject({ replicas: 1 });
    expect((await live('web', shopReader))?.status).toMatchObject({ replicas: 2 });
  });

  it('asks the worker once for a whole page, and the worker GETs each object once', async () => {
    cluster.emulator.resetRequests();
    await resources();
    const gets = cluster.emulator.requests().filter((r) => r.verb === 'get');
    expect(gets.map((r) => `${r.resource}/${r.namespace ?? ''}`).sort()).toEqual(
      ['deployments/shop', 'deployments/shop', 'deployments/vault', 'secrets/shop'].sort(),
    );
  });

  it('is not given for a past moment (statusAt): NOT_LIVE', async () => {
    const data = await gqlData<{
      phases: { edges: { node: { statusAt: { resources: { edges: { node: Node }[] } } | null } }[] };
    }>(
      api.url,
      `query ($at: DateTime!) { phases(filter: { cluster: "live" }) { edges { node { statusAt(at: $at) {
        resources(first: 10) { edges { node { name liveStatus { status unknownReason } } } } } } } } }`,
      { at: new Date().toISOString() },
      reader,
    );
    const nodes = data.phases.edges.flatMap((p) => p.node.statusAt?.resources.edges.map((e) => e.node) ?? []);
    expect(nodes.length).toBeGreaterThan(0);
    for (const node of nodes) expect(node.liveStatus).toEqual({ status: null, unknownReason: 'NOT_LIVE' });
  });

  it.each([
    ['resets every connection', { effect: 'reset' as const }, 'UNREACHABLE'],
    ['never answers', { effect: 'hang' as const, match: { verb: 'get' as const } }, 'TIMEOUT'],
  ])('answers within the timeout, with null and a reason, when the cluster %s', async (_what, fault, reason) => {
    const remove = cluster.emulator.injectFault(fault);
    try {
      const started = Date.now();
      const web = await live('web');
      expect(Date.now() - started).toBeLessThan(LIVE_STATUS_TIMEOUT_MS + 1500);
      expect(web).toEqual({ status: null, readAt: null, unknownReason: reason });
    } finally {
      remove();
    }
    expect((await live('web'))?.status).toMatchObject({ replicas: 2 });
  });

  it('is printed by `phaselog status <phase> -o detail` under each resource, or why it is not', async () => {
    const phases = await gqlData<{ phases: { edges: { node: { name: string } }[] } }>(
      api.url,
      '{ phases(filter: { cluster: "live" }) { edges { node { name } } } }',
      {},
      reader,
    );
    const out: string[] = [];
    const ctx = (token: string): CommandContext => ({
      api: createApiClient({ url: api.url, token }),
      hasToken: true,
      config: loadConfig({}, mkdtempSync(path.join(tmpdir(), 'phaselog-live-'))),
      out: (text) => void out.push(text),
      err: () => {},
      errIsTerminal: false,
      decorated: false,
      paint: painter(false),
      now: () => new Date(),
    });
    const options = {
      phase: `live/shop/${phases.phases.edges[0]!.node.name}`,
      output: 'detail' as const,
      headers: true,
      watch: false,
      clusters: [],
      statuses: [],
    };
    expect(await runStatus(ctx(reader), options)).toBe(0);
    const documents = out.join('').split('---\n');
    const web = documents.find((d) => d.startsWith('# apps/Deployment/shop/web '));
    // The block as YAML, commented so that the document stays the stored revision.
    expect(web).toMatch(/^# live status \(read [^)]+\):\n# {3}[\s\S]*^# {3}replicas: 2$/m);
    expect(web).toMatch(/^# {3}readyReplicas: \d$/m);
    expect(web).toMatch(/^# {3}conditions:$/m);
    const gone = documents.find((d) => d.startsWith('# apps/Deployment/shop/gone '));
    expect(gone).toContain('# live status: not available (NOT_FOUND: the object is gone from the cluster)');

    out.length = 0;
    expect(await runStatus(ctx(shopReader), options)).toBe(0);
    const keeper = out
      .join('')
      .split('---\n')
      .find((d) => d.startsWith('# apps/Deployment/vault/keeper '));
    expect(keeper).toContain("# live status: not available (WITHHELD: its namespace is outside this token's scope)");

    // At a past moment, only what was recorded: no live status lines.
    out.length = 0;
    expect(await runStatus(ctx(reader), { ...options, at: '1s' })).toBe(0);
    expect(out.join('')).not.toContain('# live status');
  });
});

describe('hostile and unanswerable requests', () => {
  const requester = () =>
    createLiveStatusRequester({
      redisUrl: testRedisUrl(),
      publisher: redis,
      prefix,
      owners,
      log: testLogger(),
      timeoutMs: 3000,
    });
  const ref = { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' };

  it('answers NOT_OWNED at once for a cluster nobody owns', async () => {
    const asker = requester();
    try {
      const started = Date.now();
      expect(await asker.read('nobody-owns-this', [ref])).toEqual([{ ok: false, reason: 'NOT_OWNED' }]);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await asker.close();
    }
  });

  it('refuses more than one page of objects without asking anyone', async () => {
    const asker = requester();
    try {
      const many = Array.from({ length: MAX_LIVE_STATUS_OBJECTS + 1 }, (_, i) => ({ ...ref, name: `web-${i}` }));
      const answers = await asker.read('live', many);
      expect(answers).toHaveLength(many.length);
      expect(new Set(answers.map((a) => (a.ok ? 'ok' : a.reason)))).toEqual(new Set(['TOO_MANY']));
    } finally {
      await asker.close();
    }
  });

  it('has the worker answer TOO_MANY to an oversized request sent straight to its channel, and read nothing', async () => {
    const owner = (await owners(['live'])).get('live');
    expect(owner).toBeDefined();
    const from = randomUUID();
    const listener = new Redis(testRedisUrl());
    try {
      const replied = new Promise<unknown>((resolve) =>
        listener.on('message', (_c, m: string) => resolve(JSON.parse(m))),
      );
      await listener.subscribe(`${prefix}:live-status-reply:${from}`);
      cluster.emulator.resetRequests();
      const objects = Array.from({ length: 5000 }, (_, i) => ({ ...ref, name: `web-${i}` }));
      const receivers = await redis.publish(
        `${prefix}:live-status:${encodeURIComponent(owner!.instance)}`,
        JSON.stringify({ id: 'big', from, cluster: 'live', objects }),
      );
      expect(receivers).toBe(1);
      expect(await replied).toEqual({ id: 'big', at: expect.any(Number), reason: 'TOO_MANY' });
      expect(cluster.emulator.requestCount({ verb: 'get' })).toBe(0);
    } finally {
      listener.disconnect();
    }
  });

  it('has the worker answer NOT_OWNED for a cluster it does not own', async () => {
    const owner = (await owners(['live'])).get('live');
    const from = randomUUID();
    const listener = new Redis(testRedisUrl());
    try {
      const replied = new Promise<unknown>((resolve) =>
        listener.on('message', (_c, m: string) => resolve(JSON.parse(m))),
      );
      await listener.subscribe(`${prefix}:live-status-reply:${from}`);
      await redis.publish(
        `${prefix}:live-status:${encodeURIComponent(owner!.instance)}`,
        JSON.stringify({ id: 'other', from, cluster: 'someone-elses', objects: [ref] }),
      );
      expect(await replied).toEqual({ id: 'other', at: expect.any(Number), reason: 'NOT_OWNED' });
    } finally {
      listener.disconnect();
    }
  });

  it('costs a page of live statuses in the query cost', async () => {
    const plain =
      '{ phases(first: 50) { edges { node { resources(first: 100) { edges { node { kind namespace name } } } } } } }';
    expect((await gql(api.url, plain, {}, reader)).errors).toBeUndefined();
    const withLive = plain.replace('kind namespace name', 'kind namespace name liveStatus { status }');
    const refused = await gql(api.url, withLive, {}, reader);
    expect(refused.errors?.[0]?.message).toMatch(/cost/i);
  });
});
