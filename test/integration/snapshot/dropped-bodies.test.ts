/**
 * Once a snapshot has stored a watched object's revision, the worker's cache keeps its hash and
 * status but not its body (src/kube/compact.ts): the store has it. These tests hold the worker to
 * what that must not cost: later snapshots record exactly what they would have, and a store that
 * lacks a revision since (a restored or new database), or a status that must be computed anew
 * (other custom health checks), is served by reading the object from the API server again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVENTORY_WATCHES } from '../../../src/kube/discover-phases.ts';
import type { CachedObject } from '../../../src/kube/compact.ts';
import { createWatchSet, type WatchSet } from '../../../src/kube/watch-set.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { inventoryConfigMap, readyDeployment } from './fleet.ts';
import {
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  waitUntil,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

const MEMBERS: [string, string, string, string][] = [
  ['shop', 'apps', 'Deployment', 'web'],
  ['shop', '', 'ConfigMap', 'settings'],
  ['shop', '', 'Pod', 'web-0'],
];

describe('watch-cache records after their revisions are stored', () => {
  let cluster: EmulatedCluster;
  let set: WatchSet;
  let publisher: ChangePublisher;
  const databases: TestDatabase[] = [];
  const marker = uniqueId('image');
  let tick = Date.now();

  const deps = (database: TestDatabase): SnapshotDeps => ({
    recorder: createRecorder(createSnapshotStore(database.db)),
    publisher,
    log: testLogger(),
  });
  const record = (kind: string, name: string): CachedObject | undefined =>
    set.caches.get(kind === 'Deployment' ? 'apps/Deployment' : `/${kind}`)?.record('shop', name);
  const revisionsHolding = async (database: TestDatabase, text: string): Promise<unknown[]> =>
    (await database.db.objectRevision.findMany()).map((r) => r.object).filter((o) => JSON.stringify(o).includes(text));

  beforeAll(async () => {
    cluster = await startEmulatedCluster('dropped-bodies');
    const deployment = readyDeployment('shop', 'web');
    const spec = deployment.spec as { template: { spec: { containers: { image: string }[] } } };
    spec.template.spec.containers[0] = {
      ...spec.template.spec.containers[0],
      image: `registry.example/${marker}:1`,
    } as { image: string };
    cluster.emulator.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      deployment,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: 'shop' },
        data: { mode: 'fast' },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-0', namespace: 'shop', labels: { app: 'web' } },
        spec: { containers: [{ name: 'main', image: 'nginx' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      },
      inventoryConfigMap('shop', 'inventory', 'shop', MEMBERS),
    ]);
    set = createWatchSet(cluster.client, [
      ...INVENTORY_WATCHES,
      { group: 'apps', kind: 'Deployment' },
      { group: '', kind: 'ConfigMap' },
      { group: '', kind: 'Pod' },
    ]);
    expect([...(await set.start()).values()].every((e) => e === undefined)).toBe(true);
    publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('dropped') });
  });
  afterAll(async () => {
    set?.stop();
    await publisher?.close();
    await cluster?.close();
    for (const database of databases) await database.drop();
  });

  it('keep the hash and status, not the body, and record later ticks as before', async () => {
    const database = await createTestDatabase('dropped_bodies');
    databases.push(database);
    const first = await snapshotCluster(deps(database), cluster.client, new Date((tick += 1000)));
    expect(first).toMatchObject({ written: true, changes: 5 });
    expect(await revisionsHolding(database, marker)).toHaveLength(1);
    // The Deployment's and ConfigMap's statuses are memoised: hash only. The Pod's status is computed every tick: its view stays.
    for (const name of ['web', 'settings'])
      expect(record(name === 'web' ? 'Deployment' : 'ConfigMap', name)).toMatchObject({
        hasBody: false,
        hasView: false,
      });
    expect(record('Pod', 'web-0')).toMatchObject({ hasBody: false, hasView: true });

    // Unchanged: nothing but the tick is written.
    const before = await database.db.resourceStatusInterval.count();
    expect(await snapshotCluster(deps(database), cluster.client, new Date((tick += 1000)))).toMatchObject({
      written: true,
      changes: 0,
    });
    expect(await database.db.resourceStatusInterval.count()).toBe(before);

    // A change: the new record holds its body until the snapshot that stores it.
    cluster.emulator.apply([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: 'shop' },
        data: { mode: 'safe' },
      },
    ]);
    await waitUntil(() => record('ConfigMap', 'settings')?.hasBody === true, 'the changed ConfigMap in the cache');
    expect(await snapshotCluster(deps(database), cluster.client, new Date((tick += 1000)))).toMatchObject({
      written: true,
    });
    expect(await revisionsHolding(database, '"mode":"safe"')).toHaveLength(1);
    expect(record('ConfigMap', 'settings')).toMatchObject({ hasBody: false });
  });

  it('read a revision the store lacks from the API server again', async () => {
    // A database that has never seen this cluster, as after a restore: every revision must be stored, from the server.
    const fresh = await createTestDatabase('dropped_bodies_fresh');
    databases.push(fresh);
    expect(record('Deployment', 'web')?.hasBody).toBe(false);
    const gets = () =>
      cluster.emulator.requests().filter((r) => r.resource === 'deployments' && r.verb === 'list').length;
    const listsBefore = gets();
    expect(await snapshotCluster(deps(fresh), cluster.client, new Date((tick += 1000)))).toMatchObject({
      written: true,
      changes: 5,
    });
    expect(gets()).toBeGreaterThan(listsBefore);
    const [original] = await revisionsHolding(databases[0] as TestDatabase, marker);
    expect(await revisionsHolding(fresh, marker)).toEqual([original]);
    const hashes = async (database: TestDatabase) =>
      (await database.db.objectRevision.findMany({ select: { hash: true }, orderBy: { hash: 'asc' } })).map(
        (r) => r.hash,
      );
    // Every revision stored is one a worker that held the bodies stored too.
    expect(await hashes(databases[0] as TestDatabase)).toEqual(expect.arrayContaining(await hashes(fresh)));
  });

  it('compute a status anew from the API server when the memo no longer fits', async () => {
    expect(record('Deployment', 'web')).toMatchObject({ hasView: false });
    // A custom health check for Deployments now: the memo made without it cannot answer.
    const customHealth = (object: Record<string, unknown>) =>
      object.kind === 'Deployment'
        ? {
            status: 'Failed' as const,
            message: `checked ${String((object.metadata as { name: string }).name)}`,
            conditions: [],
          }
        : undefined;
    const observation = await observeCluster(cluster.client, { customHealth });
    if (observation.outcome !== 'ok') throw new Error('cluster unreachable');
    const web = observation.phases[0]?.resources.find((r) => r.key === 'apps/Deployment/shop/web');
    expect(web).toMatchObject({ status: 'Failed', message: 'checked web' });
    expect(web?.revision?.body).toMatchObject({
      spec: { template: { spec: { containers: [{ image: `registry.example/${marker}:1` }] } } },
    });
  });
});
