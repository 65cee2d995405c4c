/** GraphiQL for browsers, bundled from local packages (no CDN); off means Apollo's CSRF rules answer. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { startTestApi, type TestApi } from './helpers.ts';

let database: TestDatabase;
let db: Db;
let withUi: TestApi;
let withoutUi: TestApi;

beforeAll(async () => {
  database = await createTestDatabase('gql_graphiql');
  db = createDb(database.url, { poolSize: 2 });
  withUi = await startTestApi({ db, anonymousRead: true, graphiql: true });
  withoutUi = await startTestApi({ db, anonymousRead: true });
});

afterAll(async () => {
  await withUi?.close();
  await withoutUi?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('GraphiQL', () => {
  it('serves a page to a browser whose script and styles come from this server', async () => {
    const page = await fetch(withUi.url, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<script src="/graphql?graphiql=app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);

    const script = await fetch(`${withUi.url}?graphiql=app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain('graphiql');
    const styles = await fetch(`${withUi.url}?graphiql=app.css`);
    expect(styles.status).toBe(200);
    expect((await styles.text()).length).toBeGreaterThan(10_000);
  }, 60_000);

  it('leaves GET requests to Apollo when it is off (CSRF prevention refuses a plain GET)', async () => {
    const page = await fetch(withoutUi.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(400);
  });
});
