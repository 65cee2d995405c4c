/**
 * A worker-only process (role `worker`, as in the compose file) serves no API, but with
 * `server.probePort` it answers /healthz, /readyz (which says whether it is recording) and /metrics.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';
import { waitFor } from '../../src/runtime/wait.ts';

const db = freshDatabaseUrl('worker_probes');
const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-worker-probes-'));
const running: PhaselogProcess[] = [];
afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await db.drop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('phaselog worker with server.probePort', () => {
  it('answers /healthz, /readyz (with the recording check) and /metrics, and nothing else', async () => {
    // No cluster configured: the worker reads the demo clusters.
    const proc = runPhaselog(
      ['worker'],
      cleanEnv({
        PHASELOG_PROBE_PORT: '0',
        PHASELOG_STATE_DIR: stateDir,
        DATABASE_URL: db.url,
        REDIS_URL: testRedisUrl(),
        PHASELOG_REDIS_PREFIX: uniquePrefix('worker-probes'),
      }),
    );
    running.push(proc);
    const line = await proc.waitForLog(
      (l) => l.msg === 'worker probes listening (/healthz, /readyz, /metrics)',
      90_000,
    );
    const base = String(line.url);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    let body: { status?: string; checks?: Record<string, { ok: boolean }> } = {};
    await waitFor(
      async () => {
        const res = await fetch(`${base}/readyz`);
        body = (await res.json()) as typeof body;
        return res.status === 200;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: '/readyz of the worker to say ready' },
    );
    expect(body).toEqual({
      status: 'ready',
      checks: { database: { ok: true }, redis: { ok: true }, migrations: { ok: true }, recording: { ok: true } },
    });
    // Its metrics: the demo's phases from the database, its own queue and snapshots.
    let metrics = '';
    await waitFor(
      async () => {
        metrics = await (await fetch(`${base}/metrics`)).text();
        return (
          /^phaselog_phase_status\{.*\} 1$/m.test(metrics) &&
          /^phaselog_snapshot_duration_seconds_count\{.*kind="scheduled".*\} [1-9]/m.test(metrics)
        );
      },
      { timeoutMs: 30_000, intervalMs: 200, what: '/metrics of the worker to show phases and timed snapshots' },
    );
    expect(metrics).toMatch(/^phaselog_queue_jobs\{queue="[^"]+",state="waiting"\} \d+$/m);
    expect(metrics).toMatch(/^phaselog_cluster_reachable\{cluster="[^"]+"\} [01]$/m);
    expect(metrics).not.toContain(db.url);
    // The worker serves no API.
    expect(
      (
        await fetch(`${base}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"query":"{ __typename }"}',
        })
      ).status,
    ).toBe(404);
    // The image's HEALTHCHECK (bin/healthcheck.mjs) finds the worker's listener though the API port is dead.
    const probePort = new URL(base).port;
    const healthcheck = (): number | null =>
      spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'bin/healthcheck.mjs')], {
        env: cleanEnv({ PHASELOG_PORT: '1', PHASELOG_PROBE_PORT: probePort }),
        timeout: 10_000,
      }).status;
    expect(healthcheck()).toBe(0);
    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 15_000)).toBe(0);
    // And says unhealthy once nothing answers.
    expect(healthcheck()).toBe(1);
  }, 150_000);
});
