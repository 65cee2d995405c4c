/**
 * What `phaselog start` prints: the start-up line names the web UI, GraphiQL and the GraphQL
 * endpoint, each of which answers at that address; lines are JSON when stdout is a pipe (as here,
 * and in every container and log collector) and pino-pretty's text when PHASELOG_LOG_FORMAT=pretty.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/runtime/wait.ts';
import { freshDatabaseUrl, testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';

const db = freshDatabaseUrl('start_log');
const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-start-log-'));
const running: PhaselogProcess[] = [];
writeFileSync(path.join(stateDir, 'no-graphiql.yaml'), 'api:\n  graphiql: false\n');
afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await db.drop();
  rmSync(stateDir, { recursive: true, force: true });
});

function startApi(extra: Record<string, string> = {}): PhaselogProcess {
  const proc = runPhaselog(
    ['start'],
    cleanEnv({
      PHASELOG_ROLE: 'api',
      PHASELOG_STATE_DIR: stateDir,
      PHASELOG_PORT: '0',
      DATABASE_URL: db.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: uniquePrefix('start-log'),
      ...extra,
    }),
  );
  running.push(proc);
  return proc;
}

describe('phaselog start output', () => {
  it('names the UI, GraphiQL and GraphQL URLs in JSON lines when stdout is a pipe, and each answers', async () => {
    const proc = startApi();
    const line = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 90_000);
    const { ui, graphiql, graphql } = line as { ui: string; graphiql: string; graphql: string };
    expect(ui).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(graphql).toBe(`${ui}graphql`);
    expect(graphiql).toBe(graphql);

    const page = await fetch(ui, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    const graphiqlPage = await fetch(graphiql, { headers: { accept: 'text/html' } });
    expect(await graphiqlPage.text()).toContain('phaselog GraphiQL');
    // What the CLI does with PHASELOG_URL set to the printed endpoint.
    const answer = await fetch(graphql, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(await answer.json()).toEqual({ data: { __typename: 'Query' } });

    // Every line on stdout is one JSON object.
    for (const text of proc.stdout().split('\n').filter(Boolean))
      expect(() => JSON.parse(text) as unknown, text).not.toThrow();
    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 15_000)).toBe(0);
  }, 120_000);

  it('writes text a person reads with PHASELOG_LOG_FORMAT=pretty, without GraphiQL when it is off', async () => {
    const proc = startApi({ PHASELOG_LOG_FORMAT: 'pretty', PHASELOG_CONFIG: path.join(stateDir, 'no-graphiql.yaml') });
    await waitFor(() => proc.stdout().includes('phaselog started') || proc.child.exitCode !== null, {
      timeoutMs: 90_000,
      intervalMs: 100,
      what: 'the pretty start-up lines',
    });
    const out = proc.stdout();
    expect(out, proc.stderr()).toMatch(
      /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: phaselog API listening \{"ui":"http:\/\/127\.0\.0\.1:\d+\/","graphql":"http:\/\/127\.0\.0\.1:\d+\/graphql"\}$/m,
    );
    expect(out).not.toContain('graphiql');
    expect(out.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 15_000)).toBe(0);
  }, 120_000);
});
