import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusChange } from '../../../src/history/types.ts';
import { subscribeChanges, type ChangeSubscription } from '../../../src/pubsub/change-publisher.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { applyFleet, deploymentRef, resourceName, rollingStatus, type FleetShape } from './fleet.ts';
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

const SHAPE: FleetShape = { phases: 3, resourcesPerPhase: 4 };

describe('live snapshots from watches', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let workers: RunningWorkers;
  let subscription: ChangeSubscription;
  const events: StatusChange[] = [];
  const prefix = uniqueId('live');

  beforeAll(async () => {
    database = await createTestDatabase('live');
    cluster = await startEmulatedCluster('watched');
    applyFleet(cluster.emulator, SHAPE);
    // Subscribed first: the worker snapshots the cluster as soon as it owns it.
    subscription = await subscribeChanges(REDIS_URL, (event) => events.push(event), { prefix, cluster: 'watched' });
    workers = await startWorkers({
      config: { snapshot: { interval: 3_600_000 }, health: undefined, baseDir: process.cwd() },
      db: database.db,
      redisUrl: REDIS_URL,
      log: testLogger(),
      clusters: [cluster.handle],
      queueName: prefix,
      prefix,
      channelPrefix: prefix,
      schedule: false,
      live: { debounceMs: 100 },
    });
    await workers.snapshotNow('watched');
    // The first snapshot's 16 changes (12 resources, 3 phases, the cluster), published after commit,
    // and its 3 phases' applier conditions (kpt/Applied, from the actuation their inventories record).
    await waitUntil(() => events.length === 19, 'the first snapshot to be published');
    // The caches' first lists are changes too (every object ADDED): wait until the live snapshots
    // of that start-up burst have run, so the change below is a burst of its own. On a loaded
    // machine a cache may sync late, and its objects would otherwise join the next burst.
    // A watch set started later (the members' kinds, once the first snapshot named them) lists
    // late too: wait until no job was queued for a while, not only until the first lists ran.
    let seen = -1;
    let quietSince = Date.now();
    await waitUntil(
      async () => {
        // Live snapshots run in the owner's own queue (this worker owns the one cluster).
        const counts = await workers.ownQueue.getJobCounts(
          'waiting',
          'active',
          'delayed',
          'prioritized',
          'completed',
          'failed',
        );
        const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
        if (total !== seen) {
          seen = total;
          quietSince = Date.now();
        }
        if ((counts.completed ?? 0) + (counts.failed ?? 0) !== total || Date.now() - quietSince < 1_500) return false;
        const jobs = await workers.ownQueue.getJobs(['completed']);
        const inventories = new Set(
          jobs.flatMap((job) => {
            const changed = (job.data as { changed?: { inventories: { name: string }[] } }).changed;
            return changed === undefined ? [] : changed.inventories.map((ref) => ref.name);
          }),
        );
        // A start-up burst too large to name is a whole-cluster live job (no `changed`), as are
        // snapshotNow's and the first snapshot the worker took when it acquired the cluster.
        return (
          inventories.size === SHAPE.phases ||
          jobs.filter((job) => (job.data as { changed?: unknown }).changed === undefined).length > 2
        );
      },
      "the live snapshot of the watch caches' first lists",
      30_000,
    );
  });
  afterAll(async () => {
    await subscription?.close();
    await workers?.close();
    await cluster?.close();
    await database?.drop();
  });

  it('records and publishes a change without waiting for the next scheduled tick, reading from the watch caches', async () => {
    events.length = 0;
    cluster.emulator.resetRequests();
    cluster.emulator.patchStatus(deploymentRef(1, 2, SHAPE), rollingStatus());
    await waitUntil(() => events.some((e) => e.scope === 'resource'), 'the change event', 10_000);
    expect(events.filter((e) => e.scope === 'resource')).toEqual([
      expect.objectContaining({
        resourceKey: `apps/Deployment/team-0/${resourceName(1, 2)}`,
        fromStatus: 'Current',
        toStatus: 'InProgress',
      }),
    ]);
    const row = await database.db.statusChange.findFirstOrThrow({
      where: { scope: 'resource', toStatus: 'InProgress' },
    });
    expect(row.seq).toBe(events.find((e) => e.scope === 'resource')?.seq);
    expect(cluster.emulator.requestCount({ verb: 'list', resource: 'deployments' })).toBe(0);
    // The job named the changed Deployment, and the snapshot observed its phase only.
    const jobs = await workers.ownQueue.getJobs(['completed']);
    const live = jobs.find((job) => (job.returnvalue as { changes?: number } | undefined)?.changes === 2);
    expect(live?.data).toMatchObject({
      cluster: 'watched',
      changed: {
        objects: [{ group: 'apps', kind: 'Deployment', namespace: 'team-0', name: resourceName(1, 2) }],
        inventories: [],
      },
    });
    expect(live?.returnvalue).toMatchObject({ written: true, live: true, phases: 1, changes: 2 });
  });
});
