/**
 * Resource trees end to end: a Deployment in an emulated cluster rolls out (ReplicaSets and Pods
 * written as the controllers would), a real worker watching the cluster publishes the tree to
 * Redis, and the API answers `Resource.children` from there, scoped like the resource's revision.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiClient } from '../../../src/cli/api-client.ts';
import { runStatus, type StatusOptions } from '../../../src/cli/commands/status.ts';
import type { CommandContext } from '../../../src/cli/context.ts';
import { CliError } from '../../../src/cli/errors.ts';
import { painter } from '../../../src/cli/format.ts';
import { loadConfig } from '../../../src/config.ts';
import type { Emulator } from '../../../src/emulator/index.ts';
import { deploymentRollout, type ScenarioStep } from '../../../src/emulator/scenario.ts';
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
let workers: RunningWorkers | undefined;
let reader: string;
let shopReader: string;
let otherReader: string;
const prefix = uniquePrefix('gql-trees');

interface Child {
  kind: string;
  name: string;
  status: string;
  message: string;
  depth: number;
  parentKey: string;
}
interface Children {
  items: Child[];
  omitted: number;
  unknownReason: string | null;
}
interface Node {
  kind: string;
  namespace: string;
  name: string;
  children: Children | null;
}

const TREES = `{ phases(filter: { cluster: "trees" }, first: 5) { edges { node { name resources(first: 10) { edges { node {
  kind namespace name children { omitted unknownReason items { kind name status message depth parentKey } }
} } } } } } }`;

async function resources(token = reader): Promise<Node[]> {
  const data = await gqlData<{
    phases: { edges: { node: { name: string; resources: { edges: { node: Node }[] } } }[] };
  }>(api.url, TREES, {}, token);
  return data.phases.edges.flatMap((p) => p.node.resources.edges.map((e) => e.node));
}

async function web(token = reader): Promise<Children | null | undefined> {
  return (await resources(token)).find((r) => r.kind === 'Deployment' && r.name === 'web')?.children;
}

/** "kind name status" per item, indented by depth: what a user reads in the tree. */
function shape(children: Children | null | undefined): string[] {
  return (children?.items ?? []).map((c) => `${'  '.repeat(c.depth - 1)}${c.kind} ${c.name} ${c.status}`);
}

async function waitFor<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function run(em: Emulator, steps: ScenarioStep[]): void {
  for (const step of steps) if ('do' in step) step.do(em);
}

async function startTreeWorkers(): Promise<RunningWorkers> {
  return startWorkers({
    config: { snapshot: { interval: 3_600_000 }, health: undefined, baseDir: process.cwd() },
    db,
    redisUrl: testRedisUrl(),
    log: testLogger(),
    clusters: [cluster.handle],
    queueName: prefix,
    prefix,
    channelPrefix: prefix,
    schedule: false,
    live: { debounceMs: 50, trees: { intervalMs: 300, minIntervalMs: 50 } },
  });
}

beforeAll(async () => {
  database = await createTestDatabase('gql_trees');
  db = createDb(database.url, { poolSize: 4 });
  cluster = await startEmulatedCluster('trees');
  const em = cluster.emulator;
  em.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vault' } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { clusterIP: '10.0.0.1', type: 'ClusterIP' },
    },
    // The phase lists a Deployment in a namespace the shop token may not read.
    inventoryConfigMap('shop', 'inventory-web', 'web', [
      ['shop', 'apps', 'Deployment', 'web'],
      ['shop', '', 'Service', 'web'],
      ['vault', 'apps', 'Deployment', 'keeper'],
    ]),
  ]);
  run(em, deploymentRollout({ name: 'web', namespace: 'shop', replicas: 2, image: 'web:1' }));
  run(em, deploymentRollout({ name: 'keeper', namespace: 'vault', replicas: 1, image: 'keeper:1' }));
  const tokens = createApiTokenStore(db);
  reader = (await createToken(tokens, { name: 'reader', scopes: ['read'] })).secret;
  shopReader = (await createToken(tokens, { name: 'shop-reader', scopes: ['read'], namespaces: ['shop'] })).secret;
  otherReader = (await createToken(tokens, { name: 'other-reader', scopes: ['read'], namespaces: ['elsewhere'] }))
    .secret;
  api = await startTestApi({ db, anonymousRead: false, redisUrl: testRedisUrl(), channelPrefix: prefix });
  workers = await startTreeWorkers();
  await workers.snapshotNow('trees');
});

