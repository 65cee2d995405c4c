/**
 * `GET /metrics`. Served beside `/healthz` and `/readyz` under their rules (no Host/Origin check:
 * Prometheus scrapes a pod by its address), with one addition: the series name clusters,
 * namespaces, phases and their statuses, which a deployment restricting API tokens by cluster or
 * namespace may hold private. With `metrics.token` set, a scrape must send it as a bearer token
 * (Prometheus' `authorization` or `bearer_token_file`); otherwise the answer is 401 with no body.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { constants, gzip } from 'node:zlib';
import Negotiator from 'negotiator';
import type { Logger } from 'pino';
import type { Metrics } from './registry.ts';

export interface MetricsHandlerOptions {
  metrics: Metrics;
  /** Bearer token a scrape must present; unset, `/metrics` is open like the other probes. */
  token?: string;
  log: Logger;
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
const gzipAsync = promisify(gzip);

/** Whether the request takes a gzipped answer (Prometheus always asks for one). */
export const acceptsGzip = (req: Pick<IncomingMessage, 'headers'>): boolean =>
  new Negotiator(req).encoding(['gzip', 'identity']) === 'gzip';

/** Whether `authorization` carries `token` as a bearer token (compared in constant time). */
export function hasMetricsToken(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), digest(token));
}

/** The `/metrics` handler. */
export function createMetricsHandler(
  options: MetricsHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { metrics, token, log } = options;
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (token !== undefined && !hasMetricsToken(req.headers.authorization, token)) {
      res.writeHead(401, { 'www-authenticate': 'Bearer realm="phaselog metrics"', 'cache-control': 'no-store' }).end();
      return;
    }
    let rendered: { body: string; contentType: string };
    try {
      rendered = await metrics.render();
    } catch (error) {
      // The database may be down: say so with a status Prometheus records as a failed scrape (`up` 0).
      log.warn({ err: error }, 'collecting metrics failed');
      res
        .writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
        .end('metrics unavailable\n');
      return;
    }
    const headers = { 'content-type': rendered.contentType, 'cache-control': 'no-store', vary: 'accept-encoding' };
    if (!acceptsGzip(req)) {
      res.writeHead(200, headers).end(req.method === 'HEAD' ? undefined : rendered.body);
      return;
    }
    // A large fleet's text is many MB of label sets that repeat, so it compresses many-fold; zlib's
    // fastest level, run on libuv's thread pool, keeps the event loop free while it works.
    const body = await gzipAsync(rendered.body, { level: constants.Z_BEST_SPEED });
    res.writeHead(200, { ...headers, 'content-encoding': 'gzip' }).end(req.method === 'HEAD' ? undefined : body);
  };
}
