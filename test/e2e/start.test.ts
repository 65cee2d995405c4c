/**
 * Command 1 as a new user runs it: no configuration at all, so phaselog starts its embedded
 * PostgreSQL in the state directory, serves /healthz, /readyz and /graphql, shuts down cleanly on
 * Ctrl-C, and finds its data again on the next start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { findRunningEmbeddedPostgres } from '../../src/runtime/embedded-postgres.ts';
import type { PhaselogProcess } from '../helpers/process.ts';

const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-e2e-'));
// Its own queues and channels: other test files run phaselog against the same Redis at the same time.
const redisPrefix = uniquePrefix('start');
const running: PhaselogProcess[] = [];
afterAll(() => {
  for (const proc of running) proc.child.kill('SIGKILL');
  rmSync(stateDir, { recursive: true, force: true });
});

async function start(): Promise<{ proc: PhaselogProcess; url: string }> {
  const proc = runPhaselog(
    ['start'],
    cleanEnv({
      PHASELOG_STATE_DIR: stateDir,
      PHASELOG_PORT: '0',
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: redisPrefix,
    }),
  );
  running.push(proc);
  const line = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 60_000);
  return { proc, url: String(line.graphql) };
}

async function graphql(url: string, query: string): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

/** The embedded server, found the way the CLI's bootstrap commands find it. */
function embeddedUrl(): string {
  const url = findRunningEmbeddedPostgres(stateDir);
  if (!url) throw new Error(`no embedded PostgreSQL running in ${stateDir}`);
  return url;
}

async function countChanges(): Promise<number> {
  const client = new pg.Client({ connectionString: embeddedUrl() });
  await client.connect();
  try {
    const res = await client.query<{ n: string }>('SELECT count(*) AS n FROM "StatusChange"');
    return Number(res.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

describe('phaselog start with nothing configured', () => {
  it('serves the API, records the demo clusters, exits cleanly on SIGINT, and keeps its history across restarts', async () => {
    const first = await start();
    const base = first.url.replace(/\/graphql$/, '');

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { database: { ok: true }, redis: { ok: true }, migrations: { ok: true }, recording: { ok: true } },
    });
    expect(await graphql(first.url, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });

    // The main job: the workers snapshot the two demo clusters into the database.
    await waitFor(
      async () => {
        const answer = await graphql(first.url, '{ clusters { name reachable } }');
        const clusters = (answer.data?.clusters ?? []) as { name: string; reachable: boolean | null }[];
        return (
          clusters
            .filter((c) => c.reachable === true)
            .map((c) => c.name)
            .sort()
            .join() === 'demo-prod,demo-staging'
        );
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'both demo clusters to be recorded as reachable' },
    );
    const recorded = await countChanges();
    expect(recorded).toBeGreaterThan(0);

    // Within a minute the demo scenario's crash loop shows, through GraphQL and through the CLI.
    await waitFor(
      async () => {
        const answer = await graphql(
          first.url,
          '{ statusChanges(filter: { scopes: [phase], toStatus: [Failed] }) { edges { node { cluster phase { name } } } } }',
        );
        const edges = (
          (answer.data?.statusChanges as { edges: { node: { cluster: string; phase: { name: string } } }[] }) ?? {
            edges: [],
          }
        ).edges;
        return edges.some((e) => e.node.cluster === 'demo-staging' && e.node.phase.name === 'worker');
      },
      { timeoutMs: 60_000, intervalMs: 1000, what: 'the demo crash loop to be recorded' },
    );
    const cli = runPhaselog(
      ['history', 'demo-staging/flux-system/worker', '--all'],
      cleanEnv({ PHASELOG_URL: first.url }),
    );
    expect(await exitCodeWithin(cli, 30_000)).toBe(0);
    expect(cli.stdout()).toMatch(/ Pod\/shop\/worker-0\s+Current\s+Failed\s+Containers in CrashLoop state: main/);

    first.proc.child.kill('SIGINT');
    expect(await exitCodeWithin(first.proc, 10_000)).toBe(0);
    expect(first.proc.stderr()).toBe('');

    const second = await start();
    expect(await countChanges()).toBeGreaterThanOrEqual(recorded);
    const answer = await graphql(second.url, '{ clusters { name } }');
    expect(answer.data?.clusters).toEqual([{ name: 'demo-prod' }, { name: 'demo-staging' }]);
    second.proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(second.proc, 10_000)).toBe(0);
  }, 180_000);
});
