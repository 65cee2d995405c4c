import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClusterLocks } from '../../../src/queue/cluster-lock.ts';
import { enqueueSnapshot } from '../../../src/queue/snapshot-jobs.ts';
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
import { startWorkerChild } from './worker-child-process.ts';

const SHAPE: FleetShape = { phases: 2, resourcesPerPhase: 3 };
const CONFIG = { snapshot: { interval: 1000, jitter: 0 }, health: undefined, baseDir: process.cwd() };

describe('the cluster lock of a worker killed mid-snapshot', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let dir: string;
  let child: ChildProcess | undefined;
  let survivor: RunningWorkers | undefined;
  let queue: Queue;
  let redis: Redis;
  const queueName = uniqueId('lockrecovery');
  const lockKey = `${queueName}:${queueName}:cluster-lock:leased`;

  beforeAll(async () => {
    database = await createTestDatabase('lockrecovery');
    cluster = await startEmulatedCluster('leased');
    applyFleet(cluster.emulator, SHAPE);
    dir = mkdtempSync(path.join(tmpdir(), 'phaselog-lock-'));
    await cluster.emulator.writeKubeconfig(path.join(dir, 'kubeconfig'));
    queue = new Queue(queueName, {
      connection: { host: '127.0.0.1', port: Number(new URL(REDIS_URL).port || 6379) },
      prefix: queueName,
    });
    redis = new Redis(REDIS_URL);
  });
  afterEach(async () => {
    await survivor?.close();
    survivor = undefined;
  });
  afterAll(async () => {
    if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await queue?.close();
    redis?.disconnect();
    await cluster?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Waits until a snapshot recorded resource `r` of phase 0 as InProgress. */
  const recorded = (r: number, timeoutMs: number): Promise<void> =>
    waitUntil(
      async () => {
        const resource = await database.db.resource.findFirst({
          where: { key: `apps/Deployment/team-0/${resourceName(0, r)}` },
        });
        return (
          resource !== null &&
          (await database.db.statusChange.count({
            where: { scope: 'resource', toStatus: 'InProgress', resourceId: resource.id },
          })) > 0
        );
      },
      `the change to ${resourceName(0, r)} to be recorded`,
      timeoutMs,
    );

  it('is free again within a short lease: the next change is recorded by a new worker well within a minute', async () => {
    // The child's read of the cluster hangs, so it is killed while it holds the cluster lock.
    cluster.emulator.injectFault({ match: { verb: 'list' }, effect: 'hang', times: 1 });
    child = await startWorkerChild({
      SNAPSHOT_TEST_DATABASE_URL: database.url,
      SNAPSHOT_TEST_QUEUE: queueName,
      SNAPSHOT_TEST_DEFAULT_LOCKS: '1',
      SNAPSHOT_TEST_KUBECONFIG: path.join(dir, 'kubeconfig'),
      SNAPSHOT_TEST_CLUSTER: cluster.name,
    });
    await enqueueSnapshot(queue, cluster.name, Date.now());
    await waitUntil(
      async () => (await redis.exists(lockKey)) === 1 && cluster.emulator.requestCount({ verb: 'list' }) > 0,
      'the child to hold the lock, mid-read',
      30_000,
    );
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    cluster.emulator.clearFaults();
    cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus());

    survivor = await startWorkers({
      config: CONFIG,
      db: database.db,
      redisUrl: REDIS_URL,
      log: testLogger(),
      clusters: [cluster.handle],
      queueName,
      prefix: queueName,
      channelPrefix: queueName,
    });
    // The old 60 s lock would keep every tick waiting far past this deadline.
    await recorded(0, 15_000);
  });

  it("logs a lock held past a tick's expected length by a holder that is alive but stuck", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: 'warn' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const lockRedis = new Redis(REDIS_URL);
    // A stuck holder keeps renewing its lease and never finishes.
    const stuck = await createClusterLocks(lockRedis, {
      prefix: `${queueName}:${queueName}:cluster-lock`,
      ttlMs: 1500,
    }).tryAcquire(cluster.name);
    try {
      expect(stuck).toBeDefined();
      survivor = await startWorkers({
        config: CONFIG,
        db: database.db,
        redisUrl: REDIS_URL,
        log,
        clusters: [cluster.handle],
        queueName,
        prefix: queueName,
        channelPrefix: queueName,
        clusterLockTtlMs: 1500,
      });
      await waitUntil(
        () =>
          lines.some(
            (l) =>
              l.msg === 'cluster lock held past expectation; its holder is stuck or slow' && l.cluster === 'leased',
          ),
        'the warning',
        15_000,
      );
      await stuck?.release();
      cluster.emulator.patchStatus(deploymentRef(0, 1, SHAPE), rollingStatus());
      await recorded(1, 15_000);
    } finally {
      await stuck?.release();
      lockRedis.disconnect();
    }
  });
});
