import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';

/**
 * Log a Redis client's errors through pino, one line per change of state rather than one per retry.
 * Works for ioredis clients and for BullMQ's Queue, Worker and QueueEvents (which re-emit their
 * connections' errors). With no `log` the errors are only swallowed.
 *
 * Every client phaselog creates needs an 'error' listener: without one ioredis writes
 * "[ioredis] Unhandled error event" and a stack to stderr on every reconnect attempt, and BullMQ
 * falls back to `console.error`, both of which break the JSON log.
 */
export function logRedisErrors(
  emitter: EventEmitter,
  log: Logger | undefined,
  client: string,
  options: { repeatMs?: number } = {},
): void {
  if (log === undefined) {
    // Callers without a log (the CLI's one-shot clients) report failures through their commands' results.
    emitter.on('error', () => {});
    return;
  }
  const repeatMs = options.repeatMs ?? 60_000;
  let failing: { key: string; at: number } | undefined;
  emitter.on('error', (error: unknown) => {
    const err = error instanceof Error ? error : new Error(String(error));
    const key = (err as { code?: string }).code ?? err.message;
    const now = Date.now();
    if (failing?.key === key && now - failing.at < repeatMs) return;
    failing = { key, at: now };
    // The message and code say it all; a stack of ioredis internals per client would only add noise.
    log.warn(
      { client, error: { code: (err as { code?: string }).code, message: err.message } },
      'Redis connection error',
    );
  });
  emitter.on('ready', () => {
    if (failing === undefined) return;
    failing = undefined;
    log.info({ client }, 'Redis connection restored');
  });
}
