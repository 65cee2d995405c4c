/** Run the phaselog CLI from source as a child process, the way a user runs it. */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';

export interface PhaselogProcess {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first JSON log line matching `predicate`. */
  waitForLog(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

/** The environment minus everything that configures phaselog, so each test states its own. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      value === undefined ||
      key.startsWith('PHASELOG_') ||
      ['DATABASE_URL', 'REDIS_URL', 'KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'].includes(key)
    )
      continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Where {@link runPhaselog} runs phaselog from. */
export interface RunFrom {
  /** Arguments to node before phaselog's own. @default the sources through tsx */
  entry?: string[];
  /** @default the project root */
  cwd?: string;
}

export function runPhaselog(args: string[], env: Record<string, string>, from: RunFrom = {}): PhaselogProcess {
  const entry = from.entry ?? ['--import', 'tsx', path.join(PROJECT_ROOT, 'src/cli/main.ts')];
  const child = spawn(process.execPath, [...entry, ...args], { cwd: from.cwd ?? PROJECT_ROOT, env });
  let out = '';
  let err = '';
  const waiters: {
    predicate: (line: Record<string, unknown>) => boolean;
    resolve: (line: Record<string, unknown>) => void;
  }[] = [];
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      for (const waiter of waiters.splice(0)) {
        if (waiter.predicate(line)) waiter.resolve(line);
        else waiters.push(waiter);
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForLog(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching log line within ${timeoutMs} ms\nstdout:\n${out}\nstderr:\n${err}`)),
          timeoutMs,
        );
        exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`phaselog exited (${code}) before the expected log line\nstdout:\n${out}\nstderr:\n${err}`));
        });
        waiters.push({
          predicate,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}

/** Wait for the exit, failing after `timeoutMs`. */
export async function exitCodeWithin(proc: PhaselogProcess, timeoutMs: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`phaselog did not exit within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([proc.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A port free now, so that a server restarted in a test listens where its clients expect it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
