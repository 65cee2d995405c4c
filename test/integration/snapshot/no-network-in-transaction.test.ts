/**
 * A snapshot reads its cluster before its transaction opens and never while it holds the
 * cluster's row lock: a slow or hanging API server must not keep a PostgreSQL transaction (and
 * the lock every other worker waits on) open. The store port is wrapped so each transaction
 * counts the emulator's requests from its start to its end; the cases are the ones that read the
 * cluster for the store: a first snapshot, a database that lost the revisions a worker's watch
 * caches dropped (bodies read from the API server), a live snapshot, and a polling snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVENTORY_WATCHES } from '../../../src/kube/discover-phases.ts';
import { createWatchSet, type WatchSet } from '../../../src/kube/watch-set.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { ObservationMemos } from '../../../src/snapshot/memos.ts';
import { observeWithSources } from '../../../src/snapshot/observe.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { readRevisionBodies, RevisionMovedError } from '../../../src/snapshot/revision-bodies.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createSnapshotStore, type SnapshotStore } from '../../../src/store/snapshot-store.ts';
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

describe('a snapshot transaction', () => {
  let cluster: EmulatedCluster;
  let set: WatchSet;
  let publisher: ChangePublisher;
  const databases: TestDatabase[] = [];
  const memos = new ObservationMemos();
  let tick = Date.now();
  /** API requests made while each transaction was open, in order. */
  let duringTransactions: number[] = [];

  const requests = (): number => cluster.emulator.requests().length;
  /** The store, with every transaction counting the API requests made while it is open. */
  const counting = (store: SnapshotStore): SnapshotStore => ({
    withLockedCluster: (name, work) =>
      store.withLockedCluster(name, async (tx) => {
        const before = requests();
        try {
          return await work(tx);
        } finally {
          duringTransactions.push(requests() - before);
        }
      }),
  });
  const deps = (database: TestDatabase): SnapshotDeps => ({
    recorder: createRecorder(counting(createSnapshotStore(database.db))),
    publisher,
    log: testLogger(),
    observe: { memos },
  });
  const newDatabase = async (label: string): Promise<TestDatabase> => {
    const database = await createTestDatabase(label);
    databases.push(database);
    return database;
  };

  beforeAll(async () => {
    cluster = await startEmulatedCluster('no-network-in-tx');
    cluster.emulator.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      readyDeployment('shop', 'web'),
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
    publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('no-network-in-tx') });
  });
  afterAll(async () => {
    set?.stop();
    await publisher?.close();
    await cluster?.close();
    for (const database of databases) await database.drop();
  });

  it('makes no API request while polling: every object is listed before it opens', async () => {
    duringTransactions = [];
    const database = await newDatabase('no_network_poll');
    const before = requests();
    expect(await snapshotCluster(deps(database), cluster.client, new Date((tick += 1000)))).toMatchObject({
      written: true,
      changes: 5,
    });
    expect(requests()).toBeGreaterThan(before);
    expect(duringTransactions).toEqual([0]);
  });

  it('reads from the API server the revisions a new store lacks and the watch caches dropped, outside any transaction', async () => {
    set = createWatchSet(cluster.client, [
      ...INVENTORY_WATCHES,
      { group: 'apps', kind: 'Deployment' },
      { group: '', kind: 'ConfigMap' },
      { group: '', kind: 'Pod' },
    ]);
    expect([...(await set.start()).values()].every((e) => e === undefined)).toBe(true);
    const first = await newDatabase('no_network_first');
    duringTransactions = [];
    expect(await snapshotCluster(deps(first), cluster.client, new Date((tick += 1000)))).toMatchObject({
      written: true,
      changes: 5,
    });
    const web = () => set.caches.get('apps/Deployment')?.record('shop', 'web');
    expect(web()).toMatchObject({ hasBody: false });

    // A store that has never seen these revisions, as after a restore: the first attempt finds
    // them missing and rolls back, the bodies are read, the second attempt stores them.
    const restored = await newDatabase('no_network_restored');
    const gets = () => cluster.emulator.requests().filter((r) => r.resource === 'deployments').length;
    const getsBefore = gets();
    duringTransactions = [];
    expect(await snapshotCluster(deps(restored), cluster.client, new Date((tick += 1000)))).toMatchObject({
      written: true,
      changes: 5,
    });
    expect(gets()).toBeGreaterThan(getsBefore);
    expect(duringTransactions).toEqual([0, 0]);
    const stored = async (database: TestDatabase) =>
      (
        await database.db.objectRevision.findMany({ select: { hash: true, object: true }, orderBy: { hash: 'asc' } })
      ).map((r) => r.hash);
    expect(await stored(restored)).toEqual(await stored(first));
  });

  it('makes no API request during a live snapshot of the phases a change affects', async () => {
    const database = databases[1] as TestDatabase;
    cluster.emulator.apply([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: 'shop' },
        data: { mode: 'safe' },
      },
    ]);
    await waitUntil(
      () => set.caches.get('/ConfigMap')?.record('shop', 'settings')?.hasBody === true,
      'the changed ConfigMap in the cache',
    );
    duringTransactions = [];
    const changed = {
      objects: [{ group: '', kind: 'ConfigMap', namespace: 'shop', name: 'settings' }],
      inventories: [],
    };
    expect(await snapshotCluster(deps(database), cluster.client, new Date((tick += 1000)), { changed })).toMatchObject({
      written: true,
      live: true,
    });
    expect(duringTransactions).toEqual([0]);
  });

  it('refuses a dropped body whose object changed on the API server since it was observed', async () => {
    const observed = await observeWithSources(cluster.client, { memos });
    if (observed.observation.outcome !== 'ok') throw new Error('cluster unreachable');
    const web = observed.observation.phases[0]?.resources.find((r) => r.key === 'apps/Deployment/shop/web');
    const hash = web?.revision?.hash ?? '';
    expect(web?.revision?.body).toBeUndefined();
    expect((await readRevisionBodies(cluster.client, observed, [hash])).get(hash)).toMatchObject({
      kind: 'Deployment',
      metadata: { name: 'web' },
    });
    const moved = readyDeployment('shop', 'web');
    (moved.spec as { replicas: number }).replicas = 9;
    cluster.emulator.apply([moved]);
    await expect(readRevisionBodies(cluster.client, observed, [hash])).rejects.toBeInstanceOf(RevisionMovedError);
  });
});
