/**
 * Finds the Redis phaselog uses: `REDIS_URL` when set; else a Redis answering on 127.0.0.1:6379;
 * else a `redis-server` from PATH, started on a free port with its files in the state directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { StartupError } from './errors.ts';
import { findFreePort } from './free-port.ts';
import { waitFor } from './wait.ts';

export interface ResolvedRedis {
  url: string;
  /** true when phaselog started this Redis itself. */
  embedded: boolean;
  stop(): Promise<void>;
}

/** Answer PING within `timeoutMs`, or report why not. */
export async function pingRedis(url: string, timeoutMs = 2000): Promise<{ ok: true } | { ok: false; reason: string }> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  } finally {
    client.disconnect();
  }
}

/** Redacts the password from a redis:// URL for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

export async function resolveRedis(options: { url?: string; stateDir: string; log: Logger }): Promise<ResolvedRedis> {
  const { url, stateDir, log } = options;
  const none = async () => {};
  if (url) {
    const ping = await pingRedis(url);
    if (!ping.ok) throw new StartupError(`cannot reach Redis at ${redactUrl(url)} (REDIS_URL): ${ping.reason}`);
    return { url, embedded: false, stop: none };
  }
  const local = 'redis://127.0.0.1:6379';
  if ((await pingRedis(local, 500)).ok) {
    log.info({ url: local }, 'using the Redis on 127.0.0.1:6379');
    return { url: local, embedded: false, stop: none };
  }
  if (spawnSync('redis-server', ['--version']).error) {
    throw new StartupError(
      'no Redis: REDIS_URL is not set, nothing answers on 127.0.0.1:6379, and redis-server is not on PATH. Install Redis (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL=redis://host:6379',
    );
  }
  const dir = path.join(stateDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const port = await findFreePort();
  const logFd = openSync(path.join(dir, 'redis.log'), 'a');
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    {
      detached: true,
      stdio: ['ignore', logFd, logFd],
    },
  );
  let exited = false;
  child.on('exit', () => (exited = true));
  child.unref();
  const started = `redis://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (exited) throw new StartupError(`redis-server exited at start; see ${path.join(dir, 'redis.log')}`);
      return (await pingRedis(started, 300)).ok;
    },
    { timeoutMs: 10_000, intervalMs: 50, what: 'redis-server to answer' },
  );
  log.info({ url: started }, 'started redis-server');
  return {
    url: started,
    embedded: true,
    async stop() {
      if (exited || child.pid === undefined) return;
      process.kill(child.pid, 'SIGTERM');
      await waitFor(() => exited, { timeoutMs: 5000, what: 'redis-server to stop' }).catch(() => {});
    },
  };
}
