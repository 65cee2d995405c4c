/** GraphiQL as a person uses it: Chromium opens /graphql, types a query, runs it, sees the answer. */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/store/prisma.ts';
import type { Db } from '../../src/store/prisma.ts';
import { createTestDatabase } from '../helpers/services.ts';
import type { TestDatabase } from '../helpers/services.ts';
import { launchBrowser, TEST_OUTPUT } from '../helpers/browser.ts';
import { startTestApi } from '../integration/graphql/helpers.ts';
import type { TestApi } from '../integration/graphql/helpers.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let browser: Browser;

beforeAll(async () => {
  database = await createTestDatabase('graphiql_browser');
  db = createDb(database.url, { poolSize: 2 });
  await db.cluster.create({ data: { name: 'seen-in-graphiql', labels: {} } });
  api = await startTestApi({ db, anonymousRead: true, graphiql: true });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('GraphiQL in a browser', () => {
  it('loads from local assets and runs a query', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const external: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(new URL(api.url).origin)) external.push(request.url());
    });
    await page.goto(api.url);
    const editor = page.locator('.graphiql-query-editor .CodeMirror').first();
    await editor.waitFor({ timeout: 60_000 });
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type('{ clusters { name } }');
    await page.locator('.graphiql-execute-button').click();
    const response = page.locator('.graphiql-response');
    await expect.poll(async () => response.innerText(), { timeout: 30_000 }).toContain('seen-in-graphiql');
    await page.screenshot({ path: path.join(TEST_OUTPUT, 'graphiql.png') });
    expect(external).toEqual([]);
    await page.close();
  }, 120_000);
});