afterAll(async () => {
  await workers?.close();
  await api?.close();
  await cluster?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('Resource.children', () => {
  it("shows a Deployment's ReplicaSets and Pods, their statuses following a rollout step by step", async () => {
    const em = cluster.emulator;
    const settled = await waitFor(web, (c) => shape(c).length === 3, 'the first tree');
    expect(settled?.unknownReason).toBeNull();
    const [rs1] = shape(settled).map((l) => l.split(' ')[1]);
    expect(shape(settled)).toEqual([
      `ReplicaSet ${rs1} Current`,
      expect.stringMatching(/^ {2}Pod web-.+ Current$/),
      expect.stringMatching(/^ {2}Pod web-.+ Current$/),
    ]);
    expect(settled?.items[1]?.parentKey).toBe(`apps/ReplicaSet/shop/${rs1}`);
    expect(settled?.items[0]?.parentKey).toBe('apps/Deployment/shop/web');

    // A new image: a second ReplicaSet appears with no ready Pod, the old one still serves.
    const steps = deploymentRollout({ name: 'web', namespace: 'shop', replicas: 2, image: 'web:2' });
    run(em, steps.slice(0, 1));
    const started = await waitFor(
      web,
      (c) => shape(c).filter((l) => l.startsWith('ReplicaSet')).length === 2,
      'the new ReplicaSet',
    );
    const rs2 = shape(started)
      .map((l) => l.split(' ')[1])
      .find((n) => n !== rs1 && n?.startsWith('web-') && !shape(started).some((l) => l.trim() === `Pod ${n} Current`));
    expect(shape(started)).toContain(`ReplicaSet ${rs2} InProgress`);
    expect(shape(started).filter((l) => l.startsWith('  Pod'))).toHaveLength(2);

    // One new Pod ready, one old one gone; then the rollout completes and the old ReplicaSet is empty.
    run(em, steps.slice(1, 2));
    await waitFor(
      web,
      (c) =>
        shape(c).includes(`ReplicaSet ${rs2} InProgress`) &&
        shape(c).filter((l) => l.startsWith('  Pod')).length === 2 &&
        shape(c).some((l) => l.startsWith(`  Pod ${rs2}`)),
      'one Pod of each',
    );
    run(em, steps.slice(2));
    const done = await waitFor(
      web,
      (c) =>
        shape(c).includes(`ReplicaSet ${rs2} Current`) &&
        shape(c).filter((l) => l.startsWith('  Pod')).length === 2 &&
        shape(c).every((l) => !l.startsWith(`  Pod ${rs1}`)),
      'the finished rollout',
    );
    expect(shape(done)).toContain(`ReplicaSet ${rs1} Current`);
    expect(shape(done).filter((l) => l.startsWith(`  Pod ${rs2}`))).toHaveLength(2);

    // Pods and ReplicaSets (not members here) were watched in the owners' namespaces only.
    const podReads = cluster.emulator
      .requests()
      .filter((r) => r.resource === 'pods' && (r.verb === 'list' || r.verb === 'watch'));
    expect(new Set(podReads.map((r) => r.namespace ?? '*'))).toEqual(new Set(['shop', 'vault']));
  });

  it('shows a crash-looping Pod as Failed with its reason, under its ReplicaSet', async () => {
    const em = cluster.emulator;
    const tree = await web();
    const pod = tree?.items.find((c) => c.kind === 'Pod');
    const current = em.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: pod!.name })!;
    const { buildPodStatus } = await import('../../../src/emulator/workload-objects.ts');
    em.patchStatus(
      { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: pod!.name },
      buildPodStatus(
        'main',
        String((current['spec'] as { containers: { image: string }[] }).containers[0]?.image),
        'crashing',
        3,
      ),
    );
    const after = await waitFor(
      web,
      (c) => c?.items.find((i) => i.name === pod!.name)?.status !== 'Current',
      'the crash-looping Pod',
    );
    const crashed = after?.items.find((i) => i.name === pod!.name);
    expect(crashed?.status).toMatch(/Failed|InProgress/);
    expect(crashed?.message).not.toBe('');
  });

  it('is what `phaselog status <phase> --tree` prints: an indented tree with status symbols, nested children in -o json', async () => {
    const phases = await gqlData<{ phases: { edges: { node: { name: string } }[] } }>(
      api.url,
      '{ phases(filter: { cluster: "trees" }) { edges { node { name } } } }',
      {},
      reader,
    );
    const phase = `trees/shop/${phases.phases.edges[0]!.node.name}`;
    const out: string[] = [];
    const ctx = (decorated: boolean): CommandContext => ({
      api: createApiClient({ url: api.url, token: reader }),
      hasToken: true,
      config: loadConfig({}, mkdtempSync(path.join(tmpdir(), 'phaselog-tree-'))),
      out: (text) => void out.push(text),
      err: () => {},
      errIsTerminal: false,
      decorated,
      paint: painter(false),
      now: () => new Date(),
    });
    const base: StatusOptions = {
      phase,
      output: 'table',
      headers: true,
      watch: false,
      clusters: [],
      statuses: [],
      tree: true,
    };
    const tree = await web();
    const rs = tree!.items.filter((i) => i.depth === 1).map((i) => i.name);
    const pods = tree!.items.filter((i) => i.depth === 2).map((i) => i.name);
    expect(await runStatus(ctx(true), base)).toBe(0);
    const text = out.join('');
    expect(text).toContain('apps/Deployment/shop/web  ');
    expect(text).toMatch(new RegExp(`[├└]─ apps/ReplicaSet/shop/${rs[0]}  [✔◐✘?] `));
    expect(text).toMatch(new RegExp(`[│ ]  [├└]─ Pod/shop/${pods[0]}  [✔◐✘?] `));
    expect(text).toContain('Service/shop/web  ✔ Current');

    out.length = 0;
    expect(await runStatus(ctx(false), { ...base, output: 'json' })).toBe(0);
    const json = JSON.parse(out.join('')) as {
      resources: { ref: string; children?: { ref: string; status: string; children?: { ref: string }[] }[] }[];
    };
    const dep = json.resources.find((r) => r.ref === 'apps/Deployment/shop/web');
    expect(dep?.children?.map((c) => c.ref).sort()).toEqual(rs.map((n) => `apps/ReplicaSet/shop/${n}`).sort());
    expect(
      dep?.children
        ?.flatMap((c) => c.children ?? [])
        .map((p) => p.ref)
        .sort(),
    ).toEqual(pods.map((n) => `Pod/shop/${n}`).sort());
    expect(json.resources.find((r) => r.ref === 'Service/shop/web')?.children).toBeUndefined();

    // Trees are live: no --at, no --watch, one phase only.
    await expect(runStatus(ctx(false), { ...base, at: '1h' })).rejects.toThrow(/live/);
    await expect(runStatus(ctx(false), { ...base, phase: undefined })).rejects.toThrow(CliError);
  });

  it('is null for resources that own nothing, and withheld from a token outside the member namespace', async () => {
    const all = await resources();
    expect(all.find((r) => r.kind === 'Service')?.children).toBeNull();
    await waitFor(
      () => resources(),
      (rs) => shape(rs.find((r) => r.name === 'keeper')?.children).length === 2,
      "keeper's tree",
    );
    // The shop token sees the phase (its inventory is in shop), but not what vault's Deployment owns.
    const scoped = await resources(shopReader);
    expect(scoped.find((r) => r.name === 'keeper')?.children).toEqual({
      omitted: 0,
      unknownReason: 'WITHHELD',
      items: [],
    });
    expect(shape(scoped.find((r) => r.kind === 'Deployment' && r.name === 'web')?.children).length).toBeGreaterThan(0);
    // A token for another namespace sees no phase, so no tree at all.
    expect(await resources(otherReader)).toEqual([]);
  });

  it('survives an API restart (the tree lives in Redis), and goes away when no worker refreshes it', async () => {
    await api.close();
    api = await startTestApi({ db, anonymousRead: false, redisUrl: testRedisUrl(), channelPrefix: prefix });
    expect(shape(await web()).length).toBeGreaterThan(0);
    // No worker: nothing renews the trees, which expire (3 publish intervals) instead of going stale.
    await workers?.close();
    workers = undefined;
    const gone = await waitFor(web, (c) => c?.unknownReason === 'NOT_PUBLISHED', 'the tree to expire', 10_000);
    expect(gone).toEqual({ omitted: 0, unknownReason: 'NOT_PUBLISHED', items: [] });
  });

  it('counts children in the query cost: a page of resources that is cheap alone is refused with every tree', async () => {
    const plain =
      '{ phases(first: 5) { edges { node { resources(first: 100) { edges { node { kind namespace name status } } } } } } }';
    expect((await gql(api.url, plain, {}, reader)).errors).toBeUndefined();
    const withTrees = plain.replace(
      'status }',
      'status children { items { kind namespace name status message depth } } }',
    );
    const refused = await gql(api.url, withTrees, {}, reader);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
  });

  it('ignores a corrupt or hostile tree in Redis rather than failing the query', async () => {
    const redis = new Redis(testRedisUrl());
    try {
      // Deeply nested beyond the bound, with far more nodes than a tree may return.
      let node: Record<string, unknown> = { g: '', k: 'Pod', ns: 'shop', n: 'deep', s: 'Current', m: '' };
      for (let i = 0; i < 10; i++)
        node = { g: 'apps', k: 'ReplicaSet', ns: 'shop', n: `rs-${i}`, s: 'Current', m: '', c: [node] };
      const many = Array.from({ length: 500 }, (_, i) => ({
        g: '',
        k: 'Pod',
        ns: 'shop',
        n: `p-${i}`,
        s: 'Current',
        m: '',
      }));
      await redis.set(
        `${prefix}:tree:trees:apps/Deployment/shop/web`,
        JSON.stringify({ at: Date.now(), o: 0, c: [node, ...many] }),
        'PX',
        60_000,
      );
      const bounded = await web();
      expect(bounded?.items.length).toBe(200);
      expect(Math.max(...(bounded?.items ?? []).map((i) => i.depth))).toBe(4);
      expect(bounded?.omitted).toBe(11 + 500 - 200);
      await redis.set(`${prefix}:tree:trees:apps/Deployment/shop/web`, '{"at":1,"c":[{"k":"Pod"}]', 'PX', 60_000);
      expect((await web())?.unknownReason).toBe('NOT_PUBLISHED');
    } finally {
      redis.disconnect();
    }
  });
});
