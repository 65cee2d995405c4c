/**
 * The log stays JSON when Redis goes away: every Redis client phaselog creates reports its
 * connection errors through pino (once per change of state), so nothing like ioredis'
 * "[ioredis] Unhandled error event" or BullMQ's console.error reaches stdout or stderr.
 * The test kills its own private redis-server, never the shared one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, uniquePrefix } from '../helpers/services.ts';
import type { TestDatabase } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import type { PhaselogProcess } from '../helpers/process.ts';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.ts';
import { waitFor } from '../../src/runtime/wait.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-redis-outage-'));
let redis: PrivateRedis | undefined;
const running: PhaselogProcess[] = [];
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('redis_outage');
});
afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await redis?.close();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

function outputLines(text: string): string[] {
  return text.split('\n').filter((line) => line.length > 0);
}

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

describe('a Redis outage under a running phaselog', () => {
  it('is logged as JSON lines only, once per client, and phaselog recovers when Redis returns', async () => {
    // Without persistence: killing it loses everything, like a crashed cache.
    const server = await startPrivateRedis();
    redis = server;
    const proc = runPhaselog(
      ['start'],
      cleanEnv({
        PHASELOG_STATE_DIR: dir,
        PHASELOG_PORT: '0',
        DATABASE_URL: db.url,
        REDIS_URL: server.url,
        PHASELOG_REDIS_PREFIX: uniquePrefix('redis-outage'),
      }),
    );
    running.push(proc);
    const base = String((await proc.waitForLog((l) => l.msg === 'phaselog API listening', 60_000)).graphql).replace(
      /\/graphql$/,
      '',
    );
    await proc.waitForLog((l) => l.msg === 'snapshot workers started', 30_000).catch(() => undefined);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    await server.kill();
    const errorsOf = () =>
      new Set(
        outputLines(proc.stdout())
          .filter(isJson)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => l.msg === 'Redis connection error')
          .map((l) => String(l.client)),
      );
    // The change feed subscribes on its first GraphQL subscriber, and the refresh queue on the first refresh: none here.
    const expected = [
      'snapshot-queue',
      'snapshot-worker',
      'cluster-locks',
      'change-publisher',
      'token-revocation-subscriber',
      'token-revocation-publisher',
    ];
    // Either every long-lived client has reported the outage, or something wrote outside the log.
    await waitFor(() => proc.stderr().length > 0 || expected.every((client) => errorsOf().has(client)), {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'every Redis client to report the outage',
    }).catch((error: unknown) => {
      throw new Error(
        `${(error as Error).message}; reported: ${[...errorsOf()].join(', ')}\nstdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`,
      );
    });
    const nonJson = () =>
      [...outputLines(proc.stdout()), ...outputLines(proc.stderr())].filter((line) => !isJson(line));
    expect(nonJson()).toEqual([]);
    const readyz = await fetch(`${base}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toMatchObject({
      status: 'not ready',
      checks: { redis: { ok: false, code: 'UNAVAILABLE' } },
    });

    await server.start();
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: '/readyz to answer 200 again',
    });
    const restored = () =>
      outputLines(proc.stdout())
        .filter(isJson)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .some((l) => l.msg === 'Redis connection restored' && l.client === 'snapshot-queue');
    await waitFor(restored, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the snapshot queue to report its connection restored',
    });
    // The worker takes jobs again (the demo's watch-triggered snapshots). Stopping it while its blocking
    // connection still reconnects can hang BullMQ's Worker.close() (taskforcesh/bullmq#4656), which is
    // not what this test is about.
    const restoredAt = Date.now();
    const snapshotted = () =>
      outputLines(proc.stdout())
        .filter(isJson)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .some((l) => l.unit === 'snapshot' && Number(l.time) > restoredAt);
    await waitFor(snapshotted, { timeoutMs: 30_000, intervalMs: 100, what: 'a snapshot after Redis came back' });

    proc.child.kill('SIGTERM');
    const code = await exitCodeWithin(proc, 15_000);
    expect(code, `exit code; the log ends:\n${proc.stdout().split('\n').slice(-12).join('\n')}`).toBe(0);
    const output = [...outputLines(proc.stdout()), ...outputLines(proc.stderr())];
    expect(output.join('\n')).not.toContain('Unhandled error event');
    expect(nonJson()).toEqual([]);
    // One line per client and state, not one per reconnect attempt.
    const errorLines = output
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'Redis connection error');
    const perClient = new Map<string, number>();
    for (const line of errorLines)
      perClient.set(
        `${String(line.client)} ${JSON.stringify(line.error)}`,
        (perClient.get(`${String(line.client)} ${JSON.stringify(line.error)}`) ?? 0) + 1,
      );
    expect([...perClient].filter(([, n]) => n !== 1)).toEqual([]);
  }, 180_000);
});
