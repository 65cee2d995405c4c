/**
 * The web UI as a person uses it, against `phaselog start` with the demo clusters and tokens
 * required: sign in, the fleet board in both layouts, a status change arriving live (made through
 * the emulated cluster's API), time travel on the phase page, the gate, a token restricted to one
 * namespace, the clusters page, a report run and downloaded; axe-core on each page; screenshots in test-output/ui-*.png.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenInDatabase } from '../../src/auth/tokens.ts';
import { launchBrowser, TEST_OUTPUT } from '../helpers/browser.ts';
import { seriousAxeViolations } from '../helpers/axe.ts';
import {
  demoClusterApi,
  PROGRESS_DEADLINE_EXCEEDED,
  PROGRESSED,
  removeInventoryEntry,
  setDeploymentImage,
  setDeploymentProgressing,
} from '../helpers/demo-cluster.ts';
import { cleanEnv, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-ui-'));
let database: TestDatabase;
let proc: PhaselogProcess | undefined;
let browser: Browser;
let base: string;
let readerSecret: string;
let shopSecret: string;

beforeAll(async () => {
  database = await createTestDatabase('web_ui');
  readerSecret = (await createTokenInDatabase(database.url, { name: 'ui-reader', scopes: ['read'] })).secret;
  shopSecret = (
    await createTokenInDatabase(database.url, { name: 'shop-reader', scopes: ['read'], namespaces: ['shop'] })
  ).secret;
  proc = runPhaselog(
    ['start'],
    cleanEnv({
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: uniquePrefix('web-ui'),
      PHASELOG_STATE_DIR: stateDir,
      PHASELOG_PORT: '0',
      PHASELOG_DEMO: 'true',
      PHASELOG_ANONYMOUS_READ: 'false',
    }),
  );
  const line = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 90_000);
  base = String(line.ui).replace(/\/$/, '');
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  proc?.child.kill('SIGTERM');
  await proc?.exited;
  await database?.drop();
  rmSync(stateDir, { recursive: true, force: true });
});

/** A new page signed in with `secret` through the sign-in form. */
async function signedInPage(secret: string, url = '/'): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (request) => {
    if (!request.url().startsWith(base) && !request.url().startsWith('data:'))
      throw new Error(`the UI asked another origin: ${request.url()}`);
  });
  await page.goto(base + url);
  await page.getByLabel('API token').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('signed in as').waitFor();
  return page;
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousAxeViolations(page)).toEqual([]);
}

const checkout = { namespace: 'shop', name: 'checkout' };
const cell = (page: Page, cluster: string, phase: string) =>
  page.locator(`td.cell[data-cluster="${cluster}"][data-phase="${phase}"]`);

