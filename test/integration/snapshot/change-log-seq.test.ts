import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { createRecorder, type Recorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import type { StatusChange } from '../../../src/history/types.ts';
import { createHistoryReader } from '../../../src/store/read-history.ts';
import { FULL_ACCESS } from '../../../src/store/read-types.ts';
import { applyFleet, deploymentRef, readyStatus, rollingStatus, type FleetShape } from './fleet.ts';
import { createTestDatabase, startEmulatedCluster, type EmulatedCluster, type TestDatabase } from './helpers.ts';

const SHAPE: FleetShape = { phases: 4, resourcesPerPhase: 30, phasesPerNamespace: 2 };

describe('the change log of snapshots written at once by two workers', () => {
  let database: TestDatabase;
  const clusters: EmulatedCluster[] = [];
  const workers: Recorder[] = [];
  let tick = Date.UTC(2026, 0, 1);

  const flipAll = (cluster: EmulatedCluster, status: () => Record<string, unknown>): void => {
    for (let p = 0; p < SHAPE.phases; p += 1)
      for (let r = 0; r < SHAPE.resourcesPerPhase; r += 1)
        cluster.emulator.patchStatus(deploymentRef(p, r, SHAPE), status());
  };
  const recordBoth = async (): Promise<StatusChange[][]> => {
    const tickAt = new Date((tick += 30_000));
    const observations = await Promise.all(clusters.map((c) => observeCluster(c.client, { now: () => tickAt })));
    const results = await Promise.all(observations.map((o, i) => (workers[i] as Recorder).record(o, { tickAt })));
    return results.map((r) => (r.written ? r.changes : []));
  };
  /** The change log after `afterSeq`, as a subscriber catching up reads it. */
  const changesSince = async (afterSeq: bigint): Promise<StatusChange[]> =>
    (await createHistoryReader(database.db).listStatusChanges(FULL_ACCESS, {}, 5000, afterSeq)).items;

  beforeAll(async () => {
    database = await createTestDatabase('seq');
    for (const name of ['east', 'west']) {
      const cluster = await startEmulatedCluster(name);
      applyFleet(cluster.emulator, SHAPE);
      clusters.push(cluster);
      workers.push(createRecorder(createSnapshotStore(database.db)));
    }
    await recordBoth();
  }, 60_000);
  afterAll(async () => {
    for (const cluster of clusters) await cluster.close();
    await database?.drop();
  });

  it('gives each snapshot one run of seqs of its own, and each seq the change stored under it', async () => {
    const describeChange = (c: StatusChange): string =>
      `${c.cluster} ${c.scope} ${c.phase?.name ?? ''} ${c.resourceKey ?? ''} ${c.fromStatus ?? ''}->${c.toStatus ?? ''}`;
    const [firstSeq] = (await changesSince(0n)).map((c) => c.seq).slice(-1);
    const returned = new Map<bigint, string>();
    for (let round = 0; round < 4; round += 1) {
      for (const cluster of clusters) flipAll(cluster, round % 2 === 0 ? rollingStatus : readyStatus);
      const [east, west] = (await recordBoth()) as [StatusChange[], StatusChange[]];
      for (const changes of [east, west]) {
        expect(changes).toHaveLength(SHAPE.phases * SHAPE.resourcesPerPhase + SHAPE.phases);
        const seqs = changes.map((c) => c.seq);
        expect(seqs).toEqual(seqs.map((_, n) => (seqs[0] as bigint) + BigInt(n)));
        for (const c of changes) returned.set(c.seq, describeChange(c));
      }
      // The two runs do not overlap: one snapshot appended wholly before the other.
      expect(
        (east.at(-1)?.seq as bigint) < (west[0]?.seq as bigint) ||
          (west.at(-1)?.seq as bigint) < (east[0]?.seq as bigint),
      ).toBe(true);
    }
    // What a subscriber catching up by seq reads is, seq for seq, what the snapshots returned.
    const stored = await changesSince(firstSeq ?? 0n);
    expect(stored).toHaveLength(returned.size);
    expect(new Map(stored.map((c) => [c.seq, describeChange(c)]))).toEqual(returned);
  }, 120_000);
});
