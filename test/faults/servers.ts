/**
 * Servers a fault test may kill: a private `redis-server` and a private PostgreSQL, each on a port of
 * its own that survives a restart, so phaselog's clients reconnect to the same URL afterwards. The
 * shared servers on 5432/6379 are never touched.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { findFreePort } from '../../src/runtime/free-port.ts';
import { isAlive } from '../../src/runtime/embedded-postgres.ts';
import { waitFor } from '../../src/runtime/wait.ts';

/** Whether any process of process group `pgid` is left (signal 0 checks without sending). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether a PostgreSQL server accepts a connection and answers a query. */
export async function postgresAnswers(connection: string | pg.ClientConfig): Promise<boolean> {
  const client = new pg.Client(
    typeof connection === 'string' ? { connectionString: connection, connectionTimeoutMillis: 1000 } : connection,
  );
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Resolves once `child` has exited (at once when it already has). */
export function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.ts';

/** A PostgreSQL server of the test's own (embedded-postgres' binaries), trust auth, one database. */
export interface PrivatePostgres {
  url: string;
  /** kill -9 of the postmaster and every backend, resolving once they are gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory (crash recovery runs). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function binaries(): Promise<{ postgres: string; initdb: string }> {
  return (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    postgres: string;
    initdb: string;
  };
}

/** postgres refuses to run as root: as root, run it as the `postgres` user (created when missing). */
function serverIdentity(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    spawnSync('groupadd', ['--system', 'postgres']);
    spawnSync('useradd', ['--system', '-g', 'postgres', 'postgres']);
  }
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

export async function startPrivatePostgres(database = 'phaselog'): Promise<PrivatePostgres> {
  const bins = await binaries();
  const identity = serverIdentity();
  const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-fault-pg-'));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  if (identity) {
    chmodSync(dir, 0o711);
    chownSync(dataDir, identity.uid, identity.gid);
  }
  const init = spawnSync(
    bins.initdb,
    ['-D', dataDir, '-U', 'postgres', '--auth', 'trust', '-E', 'UTF8', '--locale', 'C'],
    { encoding: 'utf8', ...identity },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  writeFileSync(path.join(dir, 'README'), 'data directory of a phaselog fault test; removed when the test ends\n');
  const port = await findFreePort();
  const admin = { host: '127.0.0.1', port, user: 'postgres', database: 'postgres' };
  let child: ChildProcess | undefined;
  const launch = async () => {
    const started = spawn(bins.postgres, ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dataDir], {
      detached: true,
      stdio: 'ignore',
      ...identity,
    });
    child = started;
    await waitFor(
      async () => {
        if (started.exitCode !== null)
          throw new Error(`private PostgreSQL on ${port} exited at start (${started.exitCode})`);
        return postgresAnswers(admin);
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `the private PostgreSQL on ${port}` },
    );
  };
  const kill = async () => {
    if (!child?.pid) return;
    const pid = child.pid;
    // The server runs in its own process group: kill the postmaster and its backends together, as
    // a machine losing the server would.
    process.kill(-pid, 'SIGKILL');
    await exitOf(child);
    await waitFor(() => !groupAlive(pid), {
      timeoutMs: 10_000,
      what: 'every backend of the private PostgreSQL to be gone',
    });
    child = undefined;
  };
  await launch();
  const client = new pg.Client(admin);
  await client.connect();
  await client.query(`CREATE DATABASE "${database}"`);
  await client.end();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/${database}`,
    kill,
    restart: launch,
    async stop() {
      if (child?.pid && isAlive(child.pid)) {
        process.kill(-child.pid, 'SIGKILL');
        await exitOf(child);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** kill -9 of a process group (a server started detached by phaselog), resolving once it is gone. */
export async function killProcessGroup(pid: number): Promise<void> {
  process.kill(-pid, 'SIGKILL');
  await waitFor(() => !groupAlive(pid), { timeoutMs: 10_000, what: `process group ${pid} to be gone` });
}
