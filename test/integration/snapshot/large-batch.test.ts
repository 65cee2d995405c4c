import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { createRecorder, type Recorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import type { ClusterObservation } from '../../../src/history/types.ts';
import { applyFleet, deploymentRef, readyStatus, rollingStatus, type FleetShape } from './fleet.ts';
import {
  countRows,
  createTestDatabase,
  startEmulatedCluster,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

// More resources than one statement's batch (10,000), so every bulk statement runs more than once.
const SHAPE: FleetShape = { phases: 105, resourcesPerPhase: 100, phasesPerNamespace: 15 };
const RESOURCES = SHAPE.phases * SHAPE.resourcesPerPhase;

describe('a snapshot in which every resource changes', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let history: Recorder;
  let tick = Date.UTC(2026, 0, 1);

  const observe = async (): Promise<ClusterObservation> => {
    const observation = await observeCluster(cluster.client, { now: () => new Date(tick) });
    expect(observation.outcome).toBe('ok');
    return observation;
  };
  const flipAll = (status: () => Record<string, unknown>): void => {
    for (let p = 0; p < SHAPE.phases; p += 1)
      for (let r = 0; r < SHAPE.resourcesPerPhase; r += 1)
        cluster.emulator.patchStatus(deploymentRef(p, r, SHAPE), status());
  };

  beforeAll(async () => {
    database = await createTestDatabase('large');
    cluster = await startEmulatedCluster('large');
    applyFleet(cluster.emulator, SHAPE);
    history = createRecorder(createSnapshotStore(database.db));
    const first = await history.record(await observe(), { tickAt: new Date(tick) });
    expect(first).toMatchObject({ written: true, changes: expect.any(Array) });
    expect(first.written && first.changes.length).toBe(RESOURCES + SHAPE.phases + 1);
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
    await database?.drop();
  });

  it('is written in one transaction with exact row counts, revisions not stored again', async () => {
    const before = await countRows(database.db);
    const maxSeq = (await database.db.statusChange.aggregate({ _max: { seq: true } }))._max.seq ?? 0n;
    flipAll(rollingStatus);
    tick += 30_000;
    const result = await history.record(await observe(), { tickAt: new Date(tick) });
    if (!result.written) throw new Error('not written');
    const after = await countRows(database.db);
    const delta = Object.fromEntries(
      Object.keys(after).map((k) => [k, after[k as keyof typeof after] - before[k as keyof typeof before]]),
    );
    // Each resource: one change row, one ended interval, its current row updated in place; each phase the same.
    expect(delta).toMatchObject({
      StatusChange: RESOURCES + SHAPE.phases,
      ResourceStatusInterval: RESOURCES,
      ResourceCurrentStatus: 0,
      PhaseStatusInterval: SHAPE.phases,
      PhaseCurrentStatus: 0,
      Phase: 0,
      // The objects' specs did not change: their revisions are the stored ones.
      ObjectRevision: 0,
      Manifest: 0,
    });
    expect(result.changes).toHaveLength(RESOURCES + SHAPE.phases);
    // The store's own count: ended + set resource rows, ended + set phase rows, their phases, the cluster row, the change rows.
    expect(result.rows).toBe(RESOURCES * 2 + SHAPE.phases * 3 + 1 + 1 + RESOURCES + SHAPE.phases);
    // One transaction: one time, consecutive seqs, in the order of the returned changes.
    const rows = await database.db.statusChange.findMany({
      where: { seq: { gt: maxSeq } },
      orderBy: { seq: 'asc' },
      select: { seq: true, at: true, resourceId: true, toStatus: true },
    });
    expect(new Set(rows.map((r) => r.at.getTime()))).toEqual(new Set([tick]));
    expect(rows.map((r) => r.seq)).toEqual(result.changes.map((c) => c.seq));
    expect(rows.at(-1)?.seq).toBe(maxSeq + BigInt(rows.length));
    expect(rows.filter((r) => r.resourceId !== null).every((r) => r.toStatus === 'InProgress')).toBe(true);
    const current = await database.db.resourceCurrentStatus.groupBy({
      by: ['status'],
      _count: true,
      where: { from: new Date(tick) },
    });
    expect(current).toEqual([{ status: 'InProgress', _count: RESOURCES }]);
    expect(await database.db.resourceCurrentStatus.count({ where: { revisionId: null } })).toBe(0);
  }, 60_000);

  it('writes nothing twice for the same tick, and flips back with the same counts', async () => {
    const observation = await observe();
    const before = await countRows(database.db);
    expect(await history.record(observation, { tickAt: new Date(tick) })).toMatchObject({ written: false });
    expect(await countRows(database.db)).toEqual(before);
    flipAll(readyStatus);
    tick += 30_000;
    const result = await history.record(await observe(), { tickAt: new Date(tick) });
    const after = await countRows(database.db);
    expect(result.written && result.changes.length).toBe(RESOURCES + SHAPE.phases);
    expect(after.ResourceStatusInterval - before.ResourceStatusInterval).toBe(RESOURCES);
    expect(after.ObjectRevision - before.ObjectRevision).toBe(0);
    // Intervals tile time: each resource's ended intervals are [t0, t1) and [t1, t2).
    const ended = await database.db.resourceStatusInterval.groupBy({
      by: ['from', 'to', 'status'],
      _count: true,
      orderBy: { from: 'asc' },
    });
    expect(ended.map((e) => [e.status, e.to.getTime() - e.from.getTime(), e._count])).toEqual([
      ['Current', 30_000, RESOURCES],
      ['InProgress', 30_000, RESOURCES],
    ]);
  }, 60_000);
});
