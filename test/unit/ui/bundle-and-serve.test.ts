/**
 * The web UI's bundle and its routes: bundled ahead of time with hashed names, rebuilt only when
 * web/ changed, its HTML answered for the app's deep links and its assets cached for good, while
 * other paths keep the server's 404.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../../../src/http/server.ts';
import { bundleUi, ensureUiBundle, isUiBundleStale, type UiPaths } from '../../../src/ui/bundle.ts';
import { createUiHandler } from '../../../src/ui/serve.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-ui-unit-'));
const paths: UiPaths = { sourceDir: path.join(dir, 'web'), outDir: path.join(dir, 'dist-ui') };
let http: HttpServer;

beforeAll(async () => {
  mkdirSync(paths.sourceDir);
  writeFileSync(path.join(paths.sourceDir, 'main.tsx'), "import './style.css';\ndocument.title = 'bundled';\n");
  writeFileSync(path.join(paths.sourceDir, 'style.css'), 'body { color: black; }\n');
  http = createHttpServer({ host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }), readiness: {} });
  http.mount('/graphql', async (_req, res) => void res.end('graphql'));
  http.fallback(createUiHandler(paths));
  await http.listen();
});

afterAll(async () => {
  await http?.close(100);
  rmSync(dir, { recursive: true, force: true });
});

describe('the web UI bundle', () => {
  it('is bundled when missing, with hashed asset names, and again only when a source is newer', async () => {
    expect(isUiBundleStale(paths)).toBe(true);
    const bundle = await bundleUi(paths);
    expect(bundle.assets).toEqual([
      expect.stringMatching(/^app-[A-Z0-9]+\.js$/),
      expect.stringMatching(/^app-[A-Z0-9]+\.css$/),
    ]);
    expect(bundle.scriptGzipBytes).toBeGreaterThan(0);
    expect(isUiBundleStale(paths)).toBe(false);
    expect(await ensureUiBundle(paths)).toBe(false);

    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(paths.sourceDir, 'style.css'), later, later);
    expect(isUiBundleStale(paths)).toBe(true);
    expect(await ensureUiBundle(paths)).toBe(true);
    expect(isUiBundleStale(paths)).toBe(false);
  });

  it('answers the app for its routes and deep links, its assets cached for good, and a 404 elsewhere', async () => {
    const { assets } = await bundleUi(paths);
    for (const route of [
      '/',
      '/clusters',
      '/reports?from=1h',
      '/phases/prod/shop/api?at=2026-11-20T14:03:12Z',
      '/ui/anything',
    ]) {
      const response = await fetch(http.url + route);
      expect(response.status, route).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(await response.text()).toContain(`/ui/assets/${assets[0]}`);
    }
    const script = await fetch(`${http.url}/ui/assets/${assets[0]}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toContain('immutable');
    expect(await script.text()).toContain('bundled');

    expect((await fetch(`${http.url}/ui/assets/app-MISSING.js`)).status).toBe(404);
    expect((await fetch(`${http.url}/ui/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${http.url}/nothing-here`)).status).toBe(404);
    expect(await (await fetch(`${http.url}/graphql`)).text()).toBe('graphql');
  });
});
