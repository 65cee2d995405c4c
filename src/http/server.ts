/**
 * phaselog's HTTP listener: `/healthz` (the process is up), `/readyz` (database, Redis and
 * migrations are OK), `/metrics` (Prometheus) and the GraphQL endpoint on `/graphql` (HTTP and WebSocket).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { refusalBody, type GuardRefusal, type RequestGuard } from './origin.ts';
import { createReadiness, type ReadinessCheck } from './readiness.ts';

export { ReadinessError, type ReadinessCheck, type ReadinessCode } from './readiness.ts';

export interface HttpServerOptions {
  host: string;
  port: number;
  log: Logger;
  /** Checks behind `/readyz`; a check reports its own code by throwing a `ReadinessError`. */
  readiness: Record<string, ReadinessCheck>;
  /** Time a readiness check may take before it counts as failed (`TIMEOUT`). @default 2000 */
  readinessTimeoutMs?: number;
  /**
   * Checks `Host` and `Origin` of every request but the probes (see origin.ts). Probes are exempt:
   * kubelet sends the pod's address as `Host`, and they answer nothing a page could use. @default none
   */
  guard?: RequestGuard;
  /** Answers `/metrics` (Prometheus), after `metricsGuard`. @default none (404) */
  metrics?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /**
   * Checks `Host` of `/metrics` requests (origin.ts' `createHostGuard`): its series name every
   * cluster, namespace and phase, so a rebound page must not read them; a scraper sends the host
   * it was configured with, or a pod's address. @default none
   */
  metricsGuard?: RequestGuard;
}

export interface HttpServer {
  server: Server;
  /** The URL it listens on, e.g. http://127.0.0.1:4000 */
  url: string;
  /** Route requests for this path to a handler (the GraphQL endpoint). */
  mount(path: string, handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): void;
  /** Offer requests no mount matches to a handler (the web UI); it resolves false to leave them a 404. */
  fallback(handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>): void;
  /** Start listening. */
  listen(): Promise<void>;
  /** Stop accepting, let in-flight requests finish for up to `graceMs`, then cut the rest. */
  close(graceMs: number): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const { log } = options;
  const mounts = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>();
  let fallback: ((req: IncomingMessage, res: ServerResponse) => Promise<boolean>) | undefined;
  let closing = false;
  const readiness = createReadiness({
    checks: options.readiness,
    log,
    ...(options.readinessTimeoutMs !== undefined ? { timeoutMs: options.readinessTimeoutMs } : {}),
  });

  const refuse = (res: ServerResponse, refusal: GuardRefusal, path: string): void => {
    const req = res.req;
    log.info({ code: refusal.code, host: req.headers.host, origin: req.headers.origin, path }, 'request refused');
    res.writeHead(refusal.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(refusalBody(refusal));
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/healthz') {
      sendJson(res, 200, { status: 'ok' });
      return;
    }
    if (path === '/readyz') {
      void readiness.run().then(({ ready: passing, checks }) => {
        const ready = !closing && passing;
        sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : closing ? 'shutting down' : 'not ready', checks });
      });
      return;
    }
    if (path === '/metrics' && options.metrics !== undefined) {
      const refusal = options.metricsGuard?.(req);
      if (refusal !== undefined) return refuse(res, refusal, path);
      options.metrics(req, res).catch((error: unknown) => {
        log.error({ err: error, path }, 'request failed');
        if (!res.headersSent) res.writeHead(500).end();
        else res.end();
      });
      return;
    }
    const refusal = options.guard?.(req);
    if (refusal !== undefined) return refuse(res, refusal, path);
    const handler = mounts.get(path);
    if (handler) {
      if (closing) res.setHeader('connection', 'close');
      handler(req, res).catch((error: unknown) => {
        log.error({ err: error, path }, 'request failed');
        if (!res.headersSent)
          sendJson(res, 500, {
            errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
          });
        else res.end();
      });
      return;
    }
    const notFound = () =>
      sendJson(res, 404, {
        error: `no route for ${path}`,
        routes: ['/healthz', '/readyz', ...(options.metrics ? ['/metrics'] : []), ...mounts.keys()],
      });
    if (!fallback) return notFound();
    fallback(req, res).then(
      (handled) => {
        if (!handled) notFound();
      },
      (error: unknown) => {
        log.error({ err: error, path }, 'request failed');
        if (!res.headersSent) sendJson(res, 500, { error: 'internal server error' });
        else res.end();
      },
    );
  });
  server.keepAliveTimeout = 5_000;

  const self: HttpServer = {
    server,
    url: '',
    mount: (path, handler) => void mounts.set(path, handler),
    fallback: (handler) => void (fallback = handler),
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
