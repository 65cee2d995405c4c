/**
 * `phaselog start` runs the role the configuration names: a container whose image runs `start`
 * with PHASELOG_ROLE=api must not also run snapshot workers and schedulers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';

const db = freshDatabaseUrl('start_role');
const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-start-role-'));
const running: PhaselogProcess[] = [];
afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await db.drop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('phaselog start', () => {
  it('runs only the API when PHASELOG_ROLE=api', async () => {
    const proc = runPhaselog(
      ['start'],
      cleanEnv({
        PHASELOG_ROLE: 'api',
        PHASELOG_STATE_DIR: stateDir,
        PHASELOG_PORT: '0',
        DATABASE_URL: db.url,
        REDIS_URL: testRedisUrl(),
        PHASELOG_REDIS_PREFIX: uniquePrefix('start-role'),
      }),
    );
    running.push(proc);
    const [listening, started] = await Promise.all([
      proc.waitForLog((l) => l.msg === 'phaselog API listening', 90_000),
      proc.waitForLog((l) => l.msg === 'phaselog started', 90_000),
    ]);
    expect(started.role).toBe('api');
    const base = String(listening.ui).replace(/\/$/, '');
    const ready = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, unknown> };
    // No worker in this process: no recording check, no demo, no snapshot workers.
    expect(Object.keys(ready.checks).sort()).toEqual(['database', 'migrations', 'redis']);
    const lines = proc
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg?: string });
    expect(lines.map((l) => l.msg)).not.toContain('snapshot workers started');
    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 15_000)).toBe(0);
  }, 120_000);
});
