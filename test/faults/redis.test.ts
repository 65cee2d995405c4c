/**
 * Fault: phaselog's Redis loses its data, by kill -9 and a restart without persistence, or by
 * FLUSHALL. Its job schedulers, queued jobs and locks are gone. phaselog must say it is not ready
 * while Redis is dead or nothing is scheduled, record the change made meanwhile exactly once, and
 * go on recording on schedule: a cluster outage after the fault (which only a scheduled snapshot
 * notices) is recorded too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/runtime/wait.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/services.ts';
import { createFaultBed, INTERVAL_MS, FAULT_MS, RECOVERY_MS, type FaultBed } from './harness.ts';
import { startPrivateRedis, type PrivateRedis } from './servers.ts';

/** A short outage after the fault: only scheduled snapshots can notice it. */
const LATER_OUTAGE_MS = 3 * INTERVAL_MS + 2000;

describe('fault: Redis loses its data', () => {
  let database: TestDatabase | undefined;
  let redis: PrivateRedis | undefined;
  let bed: FaultBed | undefined;

  afterEach(async () => {
    await bed?.close();
    await redis?.close();
    await database?.drop();
  });

  async function setUp(label: string): Promise<FaultBed> {
    database = await createTestDatabase(`fault_${label}`);
    redis = await startPrivateRedis();
    bed = await createFaultBed({ label, redisUrl: redis.url, databaseUrl: database.url });
    await bed.start('all');
    await bed.markBaseline();
    bed.startPolling();
    return bed;
  }

  /** After the fault: a later cluster outage and a change during it are recorded, once each. */
  async function expectRecordingOnSchedule(b: FaultBed): Promise<void> {
    // Redis' death made phaselog blind for longer than the cluster's bound. Until a snapshot has
    // observed the cluster again, an outage starting now would be recorded as the end of that blind
    // span (Unobserved -> Unreachable), which is true but not the outage pair this checks for.
    await waitFor(
      async () =>
        (await b.graphql<{ clusters: { name: string; state: string }[] }>('{ clusters { name state } }')).clusters.some(
          (c) => c.name === b.clusterName && c.state === 'OBSERVED',
        ),
      {
        timeoutMs: RECOVERY_MS,
        intervalMs: 200,
        what: 'the cluster to be observed again',
      },
    );
    await b.clusterOutage(LATER_OUTAGE_MS, () => b.drive('Current'));
    await b.waitRecorded('the change made during the later cluster outage to be recorded', RECOVERY_MS);
    // The end of the blind span Redis' death caused may be recorded too (from Unobserved); the
    // verdict allows one such row per blind span.
    const outageRows = async () => b.clusterRows(await b.readLog()).filter((row) => !row.startsWith('Unobserved->'));
    await waitFor(async () => (await outageRows()).length >= 2, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 250,
      what: 'the later cluster outage to be recorded',
    }).catch(() => {});
    expect(await outageRows(), `a cluster outage after the fault is recorded once\n${b.output()}`).toEqual([
      'Reachable->Unreachable',
      'Unreachable->Reachable',
    ]);
  }

  it('kill -9 and a restart empty: not ready while dead, the change made meanwhile recorded once, schedules resume', async () => {
    const b = await setUp('redis_kill');
    const r = redis as PrivateRedis;
    await r.kill();
    const killedAt = Date.now();
    b.facts.serverDown.open('Redis is dead');
    b.facts.blind.open('Redis is dead');
    b.drive('InProgress');
    await waitFor(() => Date.now() - killedAt > FAULT_MS, {
      timeoutMs: FAULT_MS + 10_000,
      intervalMs: 200,
      what: 'Redis to stay dead',
    });
    // Dead until the restart begins (it may accept connections before restart() resolves).
    const restartAt = Date.now();
    await r.start();
    b.facts.serverDown.close('Redis is dead', restartAt);
    b.facts.blind.close('Redis is dead', restartAt);
    const backAt = Date.now();
    b.untilSchedulerBack('Redis restarted empty: no job scheduler', r.url);

    expect(b.notReadyDuring(killedAt, backAt).saidNotReady, '/readyz said not ready while Redis was dead').toBe(true);
    await b.waitRecorded('the change made while Redis was dead to be recorded', RECOVERY_MS);
    await expectRecordingOnSchedule(b);
    expect(b.readyAfter(backAt).ready, 'ready again after Redis is back').toBe(true);
    expect(await b.verdict()).toEqual([]);
  }, 150_000);

  it('FLUSHALL: the change made right after it recorded once, schedules resume, /readyz not ready while none is scheduled', async () => {
    const b = await setUp('redis_flush');
    const r = redis as PrivateRedis;
    await r.flushAll();
    const flushedAt = Date.now();
    b.untilSchedulerBack('Redis flushed: no job scheduler', r.url);
    b.drive('InProgress');

    await b.waitRecorded('the change made after FLUSHALL to be recorded', RECOVERY_MS);
    await expectRecordingOnSchedule(b);
    expect(b.readyAfter(flushedAt).ready, 'ready after the flush').toBe(true);
    expect(await b.verdict()).toEqual([]);
  }, 150_000);
});
