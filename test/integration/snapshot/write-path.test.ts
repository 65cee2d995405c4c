import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChangePublisher,
  subscribeChanges,
  type ChangePublisher,
  type ChangeSubscription,
} from '../../../src/pubsub/change-publisher.ts';
import type { StatusChange } from '../../../src/history/types.ts';
import { encodeChangeEvent } from '../../../src/pubsub/change-event.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { createHistoryReader, type HistoryReader, type StatusChangeFilter } from '../../../src/store/read-history.ts';
import { FULL_ACCESS } from '../../../src/store/read-types.ts';
import {
  applyFleet,
  deploymentRef,
  inventoryConfigMap,
  readyStatus,
  resourceName,
  rollingStatus,
  type FleetShape,
} from './fleet.ts';
import {
  countRows,
  createTestDatabase,
  observationRuns,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  waitUntil,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

const SHAPE: FleetShape = { phases: 3, resourcesPerPhase: 4, phasesPerNamespace: 2 };

describe('recording snapshots of a cluster', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let publisher: ChangePublisher;
  let subscription: ChangeSubscription;
  let deps: SnapshotDeps;
  let reader: HistoryReader;
  const events: StatusChange[] = [];
  let tick = Date.UTC(2026, 0, 1);
  const nextTick = (): Date => new Date((tick += 30_000));
  const snapshot = () => snapshotCluster(deps, cluster.client, nextTick());
  /** The change log after `afterSeq`, as a subscriber catching up reads it. */
  const changesSince = async (afterSeq: bigint, filter: StatusChangeFilter = {}) =>
    (await reader.listStatusChanges(FULL_ACCESS, filter, 5000, afterSeq)).items;

  beforeAll(async () => {
    const prefix = uniqueId('snapshot');
    database = await createTestDatabase('write');
    cluster = await startEmulatedCluster('alpha');
    applyFleet(cluster.emulator, SHAPE);
    publisher = createChangePublisher(REDIS_URL, { prefix });
    subscription = await subscribeChanges(REDIS_URL, (event) => events.push(event), { prefix });
    // The observation clock follows the tick, so interval bounds are checkable.
    deps = {
      recorder: createRecorder(createSnapshotStore(database.db)),
      publisher,
      log: testLogger(),
      observe: { now: () => new Date(tick) },
    };
    reader = createHistoryReader(database.db);
  });
  afterAll(async () => {
    await subscription?.close();
    await publisher?.close();
    await cluster?.close();
    await database?.drop();
  });

  it('records every resource, phase and the cluster on the first snapshot', async () => {
    const outcome = await snapshot();
    expect(outcome).toMatchObject({ written: true, outcome: 'ok', changes: 12 + 3 + 1, published: true });
    const counts = await countRows(database.db);
    expect(counts).toMatchObject({
      Cluster: 1,
      Phase: 3,
      PhaseManifest: 3,
      Manifest: 3,
      ResourceCurrentStatus: 12,
      ResourceStatusInterval: 0,
      PhaseCurrentStatus: 3,
      PhaseStatusInterval: 0,
      ObservationTick: 0,
      ClusterReachability: 1,
    });
    expect(await database.db.cluster.findFirstOrThrow()).toMatchObject({
      name: 'alpha',
      labels: { env: 'test' },
      reachable: true,
      lastGoodReadAt: new Date(tick),
    });
    const statuses = await database.db.resourceCurrentStatus.groupBy({ by: ['status'], _count: true });
    expect(statuses).toEqual([{ status: 'Current', _count: 12 }]);
    await waitUntil(() => events.length === 16, '16 change events');
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => (a < b ? -1 : 1)));
  });

  it('adds no per-resource rows over 10 unchanged ticks, only extends the observation run', async () => {
    const before = await countRows(database.db);
    const runsBefore = await observationRuns(database.db, 'alpha');
    for (let i = 0; i < 10; i += 1) expect(await snapshot()).toMatchObject({ written: true, changes: 0 });
    expect(await countRows(database.db)).toEqual(before);
    const runs = await observationRuns(database.db, 'alpha');
    expect(runs).toHaveLength(runsBefore.length);
    const [run, runBefore] = [runs.at(-1), runsBefore.at(-1)];
    expect(run?.firstSeenAt).toEqual(runBefore?.firstSeenAt);
    expect(run?.count).toBe((runBefore?.count ?? 0) + 10);
    expect(run?.lastSeenAt.getTime()).toBe(tick);
  });

  it('records one resource change as one closed and one opened interval, one change row and one event', async () => {
    const before = await countRows(database.db);
    const lastSeq = (await database.db.statusChange.aggregate({ _max: { seq: true } }))._max.seq ?? 0n;
    events.length = 0;
    cluster.emulator.patchStatus(deploymentRef(0, 1, SHAPE), rollingStatus());
    const outcome = await snapshot();
    const key = `apps/Deployment/team-0/${resourceName(0, 1)}`;
    const resourceChanges = (await changesSince(lastSeq)).filter((c) => c.scope === 'resource');
    expect(resourceChanges).toEqual([
      expect.objectContaining({ resourceKey: key, fromStatus: 'Current', toStatus: 'InProgress' }),
    ]);
    const { id: resourceId } = await database.db.resource.findFirstOrThrow({ where: { key } });
    const ended = await database.db.resourceStatusInterval.findMany({
      where: { resourceId },
      orderBy: { from: 'asc' },
    });
    expect(ended.map((i) => [i.status, i.to.getTime()])).toEqual([['Current', tick]]);
    const current = await database.db.resourceCurrentStatus.findFirstOrThrow({ where: { resource: { key } } });
    expect([current.status, current.from.getTime()]).toEqual(['InProgress', tick]);
    // The phase's aggregate moved too, and is recorded as its own change.
    const phaseChanges = await database.db.statusChange.findMany({ where: { seq: { gt: lastSeq }, scope: 'phase' } });
    expect(phaseChanges).toEqual([expect.objectContaining({ fromStatus: 'Current', toStatus: 'InProgress' })]);
    expect(outcome.changes).toBe(2);
    const after = await countRows(database.db);
    expect(after.ResourceStatusInterval - before.ResourceStatusInterval).toBe(1);
    expect(after.StatusChange - before.StatusChange).toBe(2);
    await waitUntil(() => events.length === 2, 'two change events');
    const resourceEvents = events.filter((e) => e.scope === 'resource');
    expect(resourceEvents).toEqual([
      expect.objectContaining({
        seq: resourceChanges[0]?.seq,
        resourceKey: key,
        fromStatus: 'Current',
        toStatus: 'InProgress',
        cluster: 'alpha',
      }),
    ]);
    expect(events.map(encodeChangeEvent).join('\n')).not.toContain('nginx');
    // A subscriber that missed the events reads the same changes from the log by seq.
    const missed = await changesSince(lastSeq, { cluster: 'alpha' });
    expect(missed).toEqual(events);
    expect(await changesSince(lastSeq, { cluster: 'elsewhere' })).toEqual([]);
  });

  it('writes nothing for a tick that is already recorded', async () => {
    const before = await countRows(database.db);
    cluster.emulator.patchStatus(deploymentRef(0, 1, SHAPE), readyStatus());
    const duplicate = await snapshotCluster(deps, cluster.client, new Date(tick));
    expect(duplicate).toMatchObject({ written: false, changes: 0 });
    const older = await snapshotCluster(deps, cluster.client, new Date(tick - 1000));
    expect(older.written).toBe(false);
    expect(await countRows(database.db)).toEqual(before);
    expect((await snapshot()).changes).toBe(2);
  });

  it('closes the interval of a resource dropped from the inventory and records it leaving', async () => {
    const refs: [string, string, string, string][] = [0, 1, 2].map((r) => [
      'team-1',
      'apps',
      'Deployment',
      resourceName(2, r),
    ]);
    cluster.emulator.apply(inventoryConfigMap('team-1', 'inventory-2', 'phase-2', refs));
    await snapshot();
    const key = `apps/Deployment/team-1/${resourceName(2, 3)}`;
    const open = await database.db.resourceCurrentStatus.count({ where: { resource: { key } } });
    expect(open).toBe(0);
    const change = (await changesSince(0n)).filter((c) => c.resourceKey === key).at(-1);
    expect(change).toMatchObject({ fromStatus: 'Current', toStatus: null });
    expect(await database.db.manifest.count()).toBe(4);
  });

  it('stores revisions without last-applied-configuration, and a Secret without its data', async () => {
    cluster.emulator.apply([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-password', namespace: 'team-1' },
        type: 'Opaque',
        data: { password: Buffer.from('hunter2').toString('base64') },
        stringData: { token: 'abc' },
      },
      inventoryConfigMap('team-1', 'inventory-9', 'phase-9', [['team-1', '', 'Secret', 'db-password']]),
    ]);
    await snapshot();
    const revisions = await database.db.objectRevision.findMany();
    const text = JSON.stringify(revisions.map((r) => r.object));
    expect(text).not.toContain('last-applied-configuration');
    expect(text).not.toContain(Buffer.from('hunter2').toString('base64'));
    expect(text).not.toContain('stringData');
    expect(revisions.some((r) => (r.object as { kind?: string }).kind === 'Secret')).toBe(true);
  });

  it('marks a phase deleted when its inventory vanishes, closing its intervals', async () => {
    cluster.emulator.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-1', name: 'inventory-9' });
    await snapshot();
    const phase = await database.db.phase.findFirstOrThrow({ where: { inventoryId: 'phase-9' } });
    expect(phase.deletedAt?.getTime()).toBe(tick);
    expect(await database.db.resourceCurrentStatus.count({ where: { resource: { phaseId: phase.id } } })).toBe(0);
    expect(await database.db.phaseCurrentStatus.count({ where: { phaseId: phase.id } })).toBe(0);
    const change = await database.db.statusChange.findFirstOrThrow({
      where: { phaseId: phase.id },
      orderBy: { seq: 'desc' },
    });
    expect(change).toMatchObject({ scope: 'phase', toStatus: null });
  });

  it('keeps the last statuses of a kind whose LIST fails for a while, instead of flapping to Unknown', async () => {
    await snapshot();
    const before = await countRows(database.db);
    const remove = cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'deployments' },
      effect: 'status',
      statusCode: 500,
    });
    const failing = await snapshot();
    remove();
    expect(failing).toMatchObject({ outcome: 'ok', changes: 0 });
    expect(await database.db.phaseCurrentStatus.count({ where: { stale: true } })).toBe(3);
    const back = await snapshot();
    expect(back.changes).toBe(0);
    const after = await countRows(database.db);
    expect(after.ResourceStatusInterval).toBe(before.ResourceStatusInterval);
    expect(after.StatusChange).toBe(before.StatusChange);
    expect(await database.db.phaseCurrentStatus.count({ where: { stale: true } })).toBe(0);
  });

  it('records an outage as one reachability change, keeps phases stale, and records recovery', async () => {
    await snapshot();
    const lastGood = new Date(tick);
    const before = await countRows(database.db);
    const remove = cluster.emulator.injectFault({ effect: 'reset' });
    const outage = await snapshot();
    expect(outage).toMatchObject({ written: true, outcome: 'unreachable', changes: 1 });
    await snapshot();
    const during = await countRows(database.db);
    expect(during.StatusChange - before.StatusChange).toBe(1);
    expect(during.ResourceStatusInterval).toBe(before.ResourceStatusInterval);
    const clusterChange = await database.db.statusChange.findFirstOrThrow({
      where: { scope: 'cluster' },
      orderBy: { seq: 'desc' },
    });
    expect(clusterChange).toMatchObject({ fromStatus: 'Reachable', toStatus: 'Unreachable' });
    const stale = await database.db.phaseCurrentStatus.findMany();
    expect(stale.length).toBe(3);
    expect(stale.every((s) => s.stale && s.staleSince?.getTime() === lastGood.getTime())).toBe(true);
    expect(stale.map((s) => s.status).sort()).toEqual(['Current', 'Current', 'Current']);
    const row = await database.db.cluster.findFirstOrThrow();
    expect(row).toMatchObject({ reachable: false, lastGoodReadAt: lastGood });

    remove();
    const recovered = await snapshot();
    expect(recovered).toMatchObject({ outcome: 'ok', changes: 1 });
    const recovery = await database.db.statusChange.findFirstOrThrow({
      where: { scope: 'cluster' },
      orderBy: { seq: 'desc' },
    });
    expect(recovery).toMatchObject({ fromStatus: 'Unreachable', toStatus: 'Reachable' });
    const after = await countRows(database.db);
    expect(after.ResourceStatusInterval).toBe(before.ResourceStatusInterval);
    expect(await database.db.phaseCurrentStatus.count({ where: { stale: true } })).toBe(0);
    const reachability = await database.db.clusterReachability.findMany({ orderBy: { id: 'asc' } });
    expect(reachability.map((r) => [r.reachable, r.to === null])).toEqual([
      [true, false],
      [false, false],
      [true, true],
    ]);
  });
});
