/**
 * Baseline: a bare Apollo Server 5 answering `{ __typename }` over node:http, next to bare node:http
 * returning the same bytes, both loaded by the same closed-loop generator from this process while
 * the server runs in a child process. A phaselog GraphQL figure divided by the Apollo one says what
 * phaselog's schema, resolvers and data cost on top of the framework.
 *
 *   node --import tsx bench/baselines/http-apollo.ts [--requests 20000] [--concurrency 16]
 */
import { fileURLToPath } from 'node:url';
import { startChildServer } from '../lib/child-server.ts';
import { runHttpLoad } from '../lib/http-load.ts';
import type { HttpLoadResult } from '../lib/http-load.ts';
import { readNumberFlag, isMain, printFigures } from '../lib/cli.ts';
import type { Figures } from '../lib/types.ts';

/** Options of {@link run}. */
export interface HttpApolloBaselineOptions {
  /** Timed requests per server. @default 20000 */
  requests?: number;
  /** Concurrent keep-alive clients. @default 16 */
  concurrency?: number;
  /** Time limit per server in milliseconds. @default 60000 */
  maxMs?: number;
}

const SERVER_FILE = fileURLToPath(new URL('./http-servers.ts', import.meta.url));
const QUERY = JSON.stringify({ query: '{ __typename }' });

async function measure(kind: 'node-http' | 'apollo', options: HttpApolloBaselineOptions): Promise<HttpLoadResult> {
  const server = await startChildServer(SERVER_FILE, [kind]);
  try {
    return await runHttpLoad({
      url: server.url,
      method: 'POST',
      body: QUERY,
      concurrency: options.concurrency ?? 16,
      requests: options.requests ?? 20_000,
      maxMs: options.maxMs ?? 60_000,
    });
  } finally {
    await server.stop();
  }
}

/** Measures bare node:http and bare Apollo Server 5 and returns requests/s and latency percentiles. */
export async function run(options: HttpApolloBaselineOptions = {}): Promise<Figures> {
  const http = await measure('node-http', options);
  const apollo = await measure('apollo', options);
  return {
    'concurrent clients': options.concurrency ?? 16,
    'node:http requests/s': http.requestsPerSecond,
    'node:http p50 ms': http.p50Ms,
    'node:http p95 ms': http.p95Ms,
    'Apollo requests': apollo.requests,
    'Apollo errors': apollo.errors + http.errors,
    'Apollo requests/s': apollo.requestsPerSecond,
    'Apollo p50 ms': apollo.p50Ms,
    'Apollo p95 ms': apollo.p95Ms,
    'Apollo p99 ms': apollo.p99Ms,
    'Apollo / node:http %': Math.round((apollo.requestsPerSecond / Math.max(1, http.requestsPerSecond)) * 100),
  };
}

if (isMain(import.meta.url)) {
  printFigures('bare Apollo Server 5 and node:http', await run({ requests: readNumberFlag('requests'), concurrency: readNumberFlag('concurrency') }));
}
