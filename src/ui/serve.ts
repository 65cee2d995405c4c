/**
 * Serves the bundled web UI: hashed assets under /ui/assets/ (cached for good: a new bundle has new
 * names), and the app's index.html for `/`, `/phases/...`, `/clusters`, `/reports` and any other `/ui/...` path
 * so that deep links and reloads land in the app, which routes on the client.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_UI_PATHS, UI_ASSET_PREFIX, type UiPaths } from './bundle.ts';

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** Paths the client-side router owns. */
export function isUiRoute(pathname: string): boolean {
  return (
    pathname === '/' ||
    pathname === '/clusters' ||
    pathname === '/reports' ||
    pathname.startsWith('/phases/') ||
    pathname.startsWith('/ui/')
  );
}

/** Answers a request for the UI; resolves false when the path is not one of its routes. */
export type UiHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export function createUiHandler(paths: Pick<UiPaths, 'outDir'> = DEFAULT_UI_PATHS): UiHandler {
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    if (!isUiRoute(pathname)) return false;
    if (pathname.startsWith(UI_ASSET_PREFIX)) {
      const name = pathname.slice(UI_ASSET_PREFIX.length);
      const type = TYPES[path.extname(name)];
      // Only the bundle's own flat file names: no directory walking.
      if (type === undefined || !/^[\w.-]+$/.test(name)) return false;
      const body = await readFile(path.join(paths.outDir, 'assets', name)).catch(() => undefined);
      if (body === undefined) return false;
      res.writeHead(200, { 'content-type': type, 'cache-control': 'public, max-age=31536000, immutable' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    }
    const html = await readFile(path.join(paths.outDir, 'index.html'), 'utf8').catch(() => undefined);
    if (html === undefined) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end('The web UI is not built: run npm run build (the server builds it at start when web/ is present).\n');
      return true;
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : html);
    return true;
  };
}
