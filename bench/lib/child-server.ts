/**
 * Starts a server in a child Node process so that a load generator in this process does not share
 * its event loop with the server it measures (on 2 cores, sharing one thread halves both).
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** A server running in a child process. */
export interface ChildServer {
  /** Where it listens, e.g. http://127.0.0.1:41234 */
  url: string;
  /** The child's process id. */
  pid: number;
  /** Asks the child to close and waits for it to exit (kills it after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** The message a server child sends once it listens. */
export interface ServerReadyMessage {
  ready: true;
  url: string;
}

function isReady(message: unknown): message is ServerReadyMessage {
  return typeof message === 'object' && message !== null && (message as { ready?: unknown }).ready === true;
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** A child process that reported ready, and the message it reported with. */
export interface ReadyChild<M extends ServerReadyMessage = ServerReadyMessage> {
  child: ChildProcess;
  ready: M;
  /** Asks the child to close and waits for it to exit (kills it after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Forks `file` (a TypeScript module, run through tsx; or JavaScript, run as it is) with `args` and
 * waits until it sends a {@link ServerReadyMessage}. Rejects if it exits or stays silent for
 * `startMs`. `nodeFlags` are extra Node options such as `--expose-gc`; `spawn.env` is added to this
 * process's environment for the child, and `spawn.execPath` is the Node that runs it (this one's by default).
 */
export async function startReadyChild<M extends ServerReadyMessage = ServerReadyMessage>(
  file: string,
  args: string[],
  startMs = 20_000,
  nodeFlags: string[] = [],
  spawn: { env?: Record<string, string>; execPath?: string } = {},
): Promise<ReadyChild<M>> {
  const loader = file.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = fork(file, args, {
    execArgv: [...loader, ...nodeFlags],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(spawn.env !== undefined ? { env: { ...process.env, ...spawn.env } } : {}),
    ...(spawn.execPath !== undefined ? { execPath: spawn.execPath } : {}),
  });
  try {
    const ready = await new Promise<M>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${file} did not report ready within ${startMs} ms`)), startMs);
      child.on('message', (message: unknown) => {
        if (isReady(message)) {
          clearTimeout(timer);
          resolve(message as M);
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${file} exited before it was ready (code ${code}, signal ${signal})`));
      });
    });
    return { child, ready, stop: (graceMs = 5_000) => stopChild(child, graceMs) };
  } catch (error) {
    await stopChild(child, 1_000);
    throw error;
  }
}

/** Starts a server child with {@link startReadyChild} and returns where it listens. */
export async function startChildServer(file: string, args: string[], startMs = 20_000): Promise<ChildServer> {
  const { child, ready, stop } = await startReadyChild(file, args, startMs);
  return { url: ready.url, pid: child.pid ?? 0, stop };
}
