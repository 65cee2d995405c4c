import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueSnapshot } from '../../../src/queue/snapshot-jobs.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { applyFleet } from './fleet.ts';
import {
  countRows,
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  waitUntil,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';
import { startWorkerChild } from './worker-child-process.ts';

const SHAPE = { phases: 100, resourcesPerPhase: 30 };

describe('a worker killed in the middle of a snapshot', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let dir: string;
  let child: ChildProcess | undefined;
  let survivor: RunningWorkers | undefined;
  let queue: Queue;
  const queueName = uniqueId('crash');

  beforeAll(async () => {
    database = await createTestDatabase('crash');
    cluster = await startEmulatedCluster('crashy');
    applyFleet(cluster.emulator, SHAPE);
    dir = mkdtempSync(path.join(tmpdir(), 'phaselog-crash-'));
    await cluster.emulator.writeKubeconfig(path.join(dir, 'kubeconfig'));
    queue = new Queue(queueName, {
      connection: { host: '127.0.0.1', port: Number(new URL(REDIS_URL).port || 6379) },
      prefix: queueName,
    });
  });
  afterAll(async () => {
    if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await survivor?.close();
    await queue?.close();
    await cluster?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('leaves no partial snapshot, and another worker completes the tick', async () => {
    child = await startWorkerChild({
      SNAPSHOT_TEST_DATABASE_URL: database.url,
      SNAPSHOT_TEST_QUEUE: queueName,
      SNAPSHOT_TEST_KUBECONFIG: path.join(dir, 'kubeconfig'),
      SNAPSHOT_TEST_CLUSTER: cluster.name,
    });
    const jobId = await enqueueSnapshot(queue, cluster.name, Date.now());
    // Kill it once its transaction has written phases but not committed.
    await waitUntil(
      async () => {
        const rows = await database.db.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        WHERE c.relname = 'Phase' AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()`;
        return Number(rows[0]?.n ?? 0) > 0;
      },
      'the child to be inside its snapshot transaction',
      30_000,
    );
    child.kill('SIGKILL');
    await new Promise((resolve) =>
      child?.exitCode !== null || child?.signalCode !== null ? resolve(undefined) : child?.once('exit', resolve),
    );

    const afterKill = await countRows(database.db);
    // The cluster's row is the one the child registered at start (its configured list), not the snapshot's.
    expect(afterKill).toEqual({
      Cluster: 1,
      ClusterReachability: 0,
      Phase: 0,
      Manifest: 0,
      PhaseManifest: 0,
      ObjectRevision: 0,
      ResourceCurrentStatus: 0,
      ResourceStatusInterval: 0,
      PhaseCurrentStatus: 0,
      PhaseStatusInterval: 0,
      StatusChange: 0,
      ObservationTick: 0,
    });

    survivor = await startWorkers({
      config: { snapshot: { interval: 60_000 }, health: undefined, baseDir: process.cwd() },
      db: database.db,
      redisUrl: REDIS_URL,
      log: testLogger(),
      clusters: [cluster.handle],
      queueName,
      prefix: queueName,
      channelPrefix: queueName,
      // A long lock for the survivor: its own snapshot must not be mistaken for a stalled one.
      schedule: false,
      lockDurationMs: 15_000,
      stalledIntervalMs: 300,
      clusterLockTtlMs: 1000,
      lockedRetryDelayMs: 100,
      ownership: { heartbeatMs: 250, leaseMs: 1500 },
    });
    await waitUntil(
      async () => (await queue.getJob(jobId))?.finishedOn !== undefined,
      'the stalled tick to finish on the other worker',
      30_000,
    );
    const job = await queue.getJob(jobId);
    // An attempt may have failed while the dead worker still held the cluster ("left before
    // snapshotting it"); the retry went to the survivor.
    expect(await job?.getState()).toBe('completed');
    // The survivor took the dead worker's cluster over and snapshotted it at once; the stalled tick,
    // older than that first snapshot, is then skipped as stale, or written when it ran first.
    expect(job?.returnvalue).toMatchObject({ cluster: cluster.name });
    expect(survivor.ownership.owns(cluster.name)).toBe(true);
    const counts = await countRows(database.db);
    expect(counts).toMatchObject({
      Cluster: 1,
      Phase: 100,
      ResourceCurrentStatus: 3000,
      ResourceStatusInterval: 0,
      PhaseCurrentStatus: 100,
      PhaseStatusInterval: 0,
      ObservationTick: 0,
      // Each resource and phase appears, the cluster becomes reachable, and each phase's applier
      // condition (kpt/Applied, from the inventories' recorded actuation) is first recorded.
      StatusChange: 3000 + 100 + 1 + 100,
    });
  });
});
