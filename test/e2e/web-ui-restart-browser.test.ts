/**
 * An open board survives a server restart with no missed change: its subscription resumes with
 * `after:` the last seq it received, so every phase change the log holds reaches the page, once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, TEST_OUTPUT } from '../helpers/browser.ts';
import { demoClusterApi, PROGRESS_DEADLINE_EXCEEDED, setDeploymentProgressing } from '../helpers/demo-cluster.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess, freePort } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-ui-restart-'));
const redisPrefix = uniquePrefix('web-ui-restart');
let database: TestDatabase;
const running: PhaselogProcess[] = [];
let browser: Browser;
let port: number;

async function start(): Promise<PhaselogProcess> {
  const proc = runPhaselog(
    ['start'],
    cleanEnv({
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: redisPrefix,
      PHASELOG_STATE_DIR: stateDir,
      PHASELOG_PORT: String(port),
      PHASELOG_DEMO: 'true',
    }),
  );
  running.push(proc);
  await proc.waitForLog((l) => l.msg === 'phaselog API listening', 90_000);
  return proc;
}

beforeAll(async () => {
  database = await createTestDatabase('web_ui_restart');
  port = await freePort();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  for (const proc of running) proc.child.kill('SIGKILL');
  await database?.drop();
  rmSync(stateDir, { recursive: true, force: true });
});

interface ChangesPage {
  data: {
    statusChanges: { edges: { node: { seq: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  };
}

/** Every phase change the log holds, by seq. */
async function loggedPhaseSeqs(): Promise<bigint[]> {
  const seqs: bigint[] = [];
  let after: string | null = null;
  for (;;) {
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          'query($after: String) { statusChanges(filter: { scopes: [phase] }, first: 100, after: $after) { edges { node { seq } } pageInfo { hasNextPage endCursor } } }',
        variables: { after },
      }),
    });
    const page = ((await response.json()) as ChangesPage).data.statusChanges;
    seqs.push(...page.edges.map((e) => BigInt(e.node.seq)));
    if (!page.pageInfo.hasNextPage) return seqs;
    after = page.pageInfo.endCursor;
  }
}

describe('the board across a server restart', () => {
  it('reconnects by itself and receives every phase change recorded meanwhile and after, once', async () => {
    const first = await start();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // The page's WebSocket goes through the test: it records the changes the server sends, and
    // while `blocked` it refuses to connect, so that changes are recorded before the page is back.
    const received: bigint[] = [];
    let blocked = false;
    await page.routeWebSocket(/\/graphql$/, (ws) => {
      if (blocked) return ws.close({ code: 1012, reason: 'service restart (held back by the test)' });
      const server = ws.connectToServer();
      server.onMessage((message) => {
        const parsed = JSON.parse(String(message)) as {
          type: string;
          payload?: { data?: { phaseStatusChanged?: { seq: string } } };
        };
        const seq = parsed.payload?.data?.phaseStatusChanged?.seq;
        if (parsed.type === 'next' && seq) received.push(BigInt(seq));
        ws.send(message);
      });
    });
    await page.goto(`http://127.0.0.1:${port}/`);
    const live = page.locator('.live');
    await expect.poll(() => live.innerText(), { timeout: 30_000 }).toContain('Live');
    await page.evaluate('window.notReloaded = true');
    // A change the page receives before the restart: from then on it subscribes with `after:`.
    await setDeploymentProgressing(
      demoClusterApi(stateDir, 'demo-staging'),
      { namespace: 'shop', name: 'checkout' },
      PROGRESS_DEADLINE_EXCEEDED,
    );
    await expect
      .poll(
        () =>
          page
            .locator('td.cell[data-cluster="demo-staging"][data-phase="argocd/checkout"]')
            .getAttribute('data-status'),
        { timeout: 30_000 },
      )
      .toBe('Failed');
    await expect.poll(() => received.length).toBeGreaterThan(0);

    first.child.kill('SIGTERM');
    expect(await exitCodeWithin(first, 15_000)).toBe(0);
    await expect.poll(() => live.innerText(), { timeout: 15_000 }).toContain('Reconnecting');
    const receivedBeforeRestart = received.length;
    const lastBeforeRestart = received.reduce((a, b) => (a > b ? a : b), 0n);
    blocked = true;
    await start();
    // Phase changes recorded while the page cannot connect: it must get them on reconnecting.
    await expect
      .poll(async () => (await loggedPhaseSeqs()).filter((seq) => seq > lastBeforeRestart).length, { timeout: 45_000 })
      .toBeGreaterThan(0);
    blocked = false;
    await expect.poll(() => live.innerText(), { timeout: 30_000 }).toContain('Live');
    // The restarted demo crash-loops staging's worker again: changes the page must get.
    const worker = page.locator('td.cell[data-cluster="demo-staging"][data-phase="flux-system/worker"]');
    await expect.poll(() => worker.getAttribute('data-status'), { timeout: 45_000 }).toBe('Failed');
    await expect.poll(() => received.length).toBeGreaterThan(receivedBeforeRestart);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-board-after-restart.png'), fullPage: true });

    expect(await page.evaluate('window.notReloaded')).toBe(true);
    const firstSeen = received.reduce((a, b) => (a < b ? a : b));
    const lastSeen = received.reduce((a, b) => (a > b ? a : b));
    // Every change logged from the first the page received to the last, those recorded while it
    // could not connect included, in order and once each.
    const logged = (await loggedPhaseSeqs()).filter((seq) => seq >= firstSeen && seq <= lastSeen);
    expect(logged.some((seq) => seq > lastBeforeRestart)).toBe(true);
    expect(received.map(String)).toEqual(logged.map(String));
    await page.close();
  }, 150_000);
});
