import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createClusterStore } from '../../../src/store/cluster-store.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { applyRetention, measureStorage, retentionPolicySchema } from '../../../src/store/retention.ts';
import { startWorkers } from '../../../workers/start-workers.ts';
import {
  applyFleet,
  deploymentRef,
  readyDeployment,
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

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const SHAPE: FleetShape = { phases: 2, resourcesPerPhase: 3 };

describe('retention', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let publisher: ChangePublisher;
  let deps: SnapshotDeps;
  let now = T0;
  const snapshotAt = async (day: number) => {
    now = T0 + day * DAY;
    return snapshotCluster(deps, cluster.client, new Date(now));
  };

  beforeAll(async () => {
    database = await createTestDatabase('retention');
    cluster = await startEmulatedCluster('kept');
    applyFleet(cluster.emulator, SHAPE);
    publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('retention') });
    deps = {
      recorder: createRecorder(createSnapshotStore(database.workerDb)),
      publisher,
      log: testLogger(),
      observe: { now: () => new Date(now) },
    };
    // Read every four days (as a worker records its interval): ticks days apart are on schedule, no unobserved span.
    await createClusterStore(database.workerDb).registerClusters({
      configured: [cluster.name],
      snapshotIntervalMs: 4 * DAY,
    });
    // Day 0: everything Current. Day 6: app-0-0 rolls out, app-1-0 gets a new image (a new revision).
    // Day 8: app-0-0 is Current again. Day 10: unchanged.
    await snapshotAt(0);
    cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus());
    const changedSpec = readyDeployment('team-0', resourceName(1, 0));
    (
      changedSpec.spec as { template: { spec: { containers: { image: string }[] } } }
    ).template.spec.containers[0]!.image = 'nginx:1.28';
    cluster.emulator.apply(changedSpec);
    await snapshotAt(6);
    cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), readyStatus());
    await snapshotAt(8);
    await snapshotAt(10);
  });
  afterAll(async () => {
    await publisher?.close();
    await cluster?.close();
    await database?.drop();
  });

  it('reads ages as durations and refuses nonsense', () => {
    expect(retentionPolicySchema.parse({ resourceIntervals: '3d', statusChanges: 5 * DAY })).toEqual({
      resourceIntervals: 3 * DAY,
      statusChanges: 5 * DAY,
    });
    expect(retentionPolicySchema.safeParse({ resourceIntervals: 'forever' }).success).toBe(false);
    expect(retentionPolicySchema.safeParse({ everything: '1d' }).success).toBe(false);
  });

  it('removes exactly what the policy says, keeps the present, and collects orphaned revisions', async () => {
    const before = await countRows(database.db);
    // Day 0: 6 resources, 2 phases and the cluster appear (9 changes). Day 6: app-0-0 and its phase
    // change status (2 changes) and app-1-0 only gets a new revision (a new interval, no change row).
    // Day 8: app-0-0 and its phase are back (2 changes).
    // 9 intervals: 6 current statuses and 3 ended intervals.
    expect(before).toMatchObject({
      ResourceCurrentStatus: 6,
      ResourceStatusInterval: 3,
      ObjectRevision: 7,
      StatusChange: 9 + 2 + 2,
    });
    const result = await applyRetention(
      database.workerDb,
      { resourceIntervals: 3 * DAY, statusChanges: 5 * DAY, observationTicks: 1 * DAY },
      new Date(T0 + 10 * DAY),
    );
    // Closed on day 6 (older than day 7): app-0-0's first interval and app-1-0's first. Closed on day 8: kept.
    expect(result).toMatchObject({
      ResourceStatusInterval: 2,
      StatusChange: 9,
      ObjectRevision: 1,
      PhaseStatusInterval: 0,
      Phase: 0,
      Manifest: 0,
    });
    const after = await countRows(database.db);
    expect(after.ResourceStatusInterval).toBe(1);
    expect(after.ResourceCurrentStatus).toBe(6);
    const changes = await database.db.statusChange.findMany({ orderBy: { seq: 'asc' } });
    expect(changes.every((c) => c.at.getTime() >= T0 + 6 * DAY)).toBe(true);
    expect(changes).toHaveLength(4);
    // The old image's revision went with its interval; the current one stays.
    const images = (await database.db.objectRevision.findMany()).map((r) => JSON.stringify(r.object));
    expect(images.some((text) => text.includes('nginx:1.28'))).toBe(true);
    expect(after.ObjectRevision).toBe(6);
    // The ended runs (day 0, day 6) are older than a day; each cluster keeps its current run (days 8-10).
    expect(result.ObservationTick).toBe(2);
    expect(after.ObservationTick).toBe(0);
    const runs = await observationRuns(database.db, cluster.name);
    expect(runs.map((r) => [r.firstSeenAt.getTime(), r.lastSeenAt.getTime(), r.count])).toEqual([
      [T0 + 8 * DAY, T0 + 10 * DAY, 2],
    ]);
  });

  it('reports rows and bytes per table', async () => {
    const storage = await measureStorage(database.db);
    const intervals = storage.find((s) => s.table === 'ResourceStatusInterval');
    expect(intervals?.rows).toBe(1);
    expect(intervals?.bytes).toBeGreaterThan(0);
    expect(storage.find((s) => s.table === 'ResourceCurrentStatus')?.rows).toBe(6);
    expect(storage.map((s) => s.table)).toContain('StatusChange');
  });

  it('runs compaction as a scheduled job of the workers', async () => {
    const queueName = uniqueId('compaction');
    const workers = await startWorkers({
      config: { snapshot: { interval: 60_000 }, health: undefined, baseDir: process.cwd() },
      db: database.workerDb,
      redisUrl: REDIS_URL,
      log: testLogger(),
      clusters: [],
      queueName,
      prefix: queueName,
      schedule: false,
      retention: { policy: { statusChanges: DAY }, intervalMs: 200 },
    });
    try {
      // Every change is from 2026-01, so a one-day policy on the real clock removes them all.
      await waitUntil(async () => (await database.db.statusChange.count()) === 0, 'compaction to remove old changes');
      expect(
        (await database.db.resourceStatusInterval.count()) + (await database.db.resourceCurrentStatus.count()),
      ).toBe(7);
    } finally {
      await workers.close();
    }
  });

  it('removes a phase deleted longer ago than deletedPhases with everything recorded about it, and nothing of the others', async () => {
    const orphans = async () =>
      (
        await database.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM "ResourceStatusInterval" i WHERE NOT EXISTS (SELECT 1 FROM "Resource" r WHERE r."id" = i."resourceId")`
      )[0]?.n;
    const intervalsOf = async (phase: string) => {
      const resources = await database.db.resource.findMany({
        where: { phase: { name: phase } },
        select: { id: true },
      });
      return database.db.resourceStatusInterval.count({ where: { resourceId: { in: resources.map((r) => r.id) } } });
    };
    // Day 12: phase-1's inventory is gone; its three resources' statuses end.
    cluster.emulator.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-0', name: 'inventory-1' });
    await snapshotAt(12);
    expect((await database.db.phase.findFirstOrThrow({ where: { name: 'phase-1' } })).deletedAt?.getTime()).toBe(
      T0 + 12 * DAY,
    );
    const ended = await intervalsOf('phase-1');
    expect(ended).toBeGreaterThanOrEqual(3);
    const kept = await intervalsOf('phase-0');
    // Day 13: deleted a day ago, kept under a two-day policy; day 15: removed under it.
    expect(await applyRetention(database.workerDb, { deletedPhases: 2 * DAY }, new Date(T0 + 13 * DAY))).toMatchObject({
      Phase: 0,
      ResourceStatusInterval: 0,
    });
    const result = await applyRetention(database.workerDb, { deletedPhases: 2 * DAY }, new Date(T0 + 15 * DAY));
    expect(result).toMatchObject({ Phase: 1, ResourceStatusInterval: ended });
    expect(await database.db.phase.findMany({ select: { name: true } })).toEqual([{ name: 'phase-0' }]);
    expect(await database.db.resource.count({ where: { key: { contains: 'app-1-' } } })).toBe(0);
    expect(await orphans()).toBe(0);
    expect(await intervalsOf('phase-0')).toBe(kept);
  });
});
