/**
 * A worker keeps each cluster's current state between snapshots instead of reading it back. What
 * it records must be exactly what a worker that reads the store every time records, and a
 * snapshot another worker wrote in between must make it read the store again.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterObservation, StatusChange } from '../../../src/history/types.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { createRecorder, type Recorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import {
  applyFleet,
  deploymentRef,
  namespaceOf,
  readyDeployment,
  readyStatus,
  rollingStatus,
  type FleetShape,
} from './fleet.ts';
import {
  countRows,
  createTestDatabase,
  startEmulatedCluster,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

const SHAPE: FleetShape = { phases: 3, resourcesPerPhase: 4, phasesPerNamespace: 2 };

/** What a user reads of a change, ids aside. */
function summary(changes: StatusChange[]): string[] {
  return changes.map(
    (c) =>
      `${c.scope} ${c.phase?.name ?? '-'} ${c.resourceKey ?? '-'} ${c.fromStatus ?? 'null'} -> ${c.toStatus ?? 'null'}: ${c.message}`,
  );
}

describe('a worker keeping cluster state between snapshots', () => {
  let cached: TestDatabase;
  let reading: TestDatabase;
  let shared: TestDatabase;
  let restored: TestDatabase;
  let cluster: EmulatedCluster;
  let tick = Date.UTC(2026, 0, 1);
  const observe = async (): Promise<ClusterObservation> =>
    observeCluster(cluster.client, { now: () => new Date(tick) });

  beforeAll(async () => {
    [cached, reading, shared, restored] = await Promise.all([
      createTestDatabase('cache_kept'),
      createTestDatabase('cache_read'),
      createTestDatabase('cache_shared'),
      createTestDatabase('cache_restored'),
    ]);
    cluster = await startEmulatedCluster('cached');
    applyFleet(cluster.emulator, SHAPE);
  });
  afterAll(async () => {
    await cluster?.close();
    await Promise.all([cached?.drop(), reading?.drop(), shared?.drop(), restored?.drop()]);
  });

  it('records the same changes and rows as a worker that reads the store every snapshot', async () => {
    const keeping = createRecorder(createSnapshotStore(cached.db));
    const readingStore = createRecorder(createSnapshotStore(reading.db), { keepState: false });
    const ns = namespaceOf(1, SHAPE);
    const inventory = { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'inventory-1' };
    const steps: [string, () => void][] = [
      ['first snapshot', () => undefined],
      [
        'three resources roll',
        () => [0, 1, 2].forEach((p) => cluster.emulator.patchStatus(deploymentRef(p, 1, SHAPE), rollingStatus())),
      ],
      ['nothing changes', () => undefined],
      [
        'one is ready again, one rolls with another message',
        () => {
          cluster.emulator.patchStatus(deploymentRef(0, 1, SHAPE), readyStatus());
          cluster.emulator.patchStatus(deploymentRef(1, 1, SHAPE), {
            observedGeneration: 1,
            replicas: 2,
            updatedReplicas: 2,
            readyReplicas: 1,
            availableReplicas: 1,
          });
        },
      ],
      [
        'a new spec generation not observed yet',
        () =>
          cluster.emulator.apply([
            {
              ...readyDeployment(namespaceOf(2, SHAPE), 'app-2-3'),
              metadata: {
                name: 'app-2-3',
                namespace: namespaceOf(2, SHAPE),
                generation: 2,
                labels: { app: 'app-2-3' },
              },
            },
          ]),
      ],
      [
        'a resource joins an inventory',
        () => {
          cluster.emulator.apply([readyDeployment(ns, 'extra')]);
          const current = cluster.emulator.get(inventory) as { data: Record<string, string> };
          cluster.emulator.apply([{ ...current, data: { ...current.data, [`${ns}_extra_apps_Deployment`]: '{}' } }]);
        },
      ],
      [
        'the new resource rolls and everything else is ready',
        () => {
          cluster.emulator.patchStatus(
            { apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'extra' },
            rollingStatus(),
          );
          [1, 2].forEach((p) => cluster.emulator.patchStatus(deploymentRef(p, 1, SHAPE), readyStatus()));
        },
      ],
      [
        'a resource leaves its inventory',
        () => {
          const current = cluster.emulator.get(inventory) as { data: Record<string, string> };
          const data = Object.fromEntries(
            Object.entries(current.data).filter(([key]) => !key.startsWith(`${ns}_app-1-0_`)),
          );
          cluster.emulator.apply([{ ...current, data }]);
        },
      ],
      [
        'every resource rolls',
        () => {
          for (let p = 0; p < SHAPE.phases; p += 1)
            for (let r = 0; r < SHAPE.resourcesPerPhase; r += 1)
              cluster.emulator.patchStatus(deploymentRef(p, r, SHAPE), rollingStatus());
        },
      ],
      [
        'every resource is ready',
        () => {
          for (let p = 0; p < SHAPE.phases; p += 1)
            for (let r = 0; r < SHAPE.resourcesPerPhase; r += 1)
              cluster.emulator.patchStatus(deploymentRef(p, r, SHAPE), readyStatus());
        },
      ],
    ];
    for (const [step, change] of steps) {
      change();
      tick += 30_000;
      const observation = await observe();
      const [kept, read] = [
        await keeping.record(observation, { tickAt: new Date(tick) }),
        await readingStore.record(observation, { tickAt: new Date(tick) }),
      ];
      expect(kept.written, step).toBe(true);
      if (!kept.written || !read.written) continue;
      expect(summary(kept.changes), step).toEqual(summary(read.changes));
      expect(kept.rows, step).toBe(read.rows);
    }
    expect(await countRows(cached.db)).toEqual(await countRows(reading.db));
  });

  it("reads the store again after another worker's snapshot, so a change is recorded once", async () => {
    const [first, second] = [
      createRecorder(createSnapshotStore(shared.db)),
      createRecorder(createSnapshotStore(shared.db)),
    ];
    const record = async (store: Recorder): Promise<string[]> => {
      tick += 30_000;
      const outcome = await store.record(await observe(), { tickAt: new Date(tick) });
      if (!outcome.written) throw new Error('snapshot not written');
      return outcome.changes
        .filter((c) => c.scope === 'resource')
        .map((c) => `${c.resourceKey ?? ''} ${c.fromStatus ?? ''} -> ${c.toStatus ?? ''}`);
    };
    await record(first);
    cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus());
    expect(await record(second)).toEqual(['apps/Deployment/team-0/app-0-0 Current -> InProgress']);
    // The first worker's state predates that snapshot: used as it is, it would record app-0-0 again.
    cluster.emulator.patchStatus(deploymentRef(0, 2, SHAPE), rollingStatus());
    expect(await record(first)).toEqual(['apps/Deployment/team-0/app-0-2 Current -> InProgress']);
    cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), readyStatus());
    expect(await record(second)).toEqual(['apps/Deployment/team-0/app-0-0 InProgress -> Current']);
    const counts = await countRows(shared.db);
    expect(counts.ResourceStatusInterval).toBe(3);
  });

  it('records a change whose ended interval exists already (clocks of workers disagreeing) without writing it twice', async () => {
    const store = createRecorder(createSnapshotStore(shared.db));
    const key = `apps/Deployment/${namespaceOf(0, SHAPE)}/app-0-3`;
    const current = await shared.db.resourceCurrentStatus.findFirstOrThrow({ where: { resource: { key } } });
    // Another worker, its clock behind, ended this very interval already.
    await shared.db.resourceStatusInterval.create({
      data: {
        resourceId: current.resourceId,
        status: current.status,
        detailId: current.detailId,
        revisionId: current.revisionId,
        from: current.from,
        to: new Date(tick),
      },
    });
    cluster.emulator.patchStatus(deploymentRef(0, 3, SHAPE), rollingStatus());
    tick += 30_000;
    const outcome = await store.record(await observe(), { tickAt: new Date(tick) });
    expect(outcome).toMatchObject({ written: true });
    if (!outcome.written) return;
    expect(
      outcome.changes.filter((c) => c.scope === 'resource').map((c) => `${c.resourceKey ?? ''} ${c.toStatus ?? ''}`),
    ).toEqual([`${key} InProgress`]);
    expect(await shared.db.resourceStatusInterval.count({ where: { resourceId: current.resourceId } })).toBe(1);
    expect(
      await shared.db.resourceCurrentStatus.findUniqueOrThrow({ where: { resourceId: current.resourceId } }),
    ).toMatchObject({ status: 'InProgress', from: new Date(tick) });
  });
  it('reads the store again after the database was restored from a backup under it and written since', async () => {
    // A fleet of its own: the earlier tests left this cluster's resources in various states.
    const restore = await startEmulatedCluster('restored');
    const run = promisify(execFile);
    const dir = await mkdtemp(join(tmpdir(), 'phaselog-backup-'));
    try {
      applyFleet(restore.emulator, SHAPE);
      const [keeping, other] = [
        createRecorder(createSnapshotStore(restored.db)),
        createRecorder(createSnapshotStore(restored.db), { keepState: false }),
      ];
      const record = async (store: Recorder): Promise<string[]> => {
        tick += 30_000;
        const outcome = await store.record(await observeCluster(restore.client, { now: () => new Date(tick) }), {
          tickAt: new Date(tick),
        });
        if (!outcome.written) throw new Error('snapshot not written');
        return outcome.changes
          .filter((c) => c.scope === 'resource' && c.fromStatus !== null)
          .map((c) => `${c.resourceKey ?? ''} ${c.fromStatus ?? ''} -> ${c.toStatus ?? ''}`);
      };
      await record(keeping);
      const backup = join(dir, 'backup.dump');
      await run('pg_dump', ['--format=custom', `--file=${backup}`, restored.url]);
      restore.emulator.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus());
      expect(await record(keeping)).toEqual(['apps/Deployment/team-0/app-0-0 Current -> InProgress']);
      // The operator restores the backup (app-0-0 Current again) while the worker keeps running;
      // another worker records the cluster as it is now.
      await run('pg_restore', [
        '--clean',
        '--if-exists',
        '--single-transaction',
        '--no-owner',
        `--dbname=${restored.url}`,
        backup,
      ]);
      restore.emulator.patchStatus(deploymentRef(0, 0, SHAPE), readyStatus());
      restore.emulator.patchStatus(deploymentRef(0, 1, SHAPE), rollingStatus());
      expect(await record(other)).toEqual(['apps/Deployment/team-0/app-0-1 Current -> InProgress']);
      // Nothing changed since: with a kept state from before the restore it would record app-0-0
      // InProgress -> Current and app-0-1 again (as it did when versions were counted: the
      // restored row counted up to the version the worker kept).
      expect(await record(keeping)).toEqual([]);
      restore.emulator.patchStatus(deploymentRef(0, 1, SHAPE), readyStatus());
      expect(await record(keeping)).toEqual(['apps/Deployment/team-0/app-0-1 InProgress -> Current']);
    } finally {
      await restore.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
