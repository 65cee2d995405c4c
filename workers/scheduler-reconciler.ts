/**
 * Keeps job schedulers in place. They live only in Redis: a Redis restarted without persistence, a
 * FLUSHALL or an evicting maxmemory policy drops them, and then no scheduled snapshot ever runs
 * again. The reconciler looks every interval, and at once when the connection is ready again after
 * a reconnect, whether each scheduler exists, re-creates the missing ones and says so in the log.
 * Several worker processes may each run one: an upsert with the same id and template is idempotent.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** One scheduler to keep: its queue, id, and how to (re-)create it. */
export interface KeptScheduler {
  queue: Queue;
  id: string;
  upsert(): Promise<unknown>;
}

/** Options of {@link startSchedulerReconciler}. */
export interface SchedulerReconcilerOptions {
  schedulers: readonly KeptScheduler[];
  /** How often to look. */
  intervalMs: number;
  /** Reconciled again on each of its 'ready' events (a reconnect, perhaps to an emptied Redis). */
  connection: Redis;
  log: Logger;
  /** Called after missing schedulers were re-created, with their ids. */
  onRecreated?: (ids: string[]) => void;
}

/** A running reconciler. */
export interface SchedulerReconciler {
  /** Looks now (a look already running is followed by one more); resolves with the ids re-created. */
  reconcile(): Promise<string[]>;
  stop(): void;
}

/** Starts reconciling; the first look is left to the interval and the next 'ready'. */
export function startSchedulerReconciler(options: SchedulerReconcilerOptions): SchedulerReconciler {
  const { log } = options;
  let running: Promise<string[]> | undefined;
  let again = false;
  let failing = false;
  let stopped = false;

  const lookOnce = async (): Promise<string[]> => {
    const recreated: string[] = [];
    for (const scheduler of options.schedulers) {
      if (stopped) break;
      if ((await scheduler.queue.getJobScheduler(scheduler.id)) !== undefined) continue;
      await scheduler.upsert();
      recreated.push(scheduler.id);
    }
    return recreated;
  };

  const reconcile = (): Promise<string[]> => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      const recreated: string[] = [];
      do {
        again = false;
        try {
          recreated.push(...(await lookOnce()));
          if (failing) log.info('job schedulers readable again');
          failing = false;
        } catch (error) {
          // Redis is down or failing: one line per streak, the next look retries.
          if (!failing) log.warn({ err: error }, 'checking the job schedulers failed');
          failing = true;
        }
      } while (again && !stopped);
      if (recreated.length > 0) {
        log.warn({ schedulers: recreated }, 'job schedulers were missing (Redis lost its data?); re-created them');
        options.onRecreated?.(recreated);
      }
      return recreated;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer = setInterval(() => void reconcile(), options.intervalMs);
  timer.unref();
  const onReady = (): void => void reconcile();
  options.connection.on('ready', onReady);
  return {
    reconcile,
    stop() {
      stopped = true;
      clearInterval(timer);
      options.connection.off('ready', onReady);
    },
  };
}
