/**
 * Several phaselog processes started at once against a database that does not exist yet (a fresh
 * deployment: API replicas and workers come up together) all start: one creates the database, the
 * others find it, and the migrations are applied once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import type { PhaselogProcess } from '../helpers/process.ts';

const db = freshDatabaseUrl('concurrent_start');
const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-concurrent-'));
const running: PhaselogProcess[] = [];
afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await db.drop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('three processes starting together against a missing database', () => {
  it('all start, and every migration is recorded once', async () => {
    const env = cleanEnv({
      PHASELOG_STATE_DIR: stateDir,
      PHASELOG_PORT: '0',
      DATABASE_URL: db.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: uniquePrefix('concurrent'),
    });
    const procs = [runPhaselog(['api'], env), runPhaselog(['api'], env), runPhaselog(['api'], env)];
    running.push(...procs);
    const listening = await Promise.allSettled(
      procs.map((proc) => proc.waitForLog((l) => l.msg === 'phaselog API listening', 90_000)),
    );
    expect(
      listening.map((r) =>
        r.status === 'fulfilled' ? 'listening' : String(r.reason).split('\n').slice(0, 3).join(' '),
      ),
    ).toEqual(['listening', 'listening', 'listening']);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = await client.query<{ migration_name: string; n: string }>(
        'SELECT migration_name, count(*) AS n FROM _prisma_migrations GROUP BY migration_name',
      );
      expect(rows.rows.length).toBeGreaterThan(0);
      expect(rows.rows.filter((r) => r.n !== '1')).toEqual([]);
    } finally {
      await client.end();
    }
    for (const proc of procs) proc.child.kill('SIGTERM');
    for (const proc of procs) expect(await exitCodeWithin(proc, 15_000)).toBe(0);
  }, 150_000);
});
