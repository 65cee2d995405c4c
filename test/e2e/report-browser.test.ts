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
const web = 'apps/Deployment/shop/web';
const input: AuditInput = {
  range: { from: t('00:00'), to: t('12:00') },
  clusters: [
    {
      name: 'prod',
      reachability: [
        { reachable: true, from: t('00:00'), to: t('08:00') },
        { reachable: false, from: t('08:00'), to: t('09:00') },
        { reachable: true, from: t('09:00'), to: null },
      ],
    },
  ],
  phases: [
    {
      id: '2',
      cluster: 'prod',
      namespace: 'argocd',
      name: 'checkout',
      source: 'argocd',
      statusIntervals: [
        { status: 'Current', from: t('00:00'), to: t('10:00'), stale: false },
        {
          status: 'InProgress',
          from: t('10:00'),
          to: t('10:20'),
          stale: false,
          cause: {
            resource: 'apps/Deployment/checkout/api',
            status: 'InProgress',
            message: 'Waiting for rollout to finish: 1 of 2 updated replicas are available',
          },
        },
        { status: 'Current', from: t('10:20'), to: null, stale: false },
      ],
      manifestChanges: [
        {
          at: t('10:00'),
          inventoryChanged: false,
          added: [],
          removed: [],
          revisionsChanged: ['apps/Deployment/checkout/api'],
        },
      ],
    },
    {
      id: '1',
      cluster: 'prod',
      namespace: 'flux-system',
      name: 'shop <script>alert(1)</script>',
      source: 'flux',
      statusIntervals: [
        { status: 'Current', from: t('00:00'), to: t('03:00'), stale: false },
        {
          status: 'InProgress',
          from: t('03:00'),
          to: t('04:00'),
          stale: false,
          cause: { resource: web, status: 'InProgress', message: 'Deployment is progressing' },
        },
        {
          status: 'Failed',
          from: t('04:00'),
          to: t('06:00'),
          stale: false,
          cause: {
            resource: web,
            status: 'Failed',
            message: 'ProgressDeadlineExceeded: ReplicaSet "web-7d9" has timed out progressing',
          },
        },
        { status: 'Current', from: t('06:00'), to: t('08:00'), stale: false },
        { status: 'Current', from: t('08:00'), to: t('09:00'), stale: true },
        { status: 'Current', from: t('09:00'), to: null, stale: false },
      ],
      manifestChanges: [{ at: t('03:00'), inventoryChanged: true, added: [web], removed: [], revisionsChanged: [] }],
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
  it('draws a timeline per phase, worst first, with axis ticks, change markers and what caused each incident; runs no script', async () => {
    const file = path.join(TEST_OUTPUT, 'report-audit.html');
    writeFileSync(file, renderHtml(computeAuditReport(input), input));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(pathToFileURL(file).href);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'report-audit.png'), fullPage: true });

    const timelines = page.locator('svg.timeline');
    expect(await timelines.count()).toBe(2);
    const box = await timelines.first().boundingBox();
    expect(box?.width).toBeGreaterThan(200);
    expect(box?.height).toBeGreaterThan(10);
    // The phase that failed leads, although it came second in the input.
    expect(await page.locator('section.phase h2').allInnerTexts()).toEqual([
      'prod/flux-system/shop <script>alert(1)</script>',
      'prod/argocd/checkout',
    ]);

    // Twelve hours get a tick every two hours, labelled in UTC; the first carries the date.
    const ticks = await timelines.first().locator('g.tick text').allTextContents();
    expect(ticks).toEqual(['11-17 00:00', '02:00', '04:00', '06:00', '08:00', '10:00', '12:00']);
    const tickBoxes = await Promise.all(
      (await timelines.first().locator('g.tick text').all()).map((tick) => tick.boundingBox()),
    );
    for (let i = 1; i < tickBoxes.length; i += 1) {
      const [before, after] = [tickBoxes[i - 1], tickBoxes[i]];
      expect(before && after && before.x + before.width < after.x).toBe(true); // labels do not overlap
    }
    expect(await timelines.nth(0).locator('g.change').getAttribute('data-kind')).toBe('inventory');
    expect(await timelines.nth(1).locator('g.change').getAttribute('data-kind')).toBe('revision');
    const markerBox = await timelines.nth(0).locator('g.change polygon').boundingBox();
    // The 03:00 change sits a quarter of the way along the bar.
    expect(markerBox && box && Math.abs(markerBox.x + markerBox.width / 2 - (box.x + box.width / 4))).toBeLessThan(2);

    const incidents = page.locator('section.phase').first().locator('h3:has-text("Incidents") + table');
    expect(await incidents.locator('tbody td').allInnerTexts()).toEqual([
      '2026-11-17T03:00:00.000Z',
      '2026-11-17T06:00:00.000Z',
      '3h 0m',
      'yes',
      `${web} (Failed)`,
      'ProgressDeadlineExceeded: ReplicaSet "web-7d9" has timed out progressing',
    ]);
    const failedTip = await timelines.first().locator('g.seg[data-status="Failed"] title').textContent();
    expect(failedTip).toContain(`caused by ${web} (Failed): ProgressDeadlineExceeded`);

    const text = await page.locator('body').innerText();
    for (const word of ['Current', 'InProgress', 'Failed']) expect(text).toContain(word);
    expect(text).toContain('shop <script>alert(1)</script>'); // shown as text, not run
    expect(dialogs).toEqual([]);
    await page.close();
  });

  it('keeps a month readable: weekly ticks that do not overlap, and changes an hour apart drawn as one marker', async () => {
    const d = (day: number) => new Date(Date.UTC(2026, 9, 1) + day * 86_400_000);
    const month: AuditInput = {
      range: { from: d(0), to: d(30) },
      clusters: [],
      phases: [
        {
          id: 'm',
          cluster: 'prod',
          namespace: 'shop',
          name: 'web',
          source: 'flux',
          statusIntervals: [
            { status: 'Current', from: d(0), to: d(10), stale: false },
            {
              status: 'Failed',
              from: d(10),
              to: d(12),
              stale: false,
              cause: { resource: web, status: 'Failed', message: 'CrashLoopBackOff' },
            },
            { status: 'Current', from: d(12), to: null, stale: false },
          ],
          manifestChanges: [
            { at: d(3), inventoryChanged: true, added: ['/ConfigMap/shop/flags'], removed: [], revisionsChanged: [] },
            { at: d(3.05), inventoryChanged: false, added: [], removed: [], revisionsChanged: [web] },
            { at: d(15), inventoryChanged: false, added: [], removed: [], revisionsChanged: [web] },
          ],
        },
      ],
    };
    const file = path.join(TEST_OUTPUT, 'report-month.html');
    writeFileSync(file, renderHtml(computeAuditReport(month), month));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(pathToFileURL(file).href);
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'report-month.png'), fullPage: true });
    const timeline = page.locator('svg.timeline');
    expect(await timeline.locator('g.tick text').allTextContents()).toEqual([
      '10-01',
      '10-08',
      '10-15',
      '10-22',
      '10-29',
    ]);
    expect(
      await timeline
        .locator('g.change')
        .evaluateAll((markers) =>
          markers.map((g) => `${g.getAttribute('data-kind')} x${g.getAttribute('data-changes')}`),
        ),
    ).toEqual(['inventory x2', 'revision x1']);
    await page.close();
  });
});
