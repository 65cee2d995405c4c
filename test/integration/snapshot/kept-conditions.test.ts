/**
 * A phase condition keeps its lastTransitionTime while its status stays, from snapshot to snapshot:
 * the same whether the worker kept the cluster's state or read it from the store (which rebuilds
 * each condition from its stored detail and times).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import type { Db } from '../../../src/store/prisma.ts';
import { applyFleet, deploymentRef, readyStatus, rollingStatus, type FleetShape } from './fleet.ts';
import { createTestDatabase, startEmulatedCluster, type EmulatedCluster, type TestDatabase } from './helpers.ts';

const SHAPE: FleetShape = { phases: 1, resourcesPerPhase: 2, phasesPerNamespace: 1 };

/** The phase's current condition times, in condition order. */
async function conditionTimes(db: Db): Promise<string[]> {
  const row = await db.phaseCurrentStatus.findFirstOrThrow({ select: { conditionTimes: true } });
  return row.conditionTimes.map((t) => t.toISOString());
}

describe('phase conditions of a kept cluster state', () => {
  let kept: TestDatabase;
  let read: TestDatabase;
  let cluster: EmulatedCluster;

  beforeAll(async () => {
    [kept, read] = await Promise.all([createTestDatabase('conditions_kept'), createTestDatabase('conditions_read')]);
    cluster = await startEmulatedCluster('conditions');
    applyFleet(cluster.emulator, SHAPE);
  });
  afterAll(async () => {
    await cluster?.close();
    await Promise.all([kept?.drop(), read?.drop()]);
  });

  it('keep the time a condition last changed while its status stays', async () => {
    const keeping = createRecorder(createSnapshotStore(kept.db));
    const reading = createRecorder(createSnapshotStore(read.db), { keepState: false });
    const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute));
    const iso = (minute: number) => at(minute).toISOString();
    // [minute, change, the Ready, Reconciling and Stalled conditions' times after it]
    const steps: [number, () => void, string[]][] = [
      [0, () => undefined, [iso(0), iso(0), iso(0)]],
      // Ready turns False and Reconciling True; Stalled stays False.
      [1, () => cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus()), [iso(1), iso(1), iso(0)]],
      // Another InProgress message: the phase's status interval is replaced, its conditions' times stay.
      [2, () => cluster.emulator.patchStatus(deploymentRef(0, 1, SHAPE), rollingStatus()), [iso(1), iso(1), iso(0)]],
      [
        3,
        () => [0, 1].forEach((r) => cluster.emulator.patchStatus(deploymentRef(0, r, SHAPE), readyStatus())),
        [iso(3), iso(3), iso(0)],
      ],
    ];
    for (const [minute, change, expected] of steps) {
      change();
      const observation = await observeCluster(cluster.client, { now: () => at(minute) });
      for (const store of [keeping, reading])
        expect(await store.record(observation, { tickAt: at(minute) }), `minute ${minute}`).toMatchObject({
          written: true,
        });
      expect(await conditionTimes(kept.db), `minute ${minute} (kept)`).toEqual(expected);
      expect(await conditionTimes(read.db), `minute ${minute} (read)`).toEqual(expected);
    }
  });
});
