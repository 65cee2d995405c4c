import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterLocks } from '../../../src/queue/cluster-lock.ts';
import { scheduleSnapshots, SNAPSHOT_JOB, snapshotJobId } from '../../../src/queue/snapshot-jobs.ts';
import type { SnapshotOutcome } from '../../../src/snapshot/snapshot-cluster.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { applyFleet } from './fleet.ts';
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

const CONFIG = { snapshot: { interval: 60_000, jitter: 0 }, health: undefined, baseDir: process.cwd() };

describe('snapshot workers', () => {
  let database: TestDatabase;
  let clusters: EmulatedCluster[];
  let workers: RunningWorkers[];
  const queueName = uniqueId('snapshots');
  // Jobs of the shared queue, with the outcome of the snapshot their cluster's owner ran; and the
  // snapshots themselves, by the worker that ran them.
  const completed: { worker: number; job: Job; result: SnapshotOutcome }[] = [];
  const ran: { worker: number; job: Job; result: SnapshotOutcome }[] = [];
  const failed: { job: Job | undefined; error: Error }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('workers');
    clusters = await Promise.all(['east', 'west'].map(startEmulatedCluster));
    for (const c of clusters) applyFleet(c.emulator, { phases: 4, resourcesPerPhase: 5 });
    workers = [];
    for (let i = 0; i < 2; i += 1) {
      const running = await startWorkers({
        config: CONFIG,
        db: database.workerDb,
        redisUrl: REDIS_URL,
        log: testLogger(),
        clusters: clusters.map((c) => c.handle),
        queueName,
        prefix: queueName,
        channelPrefix: queueName,
        schedule: false,
        concurrency: 2,
        lockedRetryDelayMs: 20,
      });
      running.worker.on('completed', (job, result: SnapshotOutcome) => completed.push({ worker: i, job, result }));
      running.worker.on('failed', (job, error) => failed.push({ job, error }));
      running.ownWorker.on('completed', (job, result: SnapshotOutcome) => ran.push({ worker: i, job, result }));
      workers.push(running);
    }
  });
  afterAll(async () => {
    for (const w of workers ?? []) await w.close();
    for (const c of clusters ?? []) await c.close();
    await database?.drop();
  });

  it('processes each cluster exactly once per tick across two workers', async () => {
    const start = Date.now();
    const ticks = [1, 2, 3, 4, 5].map((i) => start + i * 1000);
    const ids: string[] = [];
    for (const tick of ticks) for (const c of clusters) ids.push(await workers[0]!.snapshotNow(c.name, tick));
    await waitUntil(() => completed.length >= ids.length, `${ids.length} completed jobs`, 20_000);
    const done = completed.map((c) => c.job.id);
    expect([...done].sort()).toEqual([...ids].sort());
    // Ticks that lost the race to a newer tick of their cluster write nothing; every other tick writes once.
    for (const c of clusters) {
      // Counted where snapshots run: the owner's first snapshot of an acquired cluster is one too.
      const written = ran.filter((x) => x.result.cluster === c.name && x.result.written).length;
      const runs = await observationRuns(database.db, c.name);
      expect(runs.reduce((sum, r) => sum + r.count, 0)).toBe(written);
      const row = await database.db.cluster.findFirstOrThrow({ where: { name: c.name } });
      expect(row.lastTickAt?.getTime()).toBe(ticks.at(-1));
      // Sharded: every snapshot of a cluster ran in its one owner.
      const owners = new Set(ran.filter((x) => x.result.cluster === c.name).map((x) => x.worker));
      expect(owners).toEqual(new Set([workers.findIndex((w) => w.ownership.owns(c.name))]));
    }
    expect(await database.db.resourceCurrentStatus.count()).toBe(2 * 4 * 5);
  });

  it('writes nothing twice for a duplicated job', async () => {
    const tick = Date.now() + 10_000;
    const first = await workers[0]!.snapshotNow('east', tick);
    const second = await workers[1]!.snapshotNow('east', tick);
    expect(second).toBe(first);
    await waitUntil(() => completed.some((c) => c.job.id === first), 'the tick to complete');
    const before = await countRows(database.db);
    const again = await workers[1]!.snapshotNow('east', tick);
    expect(again).toBe(snapshotJobId('east', tick));
    // Same cluster and tick under another id (a refresh racing the scheduler): the store refuses it.
    await workers[0]!.queue.add(
      SNAPSHOT_JOB,
      { cluster: 'east', tickAt: tick },
      { jobId: 'other-id-for-the-same-tick' },
    );
    await waitUntil(
      () => completed.some((c) => c.job.id === 'other-id-for-the-same-tick'),
      'the second job to complete',
    );
    expect(completed.filter((c) => c.job.id === first)).toHaveLength(1);
    expect(completed.find((c) => c.job.id === 'other-id-for-the-same-tick')?.result).toMatchObject({ written: false });
    expect(await countRows(database.db)).toEqual(before);
  });

  it('fails a job for an unknown cluster at once, without retries', async () => {
    await workers[0]!.queue.add(
      SNAPSHOT_JOB,
      { cluster: 'nowhere', tickAt: Date.now() },
      { attempts: 5, backoff: { type: 'exponential', delay: 10 } },
    );
    await workers[0]!.queue.add(SNAPSHOT_JOB, { cluster: 'east', password: 'x' }, { attempts: 5 });
    await waitUntil(() => failed.length >= 2, 'two failed jobs');
    expect(failed.map((f) => [f.error.name, f.job?.attemptsMade])).toEqual([
      ['UnrecoverableError', 1],
      ['UnrecoverableError', 1],
    ]);
  });

  it('keeps one job scheduler per configured cluster and fires it on the interval', async () => {
    const queue = workers[0]!.queue;
    await scheduleSnapshots(queue, ['east', 'west', 'gone'], { intervalMs: 250, jitterMs: 0 });
    await scheduleSnapshots(queue, ['east', 'west'], { intervalMs: 250, jitterMs: 0 });
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers.map((s) => s.key).sort()).toEqual(['snapshot.east', 'snapshot.west']);
    const before = completed.filter((c) => c.job.id?.startsWith('repeat:')).length;
    await waitUntil(
      () => completed.filter((c) => c.job.id?.startsWith('repeat:')).length >= before + 4,
      'four scheduled snapshots',
      15_000,
    );
    const scheduled = completed.filter((c) => c.job.id?.startsWith('repeat:'));
    // Two workers share the queue; no scheduled tick ran on both.
    expect(new Set(scheduled.map((c) => c.job.id)).size).toBe(scheduled.length);
    for (const name of ['east', 'west']) {
      const ticks = scheduled
        .filter((c) => c.result.cluster === name)
        .map((c) => Date.parse(c.result.tickAt))
        .sort((a, b) => a - b);
      // Each scheduler slot is one tick, and slots are one interval apart.
      expect(new Set(ticks).size).toBe(ticks.length);
      expect(ticks.every((t) => (t - (ticks[0] ?? 0)) % 250 === 0)).toBe(true);
    }
    expect(scheduled.map((c) => c.job.data)).toContainEqual({ cluster: 'east' });
    for (const s of schedulers) await queue.removeJobScheduler(s.key);
  });

  it('lets one holder at a time take a cluster lock', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const locks = createClusterLocks(redis, { prefix: uniqueId('lock'), ttlMs: 5000 });
      const held = await locks.tryAcquire('east');
      expect(held).toBeDefined();
      expect(await locks.tryAcquire('east')).toBeUndefined();
      expect(await locks.tryAcquire('west')).toBeDefined();
      await held?.release();
      expect(await locks.tryAcquire('east')).toBeDefined();
    } finally {
      redis.disconnect();
    }
  });

  it('keeps a cluster lock past its lease while the holder lives (a long snapshot), and frees it on release', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const locks = createClusterLocks(redis, { prefix: uniqueId('lease'), ttlMs: 300 });
      const held = await locks.tryAcquire('east');
      expect(held).toBeDefined();
      // Several leases long: only the renewals keep it.
      const until = Date.now() + 1500;
      await waitUntil(async () => {
        expect(await locks.tryAcquire('east')).toBeUndefined();
        return Date.now() >= until;
      }, 'several lease lengths to pass');
      await held?.release();
      expect(await locks.tryAcquire('east')).toBeDefined();
    } finally {
      redis.disconnect();
    }
  });
  it('leaves no queue of its own in Redis when a worker stops cleanly, and its clusters go on being snapshotted by the other', async () => {
    const redis = new Redis(REDIS_URL);
    const keysOf = async (queue: string): Promise<string[]> => {
      const pattern = `${queueName}:${queue}:*`.replace(/[[\]?\\]/g, (c) => `\\${c}`);
      const keys: string[] = [];
      for await (const batch of redis.scanStream({ match: pattern, count: 1000 }) as AsyncIterable<string[]>)
        keys.push(...batch);
      return keys;
    };
    try {
      const leaving = workers.findIndex((w) => w.ownership.owned().length > 0);
      const stopped = workers[leaving]!;
      const itsClusters = stopped.ownership.owned();
      const ownName = stopped.ownQueue.name;
      // It ran snapshots: its queue holds their completed jobs.
      expect(await keysOf(ownName)).not.toEqual([]);
      await stopped.close();
      workers.splice(leaving, 1);
      expect(await keysOf(ownName)).toEqual([]);
      // The other worker's queue is untouched, and it takes over and snapshots what the first owned.
      const survivor = workers[0]!;
      await waitUntil(
        () => itsClusters.every((c) => survivor.ownership.owns(c)),
        "the survivor to own the stopped worker's clusters",
        20_000,
      );
      const before = ran.length;
      for (const cluster of itsClusters) await survivor.snapshotNow(cluster, Date.now() + 60_000);
      await waitUntil(
        () => ran.slice(before).filter((x) => itsClusters.includes(x.result.cluster)).length >= itsClusters.length,
        "the survivor's snapshots",
        20_000,
      );
      expect(await keysOf(survivor.ownQueue.name)).not.toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
