/**
 * Fault: the worker process (role worker, beside an API process) is killed with SIGKILL in the
 * middle of writing a snapshot; a while later a new worker is started. The half-written snapshot
 * must leave nothing behind, the change it was writing must be recorded exactly once by the new
 * worker, soon, and no gate may pass on what nobody observed meanwhile.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/runtime/wait.ts';
import { createTestDatabase, testRedisUrl, type TestDatabase } from '../helpers/services.ts';
import { createFaultBed, FAULT_MS, NAMESPACE, NOTICE_MS, PHASE, RECOVERY_MS, type FaultBed } from './harness.ts';

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

  it('leaves no partial write; a new worker records the change once, soon; no gate passes meanwhile', async () => {
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
    // The worker's backend: waiting to append to the change log while holding the row locks of
    // what it has already written in the same transaction.
    let writer: number | undefined;
    await waitFor(
      async () => {
        const found = await holder?.query<{ pid: number }>(
          `SELECT w.pid FROM pg_locks w JOIN pg_class c ON c.oid = w.relation
           WHERE c.relname = 'StatusChange' AND NOT w.granted AND w.pid <> pg_backend_pid()
             AND EXISTS (SELECT 1 FROM pg_locks h JOIN pg_class hc ON hc.oid = h.relation
                         WHERE h.pid = w.pid AND h.granted AND h.mode = 'RowExclusiveLock' AND hc.relname <> 'StatusChange')`,
        );
        writer = found?.rows[0]?.pid;
        return writer !== undefined;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: 'the worker to be inside its snapshot transaction, waiting to append its changes',
      },
    );
    await bed.kill(first);
    // No "not recording" span for /readyz here: it is the API process's, whose readiness is its own
    // database and Redis; a worker process has no HTTP listener.
    bed.facts.blind.open('the only worker was killed');
    await holder.query('ROLLBACK');
    await waitFor(
      async () => (await holder?.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [writer]))?.rowCount === 0,
      { timeoutMs: 10_000, intervalMs: 100, what: "the killed worker's backend to end" },
    ).catch(async (error: unknown) => {
      const row = await holder?.query(
        'SELECT state, wait_event_type, wait_event, query FROM pg_stat_activity WHERE pid = $1',
        [writer],
      );
      throw new Error(`${(error as Error).message}: ${JSON.stringify(row?.rows)}`);
    });
    // Whatever the killed transaction left, the phase's recorded status agrees with its change log.
    const { phase } = await bed.graphql<{ phase: { status: string } }>(
      `query($cluster: String, $namespace: String, $name: String) { phase(cluster: $cluster, namespace: $namespace, name: $name) { status } }`,
      { cluster: bed.clusterName, namespace: NAMESPACE, name: PHASE },
    );
    const logged = (await bed.readLog()).filter((c) => c.scope === 'phase' && c.phase?.name === PHASE).at(-1)?.toStatus;
    expect(phase.status, 'the recorded status and the last logged change agree after the kill').toBe(logged);

    // No worker for a while, as when every worker is down while the API runs: gates must turn stale.
    const killedAt = Date.now();
    await waitFor(() => Date.now() - killedAt > FAULT_MS, {
      timeoutMs: FAULT_MS + 10_000,
      intervalMs: 200,
      what: 'the time without a worker',
    });
    const second = await bed.start('worker');
    expect(second.proc.child.exitCode).toBeNull();
    // The killed worker's leases ran out while no worker ran: the new one must not wait on them.
    await bed.waitRecorded('the new worker to record the change the killed one was writing', NOTICE_MS);
    bed.facts.blind.close('the only worker was killed');

    bed.drive('Current');
    await bed.waitRecorded('the new worker to record a later change', RECOVERY_MS);
    expect(await bed.verdict()).toEqual([]);
  }, 150_000);
});
