/**
 * phaselog supervises the embedded PostgreSQL it starts: `kill -9` of its postmaster is noticed,
 * logged, and the server is restarted on the same data directory and port, so readiness and the API
 * recover without restarting phaselog. A server that keeps dying makes phaselog give up and exit 1.
 * Each test runs phaselog with its own state directory (its own embedded server, never the shared one).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import type { PhaselogProcess } from '../helpers/process.ts';
import { waitFor } from '../../src/runtime/wait.ts';

const stateDirs: string[] = [];
const running: PhaselogProcess[] = [];
afterAll(() => {
  for (const proc of running) proc.child.kill('SIGKILL');
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

async function start(): Promise<{ proc: PhaselogProcess; base: string; stateDir: string }> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-pg-restart-'));
  stateDirs.push(stateDir);
  const proc = runPhaselog(
    ['api'],
    cleanEnv({
      PHASELOG_STATE_DIR: stateDir,
      PHASELOG_PORT: '0',
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: uniquePrefix('pg-restart'),
    }),
  );
  running.push(proc);
  const line = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 60_000);
  return { proc, base: String(line.graphql).replace(/\/graphql$/, ''), stateDir };
}

function postmasterPid(stateDir: string): number {
  return Number(readFileSync(path.join(stateDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

async function clusters(base: string): Promise<unknown> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ clusters { name } }' }),
  });
  return res.json();
}

function logLines(proc: PhaselogProcess): Record<string, unknown>[] {
  return proc
    .stdout()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('embedded PostgreSQL supervision', () => {
  it('restarts the server it owns after kill -9, and readiness and GraphQL recover without restarting phaselog', async () => {
    const { proc, base, stateDir } = await start();
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(await clusters(base)).toEqual({ data: { clusters: [] } });

    const killed = postmasterPid(stateDir);
    process.kill(killed, 'SIGKILL');

    const warning = await proc.waitForLog(
      (l) => l.msg === 'the embedded PostgreSQL that phaselog owns exited unexpectedly; restarting it',
      30_000,
    );
    expect(warning).toMatchObject({ level: 40, pid: killed, signal: 'SIGKILL' });
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: '/readyz to answer 200 again',
    });
    expect(await clusters(base)).toEqual({ data: { clusters: [] } });
    expect(postmasterPid(stateDir)).not.toBe(killed);
    // /readyz can see the new server before the supervisor's own connection check does, so the
    // confirmation line may follow the first 200 by a poll interval.
    const restarted = () => logLines(proc).find((l) => l.msg === 'the embedded PostgreSQL was restarted');
    await waitFor(() => restarted() !== undefined, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: 'the restart to be logged',
    });
    expect(restarted()).toMatchObject({ level: 40, pid: postmasterPid(stateDir) });

    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 15_000)).toBe(0);
    expect(proc.stderr()).toBe('');
  }, 120_000);

  it('gives up with a fatal log line and exit code 1 when the server cannot be started again', async () => {
    const { proc, stateDir } = await start();
    // A configuration the server refuses at start: every restart fails.
    appendFileSync(path.join(stateDir, 'postgres', 'postgresql.conf'), '\nshared_buffers = nonsense\n');
    process.kill(postmasterPid(stateDir), 'SIGKILL');

    expect(await exitCodeWithin(proc, 90_000)).toBe(1);
    const lines = logLines(proc);
    expect(
      lines.filter((l) => l.msg === 'restarting the embedded PostgreSQL failed; trying again').length,
    ).toBeGreaterThanOrEqual(1);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 60,
        msg: 'phaselog cannot go on; shutting down',
        reason: expect.stringMatching(
          /^the embedded PostgreSQL stopped or failed to start 6 times within 300 s; phaselog gives up restarting it/,
        ),
      }),
    );
  }, 120_000);
});
