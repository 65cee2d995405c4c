/**
 * Fault: PostgreSQL dies (kill -9 of the postmaster and its backends). phaselog must say it is not
 * ready while its database is dead, come back without a restart of its own, and record the change
 * made meanwhile exactly once. Two cases: a server phaselog was given (DATABASE_URL), which the test
 * restarts on the same port; and the embedded server phaselog starts and owns (no DATABASE_URL),
 * which phaselog itself must start again.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRunningEmbeddedPostgres } from '../../src/runtime/embedded-postgres.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { createFaultBed, FAULT_MS, RECOVERY_MS, type FaultBed } from './harness.ts';
import {
  killProcessGroup,
  postgresAnswers,
  startPrivatePostgres,
  startPrivateRedis,
  type PrivatePostgres,
  type PrivateRedis,
} from './servers.ts';

/** Whether the embedded server of `stateDir` runs and answers a query. */
async function embeddedAnswers(stateDir: string): Promise<boolean> {
  const url = findRunningEmbeddedPostgres(stateDir);
  return url !== undefined && (await postgresAnswers(url));
}

describe('fault: PostgreSQL killed', () => {
  let postgres: PrivatePostgres | undefined;
  let redis: PrivateRedis | undefined;
  let bed: FaultBed | undefined;

  afterEach(async () => {
    await bed?.close();
    await postgres?.stop();
    await redis?.close();
  });

  it('a configured server (DATABASE_URL) killed and restarted: not ready while dead, the change made meanwhile recorded once', async () => {
    postgres = await startPrivatePostgres();
    redis = await startPrivateRedis();
    const b = (bed = await createFaultBed({ label: 'pg_url', redisUrl: redis.url, databaseUrl: postgres.url }));
    await b.start('all');
    await b.markBaseline();
    b.startPolling();

    await postgres.kill();
    const killedAt = Date.now();
    b.facts.serverDown.open('PostgreSQL is dead');
    b.facts.blind.open('PostgreSQL is dead');
    b.drive('InProgress');
    await waitFor(() => Date.now() - killedAt > FAULT_MS, {
      timeoutMs: FAULT_MS + 10_000,
      intervalMs: 200,
      what: 'PostgreSQL to stay dead',
    });
    // Dead until the restart begins (it may accept connections before restart() resolves).
    const restartAt = Date.now();
    await postgres.restart();
    b.facts.serverDown.close('PostgreSQL is dead', restartAt);
    b.facts.blind.close('PostgreSQL is dead', restartAt);
    const backAt = Date.now();

    expect(b.notReadyDuring(killedAt, backAt).saidNotReady, '/readyz said not ready while PostgreSQL was dead').toBe(
      true,
    );
    await b.waitRecorded('the change made while PostgreSQL was dead to be recorded', RECOVERY_MS);
    b.drive('Current');
    await b.waitRecorded('a change after PostgreSQL is back to be recorded', RECOVERY_MS);
    await waitFor(() => b.readyAfter(backAt).ready, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 200,
      what: '/readyz to say ready once PostgreSQL is back',
    });
    expect(await b.verdict()).toEqual([]);
  }, 150_000);

  it('the embedded server phaselog owns, killed: phaselog starts it again, the change made meanwhile recorded once', async () => {
    redis = await startPrivateRedis();
    const b = (bed = await createFaultBed({ label: 'pg_embedded', redisUrl: redis.url }));
    await b.start('all');
    await b.markBaseline();
    b.startPolling();

    const pidFile = path.join(b.stateDir, 'postgres', 'postmaster.pid');
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    await killProcessGroup(pid);
    const killedAt = Date.now();
    b.facts.serverDown.open('the embedded PostgreSQL is dead');
    b.facts.blind.open('the embedded PostgreSQL is dead');
    b.drive('InProgress');

    // Dead at least until the last look that found it not answering.
    let seenDeadAt = killedAt;
    await waitFor(
      async () => {
        const lookedAt = Date.now();
        if (await embeddedAnswers(b.stateDir)) return true;
        seenDeadAt = lookedAt;
        return false;
      },
      { timeoutMs: RECOVERY_MS, intervalMs: 200, what: 'phaselog to start its embedded PostgreSQL again' },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${b.output()}`);
    });
    b.facts.serverDown.close('the embedded PostgreSQL is dead', seenDeadAt);
    b.facts.blind.close('the embedded PostgreSQL is dead', seenDeadAt);
    const backAt = Date.now();

    expect(
      b.notReadyDuring(killedAt, backAt).saidNotReady,
      '/readyz said not ready while the embedded PostgreSQL was dead',
    ).toBe(true);
    await b.waitRecorded('the change made while the embedded PostgreSQL was dead to be recorded', RECOVERY_MS);
    b.drive('Current');
    await b.waitRecorded('a change after the embedded PostgreSQL is back to be recorded', RECOVERY_MS);
    await waitFor(() => b.readyAfter(backAt).ready, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 200,
      what: '/readyz to say ready once the embedded PostgreSQL is back',
    });
    expect(await b.verdict()).toEqual([]);
  }, 150_000);
});
