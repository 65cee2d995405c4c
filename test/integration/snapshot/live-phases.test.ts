/**
 * Live snapshots of the phases a change affects (issue #6's live path): a change to one object
 * records that object's phase only, leaves the other phases as they were (never "deleted"),
 * reads only that phase's objects, and leaves the cluster's scheduled ticks to do the whole
 * cluster as before. Against the emulator, real Postgres and real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createClusterStore } from '../../../src/store/cluster-store.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import type { ObjectRef } from '../../../src/inventory/types.ts';
import {
  applyFleet,
  deploymentRef,
  namespaceOf,
  readyStatus,
  resourceName,
  rollingStatus,
  type FleetShape,
} from './fleet.ts';
import {
  countRows,
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

const SHAPE: FleetShape = { phases: 4, resourcesPerPhase: 3, phasesPerNamespace: 2 };

function deployment(p: number, r: number): ObjectRef {
  return { group: 'apps', kind: 'Deployment', namespace: namespaceOf(p, SHAPE), name: resourceName(p, r) };
}

function inventory(p: number): ObjectRef {
  return { group: '', kind: 'ConfigMap', namespace: namespaceOf(p, SHAPE), name: `inventory-${p}` };
}

describe('live snapshots of the affected phases', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let publisher: ChangePublisher;
  let deps: SnapshotDeps;
  let tick = Date.UTC(2026, 0, 1);
  const nextTick = (): Date => new Date((tick += 30_000));
  const full = () => snapshotCluster(deps, cluster.client, nextTick());
  const live = (changed: { objects?: ObjectRef[]; inventories?: ObjectRef[] }, at = nextTick()) =>
    snapshotCluster(deps, cluster.client, at, {
      changed: { objects: changed.objects ?? [], inventories: changed.inventories ?? [] },
    });
  const changesSince = async (seq: bigint) =>
    (await database.db.statusChange.findMany({ where: { seq: { gt: seq } }, orderBy: { seq: 'asc' } })).map((c) => ({
      scope: c.scope,
      phaseId: c.phaseId,
      from: c.fromStatus,
      to: c.toStatus,
    }));
  const lastSeq = async () => (await database.db.statusChange.aggregate({ _max: { seq: true } }))._max.seq ?? 0n;
  const phaseId = async (p: number) => (await database.db.phase.findFirstOrThrow({ where: { name: `phase-${p}` } })).id;

  beforeAll(async () => {
    database = await createTestDatabase('partial');
    cluster = await startEmulatedCluster('partial');
    applyFleet(cluster.emulator, SHAPE);
    publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('partial') });
    deps = {
      recorder: createRecorder(createSnapshotStore(database.db)),
      publisher,
      log: testLogger(),
      observe: { now: () => new Date(tick) },
    };
    // Scheduled ticks hourly: the live snapshots between two full ones leave no unobserved span.
    await createClusterStore(database.db).registerClusters({
      configured: [cluster.name],
      snapshotIntervalMs: 3_600_000,
    });
    expect(await full()).toMatchObject({ written: true, live: false, phases: 4 });
  });
  afterAll(async () => {
    await publisher?.close();
    await cluster?.close();
    await database?.drop();
  });

  it('records a changed Deployment by observing its phase only, and leaves the other phases alone', async () => {
    const seq = await lastSeq();
    const before = await database.db.cluster.findFirstOrThrow();
    cluster.emulator.patchStatus(deploymentRef(2, 1, SHAPE), rollingStatus());
    cluster.emulator.resetRequests();
    const outcome = await live({ objects: [deployment(2, 1)] });
    expect(outcome).toMatchObject({ written: true, live: true, phases: 1, changes: 2 });
    // The resource and its phase went InProgress; nothing about any other phase was written.
    const id = await phaseId(2);
    expect(await changesSince(seq)).toEqual([
      { scope: 'phase', phaseId: id, from: 'Current', to: 'InProgress' },
      { scope: 'resource', phaseId: id, from: 'Current', to: 'InProgress' },
    ]);
    expect(await database.db.phase.count({ where: { deletedAt: { not: null } } })).toBe(0);
    // Only the phase's namespace was read: one LIST of its Deployments (inventories come from the same read path).
    const deploymentLists = cluster.emulator
      .requests()
      .filter((r) => r.verb === 'list' && r.resource === 'deployments');
    expect(deploymentLists.map((r) => r.namespace ?? '')).toEqual([namespaceOf(2, SHAPE)]);
    // A live snapshot is no tick: the watermark and the observation run stay (no ObservationTick
    // row), so the scheduled tick runs as it would have and sees the run no longer matches.
    const after = await database.db.cluster.findFirstOrThrow();
    expect(after.lastTickAt).toEqual(before.lastTickAt);
    expect(after.lastGoodReadAt?.getTime()).toBe(tick);
    expect({ first: after.tickFirstSeenAt, count: after.tickCount }).toEqual({
      first: before.tickFirstSeenAt,
      count: before.tickCount,
    });
    expect(await database.db.observationTick.count()).toBe(0);
  });

  it('leaves nothing for the next scheduled tick to write twice; that tick ends the run the live snapshot changed', async () => {
    const seq = await lastSeq();
    const rows = await countRows(database.db);
    expect(await full()).toMatchObject({ written: true, live: false, phases: 4, changes: 0 });
    expect(await changesSince(seq)).toEqual([]);
    expect(await countRows(database.db)).toEqual({ ...rows, ObservationTick: rows.ObservationTick + 1 });
    // From then on, unchanged ticks extend the new run as usual.
    expect(await full()).toMatchObject({ written: true, changes: 0 });
    expect(await countRows(database.db)).toEqual({ ...rows, ObservationTick: rows.ObservationTick + 1 });
  });

  it('writes no row at all when the changed objects changed nothing phaselog records', async () => {
    const rows = await countRows(database.db);
    const before = await database.db.cluster.findFirstOrThrow();
    // The watch saw phase-1's objects change (say, an annotation), but no status did.
    const outcome = await live({ objects: [deployment(1, 0), deployment(1, 1)], inventories: [inventory(1)] });
    expect(outcome).toMatchObject({ written: true, live: true, phases: 1, changes: 0, rows: 0 });
    expect(await countRows(database.db)).toEqual(rows);
    expect(await database.db.cluster.findFirstOrThrow()).toEqual(before);
  });

  it('records a revert at the next scheduled tick even when the whole cluster looks as it did before the live snapshot', async () => {
    // Tick T0 sees state A, a live snapshot records B, the object returns to A before the next
    // tick: that tick must not take A for "unchanged since T0".
    const id = await phaseId(0);
    expect(await full()).toMatchObject({ written: true, changes: 0 });
    cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus());
    expect(await live({ objects: [deployment(0, 0)] })).toMatchObject({ written: true, live: true, changes: 2 });
    cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), readyStatus());
    const seq = await lastSeq();
    expect(await full()).toMatchObject({ written: true, changes: 2 });
    expect(await changesSince(seq)).toEqual([
      { scope: 'phase', phaseId: id, from: 'InProgress', to: 'Current' },
      { scope: 'resource', phaseId: id, from: 'InProgress', to: 'Current' },
    ]);
  });

  it('is recorded whatever tick was written last (a scheduled tick with a later slot may have run first)', async () => {
    const written = (await database.db.cluster.findFirstOrThrow()).lastTickAt as Date;
    cluster.emulator.patchStatus(deploymentRef(3, 2, SHAPE), rollingStatus());
    const outcome = await live({ objects: [deployment(3, 2)] }, new Date(written.getTime() - 10_000));
    expect(outcome).toMatchObject({ written: true, live: true, phases: 1, changes: 2 });
    cluster.emulator.patchStatus(deploymentRef(3, 2, SHAPE), readyStatus());
    expect(await live({ objects: [deployment(3, 2)] })).toMatchObject({ written: true, changes: 2 });
  });

  it('writes nothing for a change that belongs to no phase', async () => {
    const rows = await countRows(database.db);
    const outcome = await live({
      objects: [{ group: 'apps', kind: 'Deployment', namespace: 'team-0', name: 'not-in-any-inventory' }],
    });
    expect(outcome).toMatchObject({ written: false, skipped: 'NOTHING_AFFECTED', phases: 0 });
    expect(await countRows(database.db)).toEqual(rows);
  });

  it('records an inventory change as its phase only, and a deleted inventory by observing the whole cluster', async () => {
    // phase-1 gains a resource: its inventory ConfigMap changed.
    const ns = namespaceOf(1, SHAPE);
    cluster.emulator.apply([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'extra', namespace: ns, generation: 1 },
        spec: { replicas: 1 },
        status: { ...readyStatus(), replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
      },
    ]);
    const current = cluster.emulator.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: 'inventory-1',
    }) as { data: Record<string, string> };
    cluster.emulator.apply([{ ...current, data: { ...current.data, [`${ns}_extra_apps_Deployment`]: '{}' } }]);
    const grown = await live({ inventories: [inventory(1)] });
    expect(grown).toMatchObject({ written: true, live: true, phases: 1 });
    expect(await database.db.phaseManifest.count({ where: { phaseId: await phaseId(1) } })).toBe(2);
    expect(await database.db.phase.count({ where: { deletedAt: { not: null } } })).toBe(0);

    // phase-3's inventory is deleted: no known phase owns the deleted object, so the whole cluster is observed and the phase recorded as deleted.
    cluster.emulator.remove({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: namespaceOf(3, SHAPE),
      name: 'inventory-3',
    });
    const seq = await lastSeq();
    const outcome = await live({ inventories: [inventory(3)] });
    expect(outcome).toMatchObject({ written: true, live: false, phases: 3 });
    expect(await changesSince(seq)).toEqual([{ scope: 'phase', phaseId: await phaseId(3), from: 'Current', to: null }]);
    expect((await database.db.phase.findMany({ where: { deletedAt: { not: null } } })).map((p) => p.name)).toEqual([
      'phase-3',
    ]);
  });

  it('leaves a deletion its changes do not name to the next scheduled tick, which records it', async () => {
    // phase-2's inventory goes while a live snapshot records changes of every other phase: that
    // snapshot saw what a whole observation would see now, but did not look for deleted phases,
    // so the tick after it must not take the cluster for unchanged.
    cluster.emulator.remove({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: namespaceOf(2, SHAPE),
      name: 'inventory-2',
    });
    cluster.emulator.patchStatus(deploymentRef(0, 2, SHAPE), rollingStatus());
    // (phase-3 went in the test before.)
    const outcome = await live({ objects: [deployment(0, 2), deployment(1, 0)] });
    expect(outcome).toMatchObject({ written: true, live: true, phases: 2, changes: 2 });
    expect(await database.db.phase.count({ where: { name: 'phase-2', deletedAt: { not: null } } })).toBe(0);
    const seq = await lastSeq();
    expect(await full()).toMatchObject({ written: true, live: false, changes: 1 });
    expect(await changesSince(seq)).toEqual([
      { scope: 'phase', phaseId: await phaseId(2), from: 'InProgress', to: null },
    ]);
  });
});
