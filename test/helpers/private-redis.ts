/**
 * A redis-server of a test's own, on a free port and without persistence, for tests that kill or
 * flush it (never the shared one on 6379). `kill()` SIGKILLs it; `start()` brings it back, empty,
 * on the same port, as a restarted Redis without persistence comes back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { findFreePort } from '../../src/runtime/free-port.ts';
import { pingRedis } from '../../src/runtime/redis.ts';

export interface PrivateRedis {
  url: string;
  /** Starts it (again) on the same port, with no data; resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGKILLs it and waits for the exit. */
  kill(): Promise<void>;
  /** FLUSHALL over a connection of its own. */
  flushAll(): Promise<void>;
  /** Kills it and removes its directory. */
  close(): Promise<void>;
}

/** Starts a private redis-server. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await findFreePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = started;
    const deadline = Date.now() + 10_000;
    while (!(await pingRedis(url, 300)).ok) {
      if (started.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${started.exitCode}`);
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    start,
    kill,
    async flushAll() {
      const redis = new Redis(url);
      try {
        await redis.flushall();
      } finally {
        redis.disconnect();
      }
    },
    async close() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
