/**
 * The inventory holders' conditions as the snapshot use case records them, on a real database: a
 * Flux Kustomization snapshotted again and again unchanged writes its conditions once and only moves
 * the run's time (so they stay fresh for gates); a change is written once; and a worker that
 * snapshotted the cluster before another one did writes in full, never trusting what it wrote last.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fluxKustomization, namespaceObject, readyDeployment, ref } from '../../../src/demo/objects.ts';
import type { StatusChange } from '../../../src/history/types.ts';
import type { ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { createHolderConditions, type HolderConditions } from '../../../src/services/record-holder-conditions.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { snapshotCluster } from '../../../src/snapshot/snapshot-cluster.ts';
import { createConditionStore } from '../../../src/store/condition-store.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import {
  createTestDatabase,
  startEmulatedCluster,
  testLogger,
  type EmulatedCluster,
  type TestDatabase,
} from '../snapshot/helpers.ts';

describe('holder conditions recorded with snapshots', () => {
  let db: TestDatabase;
  let cluster: EmulatedCluster;
  const published: StatusChange[] = [];
  const publisher: ChangePublisher = {
    publish: async (changes) => void published.push(...changes),
    close: async () => undefined,
  };

  const kustomization = (ready: 'True' | 'False') => {
    const base = fluxKustomization('apps', [ref('Deployment', 'shop', 'web')], 'main@sha1:1');
    const status = base.status as Record<string, unknown>;
    return {
      ...base,
      status: {
        ...status,
        conditions: [
          ready === 'True'
            ? { type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: 'ok' }
            : { type: 'Ready', status: 'False', reason: 'BuildFailed', message: 'kustomize build failed' },
        ],
      },
    };
  };

  beforeAll(async () => {
    db = await createTestDatabase('holder_conditions');
    cluster = await startEmulatedCluster('flux');
    cluster.emulator.apply([
      namespaceObject('shop'),
      namespaceObject('flux-system'),
      readyDeployment('shop', 'web'),
      kustomization('True'),
    ]);
  });
  afterAll(async () => {
    await cluster?.close();
    await db?.drop();
  });

  it('writes conditions once, keeps them fresh on unchanged runs, and writes in full after another worker ran', async () => {
    const store = createConditionStore(db.workerDb);
    const deps = (holders: HolderConditions) => ({
      recorder: createRecorder(createSnapshotStore(db.workerDb)),
      publisher,
      log: testLogger(),
      afterRecord: (o: Parameters<HolderConditions['afterSnapshot']>[0]) => holders.afterSnapshot(o, 30_000),
    });
    const workerA = deps(createHolderConditions(store));
    const workerB = deps(createHolderConditions(store));
    const snapshot = (worker: typeof workerA) => snapshotCluster(worker, cluster.client, new Date());
    const ready = async () => {
      const [id] = (await store.phaseIds('flux')).values();
      return (await store.currentConditions([id as number])).get(id as number)?.find((c) => c.type === 'flux/Ready');
    };
    const readyChanges = () => published.filter((c) => c.conditionType === 'flux/Ready').map((c) => c.toStatus);

    await snapshot(workerA);
    const first = await ready();
    expect(first).toMatchObject({ status: 'True', source: 'flux', reason: 'ReconciliationSucceeded' });
    for (let i = 0; i < 3; i++) await snapshot(workerA);
    const later = await ready();
    // Same condition since the first run; its run time moved with every snapshot.
    expect(later?.from).toEqual(first?.from);
    expect(later?.lastRunAt?.getTime()).toBeGreaterThan(first?.lastRunAt?.getTime() ?? Infinity);
    expect(readyChanges()).toEqual(['True']);

    // The cluster moves to worker B, which sees the Kustomization fail; then back to A, which sees it
    // Ready again: exactly what A wrote last, but B wrote since, so A must write, not only confirm.
    cluster.emulator.apply([kustomization('False')]);
    await snapshot(workerB);
    expect((await ready())?.status).toBe('False');
    cluster.emulator.apply([kustomization('True')]);
    await snapshot(workerA);
    expect((await ready())?.status).toBe('True');
    expect(readyChanges()).toEqual(['True', 'False', 'True']);
  });
});
