/**
 * Fault: the worker process (role worker, beside an API process) is killed with SIGKILL in the
 * middle of writing a snapshot, and a new worker is started. The half-written snapshot must leave
 * nothing behind, the change it was writing must be recorded exactly once by the new worker, soon,
 * and /readyz must not say ready for long while nothing records.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/runtime/wait.ts';
import { createTestDatabase, testRedisUrl, type TestDatabase } from '../helpers/services.ts';
import { createFaultBed, RECOVERY_MS, type FaultBed } from './harness.ts';

describe('fault: worker killed mid-snapshot', () => {
  let database: TestDatabase;
  let bed: FaultBed;
  let holder: pg.Client | undefined;

  beforeAll(async () => {
    database = await createTestDatabase('fault_worker');
    bed = await createFaultBed({ label: 'worker', redisUrl: testRedisUrl(), databaseUrl: database.url });
  });
  afterAll(async () => {
    await holder?.end().catch(() => {});
    await bed?.close();
    await database?.drop();
  });

  it('leaves no partial write; a new worker records the change once, soon; /readyz does not claim recording meanwhile', async () => {
    const [, first] = await Promise.all([bed.start('api'), bed.start('worker')]);
    await bed.markBaseline();
    bed.startPolling();

    // Hold the change log's table so the next snapshot with a change stops inside its transaction,
    // after writing statuses and before its change-log rows.
    holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE "StatusChange" IN SHARE MODE');
    bed.drive('InProgress');
    await waitFor(
      async () => {
        const waiting = await holder?.query(
          `SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'StatusChange' AND NOT l.granted AND l.pid <> pg_backend_pid()`,
        );
        return (waiting?.rowCount ?? 0) > 0;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the worker to be inside its snapshot transaction, waiting to append its changes' },
    );
    await bed.kill(first);
    bed.facts.notRecording.open('the only worker was killed');
    bed.facts.blind.open('the only worker was killed');
    await holder.query('ROLLBACK');

    const second = await bed.start('worker');
    expect(second.proc.child.exitCode).toBeNull();
    await bed.waitRecorded('the new worker to record the change the killed one was writing', RECOVERY_MS);
    bed.facts.notRecording.close('the only worker was killed');
    bed.facts.blind.close('the only worker was killed');

    bed.drive('Current');
    await bed.waitRecorded('the new worker to record a later change', RECOVERY_MS);
    expect(await bed.verdict()).toEqual([]);
  }, 150_000);
});
