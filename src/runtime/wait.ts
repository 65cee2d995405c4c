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
