/** The HTML audit report as a person sees it: rendered by Chromium, timelines drawn, screenshot saved. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeAuditReport, renderHtml } from '../../src/reports/index.ts';
import type { AuditInput } from '../../src/reports/index.ts';
import { launchBrowser, TEST_OUTPUT } from '../helpers/browser.ts';

const t = (hhmm: string) => new Date(`2026-11-17T${hhmm}:00Z`);
const input: AuditInput = {
  range: { from: t('00:00'), to: t('12:00') },
  clusters: [{ name: 'prod', reachability: [{ reachable: true, from: t('00:00'), to: t('08:00') }, { reachable: false, from: t('08:00'), to: t('09:00') }, { reachable: true, from: t('09:00'), to: null }] }],
  phases: [
    {
      id: '1', cluster: 'prod', namespace: 'flux-system', name: 'shop <script>alert(1)</script>', source: 'flux',
      statusIntervals: [
        { status: 'Current', from: t('00:00'), to: t('03:00'), stale: false },
        { status: 'InProgress', from: t('03:00'), to: t('04:00'), stale: false },
        { status: 'Failed', from: t('04:00'), to: t('06:00'), stale: false },
        { status: 'Current', from: t('06:00'), to: t('08:00'), stale: false },
        { status: 'Current', from: t('08:00'), to: t('09:00'), stale: true },
        { status: 'Current', from: t('09:00'), to: null, stale: false },
      ],
      manifestChanges: [{ at: t('03:00'), added: ['apps/Deployment/shop/web'], removed: [], revisionsChanged: [] }],
    },
    {
      id: '2', cluster: 'prod', namespace: 'argocd', name: 'checkout', source: 'argocd',
      statusIntervals: [{ status: 'Current', from: t('00:00'), to: null, stale: false }],
      manifestChanges: [],
    },
  ],
};

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('the HTML audit report in a browser', () => {
  it('draws a status timeline per phase with the statuses named, and runs no script', async () => {
    const file = path.join(TEST_OUTPUT, 'audit-report.html');
    writeFileSync(file, renderHtml(computeAuditReport(input), input));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(pathToFileURL(file).href);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'audit-report.png'), fullPage: true });

    const timelines = page.locator('svg');
    expect(await timelines.count()).toBe(2);
    const box = await timelines.first().boundingBox();
    expect(box?.width).toBeGreaterThan(200);
    expect(box?.height).toBeGreaterThan(10);
    const text = await page.locator('body').innerText();
    for (const word of ['Current', 'InProgress', 'Failed']) expect(text).toContain(word);
    expect(text).toContain('shop <script>alert(1)</script>'); // shown as text, not run
    expect(dialogs).toEqual([]);
    await page.close();
  });
});
