/**
 * The web UI's fleet board over a seeded fleet (bench/graphql-api.ts' seed: phases over ten
 * clusters, each name in every cluster, half of them InProgress with a worst resource), in headless
 * Chromium against the API server in its own process: from navigation to the matrix drawn, with the
 * board's GraphQL query (as the browser timed it) and the rendering after its answer reported apart;
 * the size of the board's script, gzipped (the budget is 250 KB). Then live, on an open board:
 * status changes committed and published as a worker does (bench/ui-board-live.ts), one at a time
 * (commit to the cell's DOM showing it), and streamed at a steady rate (the page's long tasks).
 *
 *   node --import tsx bench/ui-board.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { createChangePublisher, type ChangePublisher } from '../src/pubsub/change-publisher.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { bundleUi } from '../src/ui/bundle.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { seed } from './graphql-api.ts';
import { printFigures } from './lib/cli.ts';
import { startReadyChild } from './lib/child-server.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { BENCH_REDIS_URL, benchPrefix } from './lib/redis-scratch.ts';
import { median, percentile, round } from './lib/stats.ts';
import {
  cellKey,
  commitChanges,
  loadLivePhases,
  longTasksSince,
  PAGE_PROBE,
  shownAt,
  type LivePhase,
} from './ui-board-live.ts';
import type { Figures } from './lib/types.ts';

export interface UiBoardBenchOptions {
  /** Phases seeded, each name in every cluster. @default 1000 */
  phases?: number;
  /** Clusters the phases are spread over. @default 10 */
  clusters?: number;
  /** Resources per phase. @default 10 */
  resources?: number;
  /** Status intervals per phase. @default 5 */
  intervals?: number;
  /** Board loads measured, each in a fresh browser context (after one untimed). @default 7 */
  loads?: number;
  /** Changes timed one at a time from commit to the board's cell. @default 100 */
  changes?: number;
  /** Changes per second streamed while long tasks are watched, as 10 commits a second. @default 100 */
  streamRate?: number;
  /** Seconds the stream lasts. @default 5 */
  streamSeconds?: number;
}

const SERVER_FILE = fileURLToPath(new URL('./graphql-api-server.ts', import.meta.url));

interface LoadTiming {
  /** ms from navigation start to the matrix holding every row. */
  drawn: number;
  /** The board query as the browser timed it (request start to response end). */
  query: number;
  /** ms from the board query's answer to the matrix drawn (parsing, React render, layout). */
  render: number;
}

/** A fresh browser context signed in with `secret`, on a new page (with `probe` run before the app). */
async function openPage(browser: Browser, secret: string, probe = ''): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(`sessionStorage.setItem('phaselog.token', ${JSON.stringify(secret)});${probe}`);
  return context.newPage();
}

/** Resolves (in the page's clock) once the matrix shows `cells` phases. */
function matrixDrawn(page: Page, cells: number): Promise<number> {
  // Counted in the page, frame by frame: no polling latency from the test side in the figure.
  return page.evaluate(
    `new Promise((resolve) => { const check = () => document.querySelectorAll('table.matrix td.cell').length >= ${cells} ? resolve(performance.now()) : requestAnimationFrame(check); check(); })`,
  ) as Promise<number>;
}

async function loadBoard(browser: Browser, base: string, secret: string, cells: number): Promise<LoadTiming> {
  const page = await openPage(browser, secret);
  const context = page.context();
  try {
    await page.goto(base + '/', { waitUntil: 'commit' });
    const drawn = await matrixDrawn(page, cells);
    const entries = (await page.evaluate(
      `performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/graphql')).map((e) => ({ start: e.requestStart, end: e.responseEnd, size: e.encodedBodySize }))`,
    )) as { start: number; end: number; size: number }[];
    const board = entries.reduce((a, b) => (b.size > a.size ? b : a));
    return { drawn, query: board.end - board.start, render: drawn - board.end };
  } finally {
    await context.close();
  }
}

interface LiveFigures {
  /** Commit -> cell, one change at a time, ms. */
  single: number[];
  /** Commit of its batch -> cell, for every streamed change, ms. */
  streamed: number[];
  /** Changes per second actually committed during the stream. */
  streamRate: number;
  /** Long tasks (> 50 ms, Chromium's definition) from the stream's start until the board settled. */
  longTasks: number[];
}

