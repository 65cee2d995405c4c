/**
 * A bounded closed-loop HTTP load generator: N concurrent clients on keep-alive connections each send
 * one request, wait for the full answer, and send the next, until a fixed request count is reached
 * or a time limit passes. It only talks to 127.0.0.1 and always stops by itself.
 */
import { Agent, request } from 'node:http';
import { nowMs, percentile, perSecond, round } from './stats.ts';

/** What to send and how hard. */
export interface HttpLoadOptions {
  /** Must point at 127.0.0.1 or localhost; anything else is refused. */
  url: string;
  /** @default 'POST' */
  method?: 'GET' | 'POST';
  /** Request body (sent with content-type application/json). */
  body?: string;
  /** Concurrent clients, each with its own keep-alive connection. @default 16 */
  concurrency?: number;
  /** Requests to send in total (warm-up not included). @default 20000 */
  requests?: number;
  /** Untimed requests sent first to open connections and warm the JIT. @default 500 */
  warmup?: number;
  /** Stop early after this many milliseconds even if `requests` were not all sent. @default 60000 */
  maxMs?: number;
}

/** What a load run measured. */
export interface HttpLoadResult {
  requests: number;
  errors: number;
  elapsedMs: number;
  requestsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** True when the time limit stopped the run before every request was sent. */
  stoppedByTimeLimit: boolean;
}

function assertLocal(url: URL): void {
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
    throw new Error(`load generator only talks to 127.0.0.1, not ${url.hostname}`);
  }
}

function send(agent: Agent, url: URL, method: string, body: Buffer | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { agent, method, headers: body ? { 'content-type': 'application/json', 'content-length': body.length } : {} },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends `requests` requests from `concurrency` closed-loop clients and returns throughput and
 * latency percentiles. A non-2xx answer or a socket error counts as an error, not a crash.
 */
export async function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const url = new URL(options.url);
  assertLocal(url);
  const method = options.method ?? 'POST';
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const concurrency = options.concurrency ?? 16;
  const total = options.requests ?? 20_000;
  const maxMs = options.maxMs ?? 60_000;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    let warmLeft = options.warmup ?? 500;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, Math.max(1, warmLeft)) }, async () => {
        while (warmLeft-- > 0) await send(agent, url, method, body).catch(() => 0);
      }),
    );
    const latencies: number[] = [];
    let issued = 0;
    let errors = 0;
    const started = nowMs();
    const deadline = started + maxMs;
    let stoppedByTimeLimit = false;
    const client = async (): Promise<void> => {
      while (issued < total) {
        if (nowMs() > deadline) {
          stoppedByTimeLimit = true;
          return;
        }
        issued += 1;
        const sent = nowMs();
        const status = await send(agent, url, method, body).catch(() => 0);
        latencies.push(nowMs() - sent);
        if (status < 200 || status >= 300) errors += 1;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, client));
    const elapsedMs = nowMs() - started;
    return {
      requests: latencies.length,
      errors,
      elapsedMs: round(elapsedMs),
      requestsPerSecond: perSecond(latencies.length, elapsedMs),
      p50Ms: round(percentile(latencies, 0.5), 3),
      p95Ms: round(percentile(latencies, 0.95), 3),
      p99Ms: round(percentile(latencies, 0.99), 3),
      stoppedByTimeLimit,
    };
  } finally {
    agent.destroy();
  }
}
