/**
 * How long `npm start` takes until `GET /healthz` answers 200, as a new user meets it: in a copy of
 * the project as a fresh clone has it after `npm install` (the tracked files, the postinstall's
 * generated code, node_modules linked; no dist/, no .phaselog/, an empty temporary directory), then again in
 * the same copy with nothing changed (the everyday restart). The demo runs as on a machine without a
 * kubeconfig: embedded PostgreSQL (initdb on the first start), the Redis on 127.0.0.1:6379 under a
 * prefix of this run (deleted afterwards).
 *
 *   node --import tsx bench/start-time.ts [--starts 3]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  realpathSync,
  existsSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROJECT_ROOT } from '../src/runtime/paths.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { connectRedis, deleteKeysWithPrefix } from './lib/redis-scratch.ts';
import { median, nowMs, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';

export interface StartTimeBenchOptions {
  /** Second starts timed (the median is reported). @default 3 */
  starts?: number;
  /** Longest wait for /healthz per start before giving up. @default 180000 */
  timeoutMs?: number;
}

/** A copy of the project as `git clone` + `npm install` leaves it, in a new temporary directory. */
function copyProject(into: string): void {
  // Tracked and new files, as a commit of the working tree would hold them.
  const tracked = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && f !== 'node_modules');
  for (const file of tracked) {
    const from = path.join(PROJECT_ROOT, file);
    // A file deleted in the working tree but still tracked is not part of what would be cloned now.
    if (!existsSync(from)) continue;
    mkdirSync(path.dirname(path.join(into, file)), { recursive: true });
    cpSync(from, path.join(into, file));
  }
  // What postinstall generates (Prisma client, resolver types): the install step, not the start.
  cpSync(path.join(PROJECT_ROOT, 'src', 'generated'), path.join(into, 'src', 'generated'), { recursive: true });
  symlinkSync(realpathSync(path.join(PROJECT_ROOT, 'node_modules')), path.join(into, 'node_modules'));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Stops `npm start` and everything under it (npm, node, embedded PostgreSQL, redis-server) and waits for it. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The same signal phaselog gets from a terminal's Ctrl-C, to the whole process group.
  process.kill(-child.pid, 'SIGINT');
  const deadline = sleep(20_000).then(() => 'late' as const);
  if ((await Promise.race([exited.then(() => 'exited' as const), deadline])) === 'late') {
    process.kill(-child.pid, 'SIGKILL');
    await exited;
  }
}

/** Runs `npm start` in `dir` and returns the milliseconds until /healthz answers 200. */
async function timeStart(dir: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<number> {
  const port = await freePort();
  const started = nowMs();
  const child = spawn('npm', ['start'], {
    cwd: dir,
    env: { ...env, PHASELOG_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    const url = `http://127.0.0.1:${port}/healthz`;
    while (!(await healthy(url))) {
      if (child.exitCode !== null)
        throw new Error(`npm start exited with ${child.exitCode} before /healthz answered:\n${output}`);
      if (nowMs() - started > timeoutMs) throw new Error(`no /healthz after ${timeoutMs} ms:\n${output}`);
      await sleep(50);
    }
    return nowMs() - started;
  } finally {
    await stop(child);
  }
}

/** The environment of a new user's shell: no phaselog settings, no database or kubeconfig of ours. */
function userEnv(home: string, prefix: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      name.startsWith('PHASELOG_') ||
      name.startsWith('npm_') ||
      ['DATABASE_URL', 'REDIS_URL', 'KUBECONFIG', 'NODE_OPTIONS'].includes(name)
    )
      continue;
    env[name] = value;
  }
  // A temporary directory of its own, so no cache of an earlier run (tsx's, if it is used) helps.
  return { ...env, TMPDIR: home, PHASELOG_DEMO: 'true', PHASELOG_REDIS_PREFIX: prefix };
}

export async function run(options: StartTimeBenchOptions = {}): Promise<Figures> {
  const starts = options.starts ?? 3;
  const timeoutMs = options.timeoutMs ?? 180_000;
  const root = mkdtempSync(path.join(tmpdir(), 'phaselog-start-'));
  // As root, the embedded PostgreSQL runs as the postgres user, who must reach its data directory.
  chmodSync(root, 0o755);
  const dir = path.join(root, 'phaselog');
  const home = path.join(root, 'tmp');
  mkdirSync(home, { recursive: true });
  const prefix = `phaselog-bench-start-${process.pid}-${Date.now().toString(36)}`;
  const redis = connectRedis();
  try {
    copyProject(dir);
    const env = userEnv(home, prefix);
    const first = await timeStart(dir, env, timeoutMs);
    const again: number[] = [];
    for (let i = 0; i < starts; i++) again.push(await timeStart(dir, env, timeoutMs));
    const version =
      (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[
        'start'
      ] ?? '';
    return {
      'first start after install: s to /healthz': round(first / 1000, 1),
      [`second start, nothing changed: s to /healthz (median of ${starts})`]: round(median(again) / 1000, 1),
      'second starts (s)': again.map((ms) => round(ms / 1000, 1)).join(', '),
      'npm start runs': version,
    };
  } finally {
    await deleteKeysWithPrefix(redis, prefix).catch(() => 0);
    redis.disconnect();
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  printFigures('npm start to /healthz', await run({ starts: readNumberFlag('starts') ?? 3 }));
}
