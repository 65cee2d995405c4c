/**
 * Fault: notifications across a worker SIGKILL and a Redis restart that loses every job. phaselog
 * runs as processes (an API and a worker) against a private redis-server; a local receiver checks
 * each request's HMAC signature and counts the requests it accepted by idempotency key. While the
 * receiver fails, the worker is killed with deliveries in retry, a transition is made with no worker
 * running, and Redis is killed and restarted empty. Once a new worker runs and the receiver is well,
 * every phase transition after the baseline must have been accepted exactly once, signed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/runtime/wait.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/services.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createFaultBed, PHASE, RECOVERY_MS, type FaultBed, type LoggedChange } from './harness.ts';
import { startPrivateRedis, type PrivateRedis } from './servers.ts';

const SECRET = 'fault-suite-hmac-secret';
const ROUTE = 'fault';

describe('fault: notifications across a worker SIGKILL and a Redis restart', () => {
  let database: TestDatabase;
  let redis: PrivateRedis;
  let bed: FaultBed;
  let receiver: WebhookReceiver;
  let dir: string;

  beforeAll(async () => {
    database = await createTestDatabase('fault_notify');
    redis = await startPrivateRedis();
    receiver = await startWebhookReceiver(SECRET);
    bed = await createFaultBed({ label: 'notify', redisUrl: redis.url, databaseUrl: database.url });
    dir = mkdtempSync(path.join(tmpdir(), 'phaselog-fault-notify-'));
    writeFileSync(path.join(dir, 'hmac'), SECRET);
    writeFileSync(
      path.join(dir, 'phaselog.yaml'),
      [
        'notifications:',
        '  scanInterval: 250ms',
        '  routes:',
        `    - name: ${ROUTE}`,
        '      match:',
        `        clusters: [${bed.clusterName}]`,
        '      retry:',
        '        attempts: 50',
        '        backoff: 200ms',
        '      receiver:',
        '        type: webhook',
        `        url: ${receiver.url}`,
        '        secretFile: hmac',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await bed?.close();
    await redis?.close();
    await receiver?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every transition exactly once, signed, with nothing lost', async () => {
    const env = { PHASELOG_CONFIG: path.join(dir, 'phaselog.yaml') };
    const [, first] = await Promise.all([bed.start('api', env), bed.start('worker', env)]);
    await bed.markBaseline();
    const baseline = bed.baselineSeq() ?? 0n;
    const phaseRows = async (): Promise<LoggedChange[]> =>
      (await bed.readLog()).filter((c) => c.scope === 'phase' && c.phase?.name === PHASE && BigInt(c.seq) > baseline);
    const keyOf = (row: LoggedChange) => `${ROUTE}:${row.seq}`;
    const acceptedAll = async (): Promise<boolean> => {
      const rows = await phaseRows().catch(() => []);
      return rows.length > 0 && rows.every((row) => receiver.accepted().has(keyOf(row)));
    };

    // A transition with all well: delivered.
    bed.drive('InProgress');
    await bed.waitRecorded('the first transition to be recorded');
    await waitFor(acceptedAll, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 200,
      what: 'the first transition to be delivered',
    });

    // The receiver fails; a transition's delivery goes into retries; the worker is killed meanwhile.
    receiver.respond = () => 503;
    bed.drive('Current');
    await bed.waitRecorded('the second transition to be recorded');
    const second = (await phaseRows()).at(-1) as LoggedChange;
    await waitFor(() => receiver.hits.filter((h) => h.key === keyOf(second)).length >= 2, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 100,
      what: 'the second delivery to have failed twice',
    });
    // ...and both failures recorded: a kill between a receiver's answer and its record loses that attempt's count.
    await waitFor(
      async () => {
        const db = new pg.Client({ connectionString: database.url });
        await db.connect();
        try {
          const row = await db.query<{ attempts: number }>(
            'SELECT "attempts" FROM "NotificationDelivery" WHERE "route" = $1 AND "seq" = $2',
            [ROUTE, second.seq],
          );
          return (row.rows[0]?.attempts ?? 0) >= 2;
        } finally {
          await db.end();
        }
      },
      { timeoutMs: RECOVERY_MS, intervalMs: 100, what: 'the two failed attempts to be recorded' },
    );
    await bed.kill(first);

    // With no worker: a transition nobody records yet, and Redis dies and comes back empty.
    bed.drive('InProgress');
    await redis.kill();
    await redis.start();
    receiver.respond = () => 200;
    await bed.start('worker', env);

    await bed.waitRecorded('the transition made without a worker to be recorded', RECOVERY_MS);
    await waitFor(acceptedAll, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 200,
      what: `every transition to be delivered\n${bed.output()}`,
    });
    // Scans go on meanwhile; give them time to re-send anything they would (they must not).
    const settledAt = receiver.hits.length;
    await waitFor(
      async () => {
        const db = new pg.Client({ connectionString: database.url });
        await db.connect();
        try {
          const cursor = await db.query<{ seq: string }>('SELECT "seq" FROM "NotificationCursor" WHERE "route" = $1', [
            ROUTE,
          ]);
          const last = await db.query<{ seq: string }>('SELECT max("seq") AS "seq" FROM "StatusChange"');
          return cursor.rows[0]?.seq === last.rows[0]?.seq;
        } finally {
          await db.end();
        }
      },
      { timeoutMs: RECOVERY_MS, intervalMs: 250, what: 'the route to have judged the whole log' },
    );

    const rows = await phaseRows();
    expect(rows.map((r) => `${r.fromStatus}->${r.toStatus}`)).toEqual([
      'Current->InProgress',
      'InProgress->Current',
      'Current->InProgress',
    ]);
    const accepted = receiver.accepted();
    for (const row of rows) expect(accepted.get(keyOf(row)), `accepted deliveries of ${keyOf(row)}`).toBe(1);
    expect(receiver.hits.slice(settledAt).filter((h) => h.answered < 300)).toEqual([]);
    expect(receiver.hits.every((h) => h.signed === true)).toBe(true);

    // The processes' logs (a worker whose deliveries failed and were retried included) hold neither the key nor the receiver URL.
    const logs = bed.runs.map((run) => run.proc.stdout() + run.proc.stderr()).join('\n');
    expect(logs).toContain('notification workers started');
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain(receiver.url);

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const stored = await db.query<{ seq: string; status: string; attempts: number }>(
        'SELECT "seq", "status", "attempts" FROM "NotificationDelivery" WHERE "route" = $1 AND "seq" > $2 ORDER BY "seq"',
        [ROUTE, baseline.toString()],
      );
      const byseq = new Map(stored.rows.map((r) => [r.seq, r]));
      for (const row of rows) expect(byseq.get(row.seq)?.status, `delivery of ${row.seq}`).toBe('delivered');
      // The killed worker's failed attempts were recorded and counted on, not started over.
      expect(byseq.get(second.seq)?.attempts).toBeGreaterThanOrEqual(3);
    } finally {
      await db.end();
    }
  }, 180_000);
});
