/**
 * The web UI's fleet board over a seeded fleet (bench/graphql-api.ts' seed: phases over two
 * clusters, half of them InProgress with a worst resource), in headless Chromium against the API
 * server in its own process: from navigation to the matrix drawn, with the board's GraphQL query
 * (as the browser timed it) and the rendering after its answer reported apart; and the size of the
 * board's script, gzipped (the budget is 250 KB).
 *
 *   node --import tsx bench/ui-board.ts
 */
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../test/helpers/browser.ts';
import { bundleUi } from '../src/ui/bundle.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { seed } from './graphql-api.ts';
import { printFigures } from './lib/cli.ts';
import { startReadyChild } from './lib/child-server.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';

export interface UiBoardBenchOptions {
  /** Phases seeded (over two clusters). @default 1000 */
  phases?: number;
  /** Resources per phase. @default 10 */
  resources?: number;
  /** Status intervals per phase. @default 5 */
  intervals?: number;
  /** Board loads measured, each in a fresh browser context (after one untimed). @default 7 */
  loads?: number;
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

async function loadBoard(browser: Browser, base: string, secret: string, rows: number): Promise<LoadTiming> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(`sessionStorage.setItem('phaselog.token', ${JSON.stringify(secret)})`);
  const page = await context.newPage();
  try {
    await page.goto(base + '/', { waitUntil: 'commit' });
    // Counted in the page, frame by frame: no polling latency from the test side in the figure.
    const script = `new Promise((resolve) => { const check = () => document.querySelectorAll('table.matrix tbody tr').length >= ${rows} ? resolve(performance.now()) : requestAnimationFrame(check); check(); })`;
    const drawn = (await page.evaluate(script)) as number;
    const entries = (await page.evaluate(`performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/graphql')).map((e) => ({ start: e.requestStart, end: e.responseEnd, size: e.encodedBodySize }))`)) as { start: number; end: number; size: number }[];
    const board = entries.reduce((a, b) => (b.size > a.size ? b : a));
    return { drawn, query: board.end - board.start, render: drawn - board.end };
  } finally {
    await context.close();
  }
}

export async function run(options: UiBoardBenchOptions = {}): Promise<Figures> {
  const phases = options.phases ?? 1000;
  const loads = options.loads ?? 7;
  const bundle = await bundleUi();
  const database = await createScratchDatabase('ui_board');
  process.env['NODE_ENV'] ??= 'production';
  try {
    await migrateDatabase(database.connectionString);
    const seeded = await seed(database.connectionString, phases, options.resources ?? 10, options.intervals ?? 5);
    const api = await startReadyChild(SERVER_FILE, [JSON.stringify({ databaseUrl: database.connectionString })], 60_000);
    const browser = await launchBrowser();
    try {
      const base = new URL(api.ready.url).origin;
      // The seed names phase-00000.. in two clusters, each name once: one matrix row per phase.
      await loadBoard(browser, base, seeded.secret, phases);
      const timings: LoadTiming[] = [];
      for (let i = 0; i < loads; i++) timings.push(await loadBoard(browser, base, seeded.secret, phases));
      return {
        'board script, gzipped (KB)': round(bundle.scriptGzipBytes / 1000),
        'board script, minified (KB)': round(bundle.scriptBytes / 1000),
        [`${phases} phases: navigation -> matrix drawn, median ms`]: round(median(timings.map((t) => t.drawn))),
        [`${phases} phases: board GraphQL query (browser-timed), median ms`]: round(median(timings.map((t) => t.query))),
        [`${phases} phases: render after the answer, median ms`]: round(median(timings.map((t) => t.render))),
      };
    } finally {
      await browser.close();
      await api.stop();
    }
  } finally {
    await database.drop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printFigures('Web UI fleet board', await run());
}
