import { setTimeout as delay } from 'node:timers/promises';

/** Poll `check` until it returns true, or throw after `timeoutMs` naming `what` was awaited. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; what: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}`);
    await delay(options.intervalMs ?? 100);
  }
}

/** What {@link withDeadline} resolves to when the deadline passed first. */
export const TIMED_OUT = Symbol('timed out');

/**
 * `promise`'s value, or {@link TIMED_OUT} once `ms` have passed without it (a rejection before then
 * rejects). The promise itself runs on: this bounds how long a caller waits, not the work.
 */
export async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
