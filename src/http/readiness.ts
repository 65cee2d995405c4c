/**
 * `/readyz` answers: each check's outcome as a stable code, never the error text. `/readyz` is
 * unauthenticated, and a driver's message names hosts, ports, users and databases; the text goes to
 * the log instead, once per change of a check's state (a probe every second must not flood it).
 */
import type { Logger } from 'pino';
import { TIMED_OUT, withDeadline } from '../runtime/wait.ts';

/**
 * Why a readiness check failed. `UNAVAILABLE` is what any error without its own code maps to;
 * `TIMEOUT` is a check that did not answer in time.
 */
export type ReadinessCode = 'UNAVAILABLE' | 'TIMEOUT' | 'MIGRATIONS_PENDING' | (string & {});

/** An error a readiness check throws to report its own code (anything else reads `UNAVAILABLE`). */
export class ReadinessError extends Error {
  override readonly name = 'ReadinessError';
  constructor(
    /** Stable, upper-snake-case code shown on `/readyz`. */
    readonly code: ReadinessCode,
    /** Detail for the log; never sent to the client. */
    message: string,
  ) {
    super(message);
  }
}

/** One readiness check: resolves to nothing when OK, throws (or rejects) with the reason otherwise. */
export type ReadinessCheck = () => Promise<void>;

/** A check's outcome as `/readyz` shows it. */
export type CheckResult = { ok: true } | { ok: false; code: ReadinessCode };

export interface ReadinessOptions {
  checks: Record<string, ReadinessCheck>;
  log: Logger;
  /** Time a check may take before it counts as failed with `TIMEOUT`. @default 2000 */
  timeoutMs?: number;
  /** While a check keeps failing the same way, its log line is repeated at most this often. @default 60000 */
  repeatLogMs?: number;
}

export interface Readiness {
  /** Run every check at once; `ready` when all pass. */
  run(): Promise<{ ready: boolean; checks: Record<string, CheckResult> }>;
}

/** Checks that time out, report their codes, and log what went wrong when a check's state changes. */
export function createReadiness(options: ReadinessOptions): Readiness {
  const { log } = options;
  const timeoutMs = options.timeoutMs ?? 2000;
  const repeatLogMs = options.repeatLogMs ?? 60_000;
  // Per check: the last state logged ('ok' or a code) and when.
  const logged = new Map<string, { state: string; at: number }>();

  const record = (name: string, result: CheckResult, error?: unknown): void => {
    const state = result.ok ? 'ok' : result.code;
    const last = logged.get(name);
    const now = Date.now();
    if (last === undefined && result.ok) {
      logged.set(name, { state, at: now });
      return;
    }
    if (last !== undefined && last.state === state && (result.ok || now - last.at < repeatLogMs)) return;
    logged.set(name, { state, at: now });
    if (result.ok) log.info({ check: name }, 'readiness check passes again');
    else log.warn({ check: name, code: result.code, err: error }, 'readiness check failing');
  };

  return {
    async run() {
      const entries = await Promise.all(
        Object.entries(options.checks).map(async ([name, check]): Promise<[string, CheckResult]> => {
          let result: CheckResult;
          let failure: unknown;
          try {
            result =
              (await withDeadline(check(), timeoutMs)) === TIMED_OUT ? { ok: false, code: 'TIMEOUT' } : { ok: true };
            if (!result.ok) failure = new Error(`no answer within ${timeoutMs} ms`);
          } catch (error) {
            failure = error;
            result = { ok: false, code: error instanceof ReadinessError ? error.code : 'UNAVAILABLE' };
          }
          record(name, result, failure);
          return [name, result];
        }),
      );
      return { ready: entries.every(([, r]) => r.ok), checks: Object.fromEntries(entries) };
    },
  };
}
