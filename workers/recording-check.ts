/**
 * Whether the worker role is recording: every configured cluster has its job scheduler, and a full
 * snapshot of every cluster (written, skipped as already written, or recorded as unreachable) has
 * completed within a bound. It backs the `recording` readiness check, so `/readyz` tells the truth
 * when Redis lost the schedulers or a cluster's snapshots stopped.
 *
 * Completions are kept in memory and in one Redis hash (one HSET per snapshot), so with several
 * worker processes a process whose peers did the snapshots still reads as recording; the check is
 * one HMGET and one scheduler look-up per cluster.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { snapshotSchedulerId } from '../src/queue/snapshot-jobs.ts';
import { TIMED_OUT, withDeadline } from '../src/runtime/wait.ts';

/** Why the worker is not recording; the message names counts, never hosts, ports or Redis text. */
export class NotRecordingError extends Error {
  override readonly name = 'NotRecordingError';
  constructor(
    readonly code: 'SCHEDULER_MISSING' | 'SCHEDULERS_UNREADABLE' | 'NOT_RECORDING',
    message: string,
  ) {
    super(message);
  }
}

/** Options of {@link createRecordingCheck}. */
export interface RecordingCheckOptions {
  queue: Queue;
  /** Connection for the shared completion times. */
  redis: Redis;
  /** Redis hash of completion times (cluster -> epoch ms). */
  key: string;
  clusters: readonly string[];
  /** Longest time a cluster may go without a completed snapshot. */
  boundMs: number;
  /** Whether this process keeps job schedulers (and so checks them). */
  schedulers: boolean;
  /**
   * Whether the queue's connection is up; while it is not, the check fails at once instead of
   * queueing look-ups that would pile up until Redis is back. @default always up
   */
  connected?: () => boolean;
  /**
   * Longest wait for Redis' answers. The connection can still read as up in the moments after Redis
   * died, and BullMQ's connection queues commands until Redis is back: without a bound the check
   * would hang instead of failing. @default 1000
   */
  answerWithinMs?: number;
  log: Logger;
  /** @default Date.now */
  now?: () => number;
}

/** The check and its bookkeeping. */
export interface RecordingCheck {
  /** A full snapshot of `cluster` completed. */
  completed(cluster: string): void;
  /** The schedulers were (re-)created: every cluster gets a fresh bound to produce its next snapshot. */
  rescheduled(): void;
  /** Resolves when recording; rejects with {@link NotRecordingError} otherwise. */
  check(): Promise<void>;
}

/** Creates the bookkeeping; the bound starts now, so a fresh process has one bound for its first snapshots. */
export function createRecordingCheck(options: RecordingCheckOptions): RecordingCheck {
  const now = options.now ?? Date.now;
  const { clusters, redis, key, log } = options;
  const answerWithinMs = options.answerWithinMs ?? 1000;
  const last = new Map<string, number>();
  let since = now();
  let reported = '';

  const report = (problem: string, detail: Record<string, unknown>): void => {
    if (problem !== reported && problem !== '') log.warn(detail, problem);
    else if (problem === '' && reported !== '') log.info('recording again');
    reported = problem;
  };

  return {
    completed(cluster) {
      const at = now();
      last.set(cluster, at);
      redis.hset(key, cluster, String(at)).catch(() => {});
    },
    rescheduled() {
      since = now();
    },
    async check() {
      if (clusters.length === 0) return;
      if (options.schedulers) {
        if (options.connected?.() === false)
          throw new NotRecordingError('SCHEDULERS_UNREADABLE', 'the job schedulers cannot be read');
        let found;
        try {
          found = await within(
            Promise.all(clusters.map((cluster) => options.queue.getJobScheduler(snapshotSchedulerId(cluster)))),
            answerWithinMs,
          );
        } catch {
          throw new NotRecordingError('SCHEDULERS_UNREADABLE', 'the job schedulers cannot be read');
        }
        const missing = clusters.filter((_, i) => found[i] === undefined);
        if (missing.length > 0) {
          report('job schedulers missing', { clusters: missing });
          throw new NotRecordingError(
            'SCHEDULER_MISSING',
            `${missing.length} of ${clusters.length} clusters have no job scheduler`,
          );
        }
      }
      const shared = await within(redis.hmget(key, ...clusters), answerWithinMs).catch(() => clusters.map(() => null));
      const oldest = now() - options.boundMs;
      const late = clusters.filter(
        (cluster, i) => Math.max(since, last.get(cluster) ?? 0, Number(shared[i] ?? 0)) < oldest,
      );
      if (late.length > 0) {
        report('no snapshot completed within the bound', { clusters: late, boundMs: options.boundMs });
        throw new NotRecordingError(
          'NOT_RECORDING',
          `no snapshot of ${late.length} of ${clusters.length} clusters completed within ${options.boundMs} ms`,
        );
      }
      report('', {});
    },
  };
}

/** `promise`'s value, or a rejection once `ms` have passed without it. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  const answer = await withDeadline(promise, ms);
  if (answer === TIMED_OUT) throw new Error(`no answer within ${ms} ms`);
  return answer;
}
