import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/private-redis.ts';
import { applyFleet, deploymentRef, resourceName, rollingStatus, type FleetShape } from './fleet.ts';
import {
  createTestDatabase,
  startEmulatedCluster,
  uniqueId,
  waitUntil,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

const SHAPE: FleetShape = { phases: 2, resourcesPerPhase: 3 };
const CONFIG = { snapshot: { interval: 1000, jitter: 0 }, health: undefined, baseDir: process.cwd() };

/** A logger whose warnings the test can read. */
function capturingLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'warn' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { log, lines };
}

describe('Redis losing its data under running workers', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let redis: PrivateRedis;
  let workers: RunningWorkers | undefined;

  beforeAll(async () => {
    database = await createTestDatabase('redisloss');
    cluster = await startEmulatedCluster('lossy');
    applyFleet(cluster.emulator, SHAPE);
    redis = await startPrivateRedis();
  });
  afterEach(async () => {
    await workers?.close();
    workers = undefined;
  });
  afterAll(async () => {
    await redis?.close();
    await cluster?.close();
    await database?.drop();
  });

  const start = async (
    extra: {
      reconcileIntervalMs?: number;
      recordingBoundMs?: number;
      retention?: { policy: Record<string, never>; intervalMs: number };
    } = {},
  ) => {
    const { log, lines } = capturingLogger();
    const queueName = uniqueId('loss');
    workers = await startWorkers({
      config: CONFIG,
      db: database.db,
      redisUrl: redis.url,
      log,
      clusters: [cluster.handle],
      queueName,
      prefix: queueName,
      channelPrefix: queueName,
      ...extra,
    });
    return { running: workers, lines };
  };

  /** Makes resource `r` of phase 0 roll out, and waits until a snapshot recorded it as InProgress. */
  const changeIsRecorded = async (r: number, timeoutMs: number): Promise<void> => {
    cluster.emulator.patchStatus(deploymentRef(0, r, SHAPE), rollingStatus());
    await waitUntil(
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
  };

  const firstTick = (): Promise<void> => {
    const since = Date.now();
    return waitUntil(
      async () =>
        ((await database.db.cluster.findFirst({ where: { name: 'lossy' } }))?.lastTickAt?.getTime() ?? 0) > since,
      'a scheduled snapshot',
      15_000,
    );
  };

  it('re-creates the job schedulers after FLUSHALL and records the next change, saying so in the log', async () => {
    const { running, lines } = await start({ retention: { policy: {}, intervalMs: 3_600_000 } });
    await firstTick();
    await redis.flushAll();
    await changeIsRecorded(0, 15_000);
    const recreated = lines
      .filter((l) => String(l.msg).includes('job schedulers were missing'))
      .flatMap((l) => l.schedulers as string[]);
    expect(recreated.sort()).toEqual(['retention', 'snapshot.lossy']);
    expect(lines.find((l) => String(l.msg).includes('job schedulers were missing'))?.level).toBe(40);
    await expect(running.recording()).resolves.toBeUndefined();
  });

  it('re-creates them when a killed Redis comes back empty', async () => {
    const { running, lines } = await start();
    await firstTick();
    await redis.kill();
    // While Redis is down the check answers at once (it does not queue look-ups until Redis is back).
    await waitUntil(
      () =>
        running.recording().then(
          () => false,
          (e: { code?: string }) => e.code === 'SCHEDULERS_UNREADABLE',
        ),
      'the check to see Redis gone',
      5000,
    );
    await redis.start();
    await changeIsRecorded(1, 20_000);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: expect.stringContaining('job schedulers were missing') }),
    );
    await waitUntil(
      () =>
        running.recording().then(
          () => true,
          () => false,
        ),
      'the recording check to pass again',
      15_000,
    );
  });

  it('fails the recording check while a scheduler is missing, without naming hosts or ports', async () => {
    const { running } = await start({ reconcileIntervalMs: 3_600_000 });
    await expect(running.recording()).resolves.toBeUndefined();
    await redis.flushAll();
    const error = await running.recording().then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(error).toMatchObject({ name: 'NotRecordingError', code: 'SCHEDULER_MISSING' });
    expect(error?.message).not.toMatch(/127\.0\.0\.1|:\d{2,5}\b|redis:/);
    expect(await running.reconcileSchedulers()).toEqual(['snapshot.lossy']);
    await expect(running.recording()).resolves.toBeUndefined();
  });

  it('fails the recording check when no snapshot of a cluster completes within the bound', async () => {
    const { running } = await start({ recordingBoundMs: 1500 });
    await waitUntil(
      () =>
        running.recording().then(
          () => true,
          () => false,
        ),
      'a first completed snapshot',
      15_000,
    );
    await running.worker.pause();
    await waitUntil(
      () =>
        running.recording().then(
          () => false,
          (e: { code?: string }) => e.code === 'NOT_RECORDING',
        ),
      'the check to notice',
      15_000,
    );
    running.worker.resume();
    await waitUntil(
      () =>
        running.recording().then(
          () => true,
          () => false,
        ),
      'recording again',
      15_000,
    );
  });
});