/** On an open board: changes one at a time, then a steady stream; see the module comment. */
async function measureLive(
  page: Page,
  sql: pg.Client,
  publisher: ChangePublisher,
  fleet: LivePhase[],
  options: { changes: number; rate: number; seconds: number },
): Promise<LiveFigures> {
  await page.waitForFunction(`document.querySelector('.live')?.textContent.includes('Live')`, undefined, {
    timeout: 30_000,
  });
  await page.evaluate('window.__watchBoard()');
  // Every phase turns Failed once (the seed has none): each change is a cell's first Failed.
  let next = 0;
  const take = () => {
    const phase = fleet[next++];
    if (!phase) throw new Error(`the fleet has ${fleet.length} phases: too few for the changes asked`);
    return phase;
  };
  const single: number[] = [];
  for (let i = 0; i <= options.changes; i++) {
    const phase = take();
    const committedAt = await commitChanges(sql, publisher, [{ phase, toStatus: 'Failed' }]);
    const latency = (await shownAt(page, cellKey(phase, 'Failed'), 30_000)) - committedAt;
    // The first one is a warm-up (the subscription's first event, code paths not yet compiled).
    if (i > 0) single.push(latency);
  }
  // The re-read the board does after a burst: let it land before the stream starts.
  await sleep(2_000);
  const perBatch = Math.max(1, Math.round(options.rate / 10));
  const batches = Math.round(options.seconds * 10);
  const pageStart = (await page.evaluate('performance.now()')) as number;
  const started = performance.now();
  const sent: { phase: LivePhase; committedAt: number }[] = [];
  for (let b = 0; b < batches; b++) {
    await sleep(Math.max(0, started + b * 100 - performance.now()));
    const batch = Array.from({ length: perBatch }, () => ({ phase: take(), toStatus: 'Failed' }));
    const committedAt = await commitChanges(sql, publisher, batch);
    for (const { phase } of batch) sent.push({ phase, committedAt });
  }
  const streamRate = (sent.length / (performance.now() - started)) * 1000;
  const streamed: number[] = [];
  for (const { phase, committedAt } of sent)
    streamed.push((await shownAt(page, cellKey(phase, 'Failed'), 30_000)) - committedAt);
  // The board re-reads itself after a burst of changes: its render counts too.
  await sleep(3_000);
  const longTasks = (await longTasksSince(page, pageStart)).map((t) => t.duration);
  return { single, streamed, streamRate, longTasks };
}

export async function run(options: UiBoardBenchOptions = {}): Promise<Figures> {
  const phases = options.phases ?? 1000;
  const clusters = options.clusters ?? 10;
  const loads = options.loads ?? 7;
  const changes = options.changes ?? 100;
  const rate = options.streamRate ?? 100;
  const seconds = options.streamSeconds ?? 5;
  const bundle = await bundleUi();
  const database = await createScratchDatabase('ui_board');
  const prefix = benchPrefix('ui-board');
  const publisher = createChangePublisher(BENCH_REDIS_URL, { prefix });
  const sql = new pg.Client({ connectionString: database.connectionString });
  process.env['NODE_ENV'] ??= 'production';
  try {
    await migrateDatabase(database.connectionString);
    const seeded = await seed(database.connectionString, phases, options.resources ?? 10, options.intervals ?? 5, {
      clusters,
      names: 'every-cluster',
    });
    await sql.connect();
    const api = await startReadyChild(
      SERVER_FILE,
      [JSON.stringify({ databaseUrl: database.connectionString, redisUrl: BENCH_REDIS_URL, channelPrefix: prefix })],
      60_000,
    );
    const browser = await launchBrowser();
    try {
      const base = new URL(api.ready.url).origin;
      await loadBoard(browser, base, seeded.secret, phases);
      const timings: LoadTiming[] = [];
      for (let i = 0; i < loads; i++) timings.push(await loadBoard(browser, base, seeded.secret, phases));

      const page = await openPage(browser, seeded.secret, PAGE_PROBE);
      await page.goto(base + '/');
      await matrixDrawn(page, phases);
      // Spread over the clusters (the seed puts consecutive phases in consecutive clusters).
      const live = await measureLive(page, sql, publisher, await loadLivePhases(sql), { changes, rate, seconds });
      await page.context().close();
      const fleet = `${phases} phases (${phases / clusters} names x ${clusters} clusters)`;
      return {
        'board script, gzipped (KB)': round(bundle.scriptGzipBytes / 1000),
        'board script, minified (KB)': round(bundle.scriptBytes / 1000),
        [`${fleet}: navigation -> matrix drawn, median ms`]: round(median(timings.map((t) => t.drawn))),
        [`${fleet}: board GraphQL query (browser-timed), median ms`]: round(median(timings.map((t) => t.query))),
        [`${fleet}: render after the answer, median ms`]: round(median(timings.map((t) => t.render))),
        [`live: ${changes} changes one at a time, commit -> cell in the DOM, p50 ms`]: round(
          percentile(live.single, 0.5),
        ),
        [`live: ${changes} changes one at a time, commit -> cell in the DOM, p95 ms`]: round(
          percentile(live.single, 0.95),
        ),
        [`live: ${changes} changes one at a time, commit -> cell in the DOM, max ms`]: round(Math.max(...live.single)),
        [`stream of ${rate}/s for ${seconds} s: changes/s committed`]: round(live.streamRate),
        [`stream: commit -> cell in the DOM, p95 ms`]: round(percentile(live.streamed, 0.95)),
        [`stream: long tasks (> 50 ms) until settled`]: live.longTasks.length,
        [`stream: long tasks > 100 ms`]: live.longTasks.filter((d) => d > 100).length,
        [`stream: longest task ms`]: round(Math.max(0, ...live.longTasks)),
      };
    } finally {
      await browser.close();
      await api.stop();
    }
  } finally {
    await sql.end().catch(() => undefined);
    await publisher.close();
    await database.drop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printFigures('Web UI fleet board', await run());
}