describe('the web UI', () => {
  it('lists the demo phases in both layouts and shows a status change live, without a reload', async () => {
    const page = await signedInPage(readerSecret);
    const checkoutCell = cell(page, 'demo-staging', 'argocd/checkout');
    await expect.poll(() => checkoutCell.getAttribute('data-status'), { timeout: 30_000 }).toBe('Current');
    expect(await page.locator('td.cell').count()).toBe(9); // 3 phases in both clusters, one shop-base each, staging's LCM owner phase
    for (const name of [
      'argocd/checkout',
      'flux-system/worker',
      'shop/api',
      'shop/staging-shop-base',
      'shop/prod-shop-base',
    ]) {
      await expect.poll(() => page.locator('table.matrix tbody th').allInnerTexts()).toContain(name);
    }
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-board-matrix.png'), fullPage: true });
    await expectAccessible(page);

    // A mark in the page's global scope: a reload would drop it.
    await page.evaluate('window.notReloaded = true');
    await setDeploymentProgressing(demoClusterApi(stateDir, 'demo-staging'), checkout, PROGRESS_DEADLINE_EXCEEDED);
    await expect.poll(() => checkoutCell.getAttribute('data-status'), { timeout: 30_000 }).toBe('Failed');
    await expect.poll(() => checkoutCell.innerText()).toContain('Failed');
    // The event carries no worst resource: the re-read of the phases it named fills it in.
    await expect
      .poll(() => checkoutCell.locator('.tip').textContent(), { timeout: 15_000 })
      .toMatch(/^Deployment shop\/checkout: Failed/);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-board-failed.png'), fullPage: true });
    await setDeploymentProgressing(demoClusterApi(stateDir, 'demo-staging'), checkout, PROGRESSED);
    await expect.poll(() => checkoutCell.getAttribute('data-status'), { timeout: 30_000 }).toBe('Current');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    await expect.poll(() => page.locator('.live').innerText()).toContain('Live');

    await page.getByLabel('Layout').selectOption('list');
    await expect.poll(() => page.url()).toContain('layout=list');
    const rows = page.locator('table.list tbody tr');
    await expect.poll(() => rows.count()).toBe(9);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-board-list.png'), fullPage: true });
    await expectAccessible(page);
    await page.goBack();
    await expect.poll(() => page.locator('table.matrix').count()).toBe(1);
    await page.close();
  }, 120_000);

  it('travels back in time on the phase page to the Failed status, answers the gate, and shows a new failure live', async () => {
    const page = await signedInPage(readerSecret, '/phases/demo-staging/argocd/checkout');
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await page.locator('svg.timeline').waitFor();
    // The change log's row of the change to Failed: its time opens the phase as it was then.
    await page.locator('tr[data-scope="phase"][data-to="Failed"] button').first().click();
    await expect.poll(() => page.url()).toContain('at=');
    await page.getByText('back to live').waitFor();
    const now = page.locator('section.now');
    await expect.poll(() => now.innerText()).toContain('Failed');
    expect(await page.locator('table[aria-label="Resources"] tr[data-status="Failed"]').innerText()).toContain(
      'Deployment',
    );
    // The Application records each member's sync status: the Applied column shows it.
    expect(await page.locator('table[aria-label="Resources"] thead').innerText()).toContain('Applied');
    expect(await page.locator('table[aria-label="Resources"] tr[data-status="Failed"]').innerText()).toContain(
      'Synced',
    );
    expect(await now.innerText()).toMatch(/manifest [0-9a-f]{12}/);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-phase-at.png'), fullPage: true });
    await expectAccessible(page);

    await page.getByText('back to live').click();
    await expect.poll(() => now.innerText()).toContain('Current');
    await page.getByRole('button', { name: 'Check gate' }).click();
    await expect.poll(() => page.locator('.gate').innerText()).toMatch(/not passed|passed/);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-phase.png'), fullPage: true });
    await expectAccessible(page);

    // Live on the phase page too: a failure arrives without a reload.
    await setDeploymentProgressing(demoClusterApi(stateDir, 'demo-staging'), checkout, PROGRESS_DEADLINE_EXCEEDED);
    await expect.poll(() => now.innerText(), { timeout: 30_000 }).toContain('Failed');
    await setDeploymentProgressing(demoClusterApi(stateDir, 'demo-staging'), checkout, PROGRESSED);
    await expect.poll(() => now.innerText(), { timeout: 30_000 }).toContain('Current');
    await page.close();
  }, 60_000);

  it('shows the changed entries of a manifest version, the content diff of its inventory object and of each changed member', async () => {
    const staging = demoClusterApi(stateDir, 'demo-staging');
    // A new image, recorded before the inventory changes: the next version shows it as a revised member.
    await setDeploymentImage(staging, { namespace: 'shop', name: 'frontend' }, 'main', 'nginx:1.28');
    await removeInventoryEntry(
      staging,
      { namespace: 'shop', name: 'inventory-staging-shop-base' },
      'shop_frontend__ConfigMap',
    );
    const versions = async () => {
      const response = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${readerSecret}` },
        body: JSON.stringify({
          query:
            '{ phase(cluster: "demo-staging", namespace: "shop", name: "staging-shop-base") { manifests { edges { cursor } } } }',
        }),
      });
      return ((await response.json()) as { data: { phase: { manifests: { edges: unknown[] } } } }).data.phase.manifests
        .edges.length;
    };
    await expect.poll(versions, { timeout: 30_000 }).toBe(2);
    const page = await signedInPage(readerSecret, '/phases/demo-staging/shop/staging-shop-base');
    const section = page.locator('section[aria-labelledby="manifests-title"]');
    await section.getByRole('button', { name: 'Show diff' }).click();
    await expect.poll(() => page.url()).toContain('diff=');
    expect(await section.innerText()).toContain('removed: ConfigMap/shop/frontend');
    const inventory = section.getByLabel('Unified diff of the inventory object');
    expect((await inventory.locator('.diff-del').allInnerTexts()).join('\n')).toContain('"shop_frontend__ConfigMap"');
    expect(await inventory.locator('.diff-add').count()).toBe(0);

    // Each member change is a collapsible block, named with a +/−/~ marker and the word, not by colour.
    const deployment = section.locator('details.member-diff', { hasText: '~ apps/Deployment/shop/frontend (changed)' });
    await deployment.locator('summary').click();
    const lines = deployment.getByLabel('Unified diff of apps/Deployment/shop/frontend');
    expect(await lines.locator('.diff-del').allInnerTexts()).toEqual(['-      - image: nginx:1.27\n']);
    // The image was set through the API, which also fills in the update-strategy default the
    // in-process seed left out: those lines are added too.
    expect(await lines.locator('.diff-add').allInnerTexts()).toContain('+      - image: nginx:1.28\n');
    const configMap = section.locator('details.member-diff', { hasText: '− ConfigMap/shop/frontend (removed)' });
    await configMap.locator('summary').click();
    const removedLines = await configMap.locator('pre.diff .diff-del').allInnerTexts();
    expect(removedLines.length).toBeGreaterThan(3);
    expect(await configMap.locator('pre.diff .diff-add').count()).toBe(0);
    // The change log names objects as the CLI does: no empty group or namespace left as a slash.
    const log = await page.locator('section[aria-labelledby="log-title"] tbody').innerText();
    expect(log).toContain('ConfigMap/shop/frontend');
    expect(log).toContain('Namespace/shop');
    // (Messages may hold URLs, as a health check's does: those are not refs.)
    expect(log.replace(/https?:\/\/\S+/g, '')).not.toMatch(/(^|\s)\/|\/\//);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-phase-manifest-diff.png'), fullPage: true });
    await expectAccessible(page);
    await page.close();
  }, 60_000);

  it('shows a token restricted to a namespace only that namespace, and says who is signed in', async () => {
    const page = await signedInPage(shopSecret);
    await page.locator('td.cell').first().waitFor();
    expect(await page.locator('header').innerText()).toContain('signed in as shop-reader');
    expect(await page.locator('header').innerText()).toContain('namespaces shop');
    const phases = await page.locator('td.cell').evaluateAll((cells) => cells.map((c) => c.getAttribute('data-phase')));
    expect(phases.length).toBe(4);
    expect(phases.every((name) => name?.startsWith('shop/'))).toBe(true);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-board-restricted.png'), fullPage: true });

    await page.getByRole('link', { name: 'Clusters', exact: true }).click();
    await page.getByRole('heading', { name: 'Clusters' }).waitFor();
    await expect.poll(() => page.locator('table[aria-label="Clusters"] tbody tr').count()).toBe(2);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-clusters.png'), fullPage: true });
    await expectAccessible(page);
    await page.close();
  }, 60_000);
  it('runs an audit report for the last hour inline, downloads it as CSV, and says a restricted token may not list stored reports', async () => {
    const page = await signedInPage(readerSecret);
    await page.getByRole('link', { name: 'Reports', exact: true }).click();
    await page.getByRole('heading', { name: 'Reports', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'From', exact: true }).fill('1h');
    await page.getByRole('button', { name: 'Run report' }).click();
    await expect.poll(() => page.url()).toContain('from=1h');
    const checkoutRow = page.locator('table.report-phases tr[data-phase="demo-staging/argocd/checkout"]');
    await checkoutRow.waitFor({ timeout: 30_000 });
    // The earlier tests failed checkout on demo-staging and restored it: a failure, restored, with its cause.
    expect(await checkoutRow.innerText()).toMatch(/1 \(1 restored\)|[2-9] \(\d restored\)/);
    const incidents = page.getByRole('table', { name: 'Departures from Current, newest first' });
    expect(await incidents.innerText()).toContain('Deployment');
    expect(await page.locator('.cli code').first().innerText()).toBe('phaselog report --from 1h --out report.html');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the report as CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^phaselog-report-.*\.csv$/);
    const csv = readFileSync(await download.path(), 'utf8');
    expect(csv.split(/\r?\n/)[0]).toMatch(/^id,cluster,namespace,name,source,observed_ms,/);
    expect(csv).toContain('demo-staging,argocd,checkout');

    // A stored report, as the report worker keeps one, opens in the page (its HTML sandboxed).
    const sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    const params = {
      schedule: 'weekly',
      from: '2026-11-16T00:00:00.000Z',
      to: '2026-11-23T00:00:00.000Z',
      clusters: [],
      namespaces: ['shop'],
      phases: [],
    };
    await sql.query(
      `INSERT INTO "Report" ("params", "format", "content") VALUES ($1, 'html', '<!doctype html><title>Weekly</title><h1>Weekly audit of shop</h1>')`,
      [params],
    );
    await sql.end();
    await page.reload();
    const stored = page.locator('section[aria-labelledby="stored-title"]');
    await stored.getByRole('link', { name: /HTML/ }).click();
    await expect.poll(() => page.url()).toContain('stored=');
    expect(await stored.innerText()).toContain(
      'schedule weekly · 2026-11-16 00:00:00 to 2026-11-23 00:00:00 UTC · namespaces shop',
    );
    await page
      .frameLocator('iframe[title="Stored report"]')
      .getByRole('heading', { name: 'Weekly audit of shop' })
      .waitFor();
    await stored.screenshot({ path: path.join(TEST_OUTPUT, 'ui-reports-stored.png') });
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'ui-reports.png'), fullPage: true });
    await expectAccessible(page);

    // A deep link runs the same report again, in a new page.
    const again = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await again.goto(page.url());
    await again.getByLabel('API token').fill(readerSecret);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again
      .locator('table.report-phases tr[data-phase="demo-staging/argocd/checkout"]')
      .waitFor({ timeout: 30_000 });
    expect(await again.getByRole('textbox', { name: 'From', exact: true }).inputValue()).toBe('1h');
    await again.close();
    await page.close();

    const restricted = await signedInPage(shopSecret, '/reports');
    await expect
      .poll(() => restricted.locator('section[aria-labelledby="stored-title"]').innerText())
      .toContain('only an unrestricted token may list them');
    await restricted.close();
  }, 90_000);
});
