/**
 * phaselog's HTTP listener: `/healthz` (the process is up), `/readyz` (database, Redis and
 * migrations are OK) and the GraphQL endpoint on `/graphql` (HTTP and WebSocket).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { refusalBody, type RequestGuard } from './origin.ts';

/** One readiness check: resolves to nothing when OK, throws (or rejects) with the reason otherwise. */
export type ReadinessCheck = () => Promise<void>;

export interface HttpServerOptions {
  host: string;
  port: number;
  log: Logger;
  readiness: Record<string, ReadinessCheck>;
  /** Time a readiness check may take before it counts as failed. @default 2000 */
  readinessTimeoutMs?: number;
  /**
   * Checks `Host` and `Origin` of every request but the probes (see origin.ts). Probes are exempt:
   * kubelet sends the pod's address as `Host`, and they answer nothing a page could use. @default none
   */
  guard?: RequestGuard;
}

export interface HttpServer {
  server: Server;
  /** The URL it listens on, e.g. http://127.0.0.1:4000 */
  url: string;
  /** Route requests for this path to a handler (the GraphQL endpoint). */
  mount(path: string, handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void;
  /** Start listening. */
  listen(): Promise<void>;
  /** Stop accepting, let in-flight requests finish for up to `graceMs`, then cut the rest. */
  close(graceMs: number): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function withTimeout(check: ReadinessCheck, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    check().then(
      () => (clearTimeout(timer), resolve()),
      (error: unknown) => (clearTimeout(timer), reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const { log } = options;
  const mounts = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>();
  let closing = false;

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/healthz') {
      sendJson(res, 200, { status: 'ok' });
      return;
    }
    if (path === '/readyz') {
      void (async () => {
        const checks = await Promise.all(
          Object.entries(options.readiness).map(async ([name, check]) => {
            try {
              await withTimeout(check, options.readinessTimeoutMs ?? 2000);
              return [name, { ok: true }] as const;
            } catch (error) {
              return [name, { ok: false, error: (error as Error).message }] as const;
            }
          }),
        );
        const ready = !closing && checks.every(([, c]) => c.ok);
        sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : closing ? 'shutting down' : 'not ready', checks: Object.fromEntries(checks) });
      })();
      return;
    }
    const refusal = options.guard?.(req);
    if (refusal !== undefined) {
      log.info({ code: refusal.code, host: req.headers.host, origin: req.headers.origin, path }, 'request refused');
      res.writeHead(refusal.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      res.end(refusalBody(refusal));
      return;
    }
    const handler = mounts.get(path);
    if (handler) {
      if (closing) res.setHeader('connection', 'close');
      handler(req, res).catch((error: unknown) => {
        log.error({ err: error, path }, 'request failed');
        if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
        else res.end();
      });
      return;
    }
    sendJson(res, 404, { error: `no route for ${path}`, routes: ['/healthz', '/readyz', ...mounts.keys()] });
  });
  server.keepAliveTimeout = 5_000;

  const self: HttpServer = {
    server,
    url: '',
    mount: (path, handler) => void mounts.set(path, handler),
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          self.url = `http://${host}:${address.port}`;
          resolve();
        });
      }),
    async close(graceMs) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
  return self;
}
