/**
 * Runs http and webhook checks: one BullMQ job scheduler per (check, cluster) at the check's
 * interval, and each job is one batch over the cluster's selected phases (not one job per phase),
 * recorded through the condition store so that a run finding nothing new writes one row.
 */
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { CheckConfig } from '../src/checks/config.ts';
import { logRedisErrors } from '../src/runtime/redis-errors.ts';
import { startSchedulerReconciler, type KeptScheduler } from './scheduler-reconciler.ts';
import { runCheckOnCluster, type RunCheckDeps } from '../src/services/run-check.ts';
import { readSecret } from '../src/config.ts';
import { createChangePublisher } from '../src/pubsub/change-publisher.ts';
import { createConditionStore } from '../src/store/condition-store.ts';
import type { Db } from '../src/store/db.ts';
import { createHistoryReader } from '../src/store/read-history.ts';
import { createPhaseReader } from '../src/store/read-phases.ts';

export const CHECK_QUEUE = 'phaselog-checks';
export const CHECK_JOB = 'check';

/** The job payload: names only; the check itself is read from config (no URL, no secret in Redis). */
export const checkJobSchema = z.strictObject({ check: z.string().min(1), cluster: z.string().min(1) });

/** The scheduler id of a check on a cluster. */
export const checkSchedulerId = (check: string, cluster: string): string => `check:${check}:${cluster}`;

export interface CheckWorkerOptions extends Omit<RunCheckDeps, 'log'> {
  /** Called on close, after the worker (e.g. the publisher's). */
  close?: () => Promise<void>;
  redisUrl: string;
  log: Logger;
  /** http and webhook checks (cel checks run with snapshots). */
  checks: readonly CheckConfig[];
  clusters: readonly string[];
  queueName?: string;
  prefix?: string;
  /** @default 4 */
  concurrency?: number;
}

export interface RunningCheckWorker {
  queue: Queue;
  /** Re-creates missing check schedulers now (also every interval and on reconnect); resolves with their ids. */
  reconcileSchedulers(): Promise<string[]>;
  close(): Promise<void>;
}

/** The stores, publisher and secret reader a check worker of this process uses. */
export function checkRunDeps(
  db: Db,
  baseDir: string,
  redisUrl: string,
  channelPrefix: string,
  log: Logger,
): Omit<RunCheckDeps, 'log'> & { close(): Promise<void> } {
  const publisher = createChangePublisher(redisUrl, { prefix: channelPrefix, log, client: 'check-change-publisher' });
  return {
    phases: createPhaseReader(db),
    history: createHistoryReader(db),
    conditions: createConditionStore(db),
    publisher,
    readSecret: (source) => readSecret(source, baseDir),
    close: () => publisher.close(),
  };
}

/** The schedulers `checks` need on `clusters`: one per (check, cluster) it may select. */
export function checkSchedulers(
  queue: Queue,
  checks: readonly CheckConfig[],
  clusters: readonly string[],
): KeptScheduler[] {
  return checks.flatMap((check) =>
    check.http === undefined && check.webhook === undefined
      ? []
      : clusters
          .filter((cluster) => check.select.clusters.length === 0 || check.select.clusters.includes(cluster))
          .map((cluster) => ({
            queue,
            id: checkSchedulerId(check.name, cluster),
            upsert: () =>
              queue.upsertJobScheduler(
                checkSchedulerId(check.name, cluster),
                { every: check.interval },
                {
                  name: CHECK_JOB,
                  data: { check: check.name, cluster },
                  // No retry: the next tick is the retry, and a late retry would record an old moment.
                  opts: { attempts: 1, removeOnComplete: { count: 50 }, removeOnFail: { count: 50 } },
                },
              ),
          })),
  );
}

/** Upserts the schedulers of {@link checkSchedulers} and removes check schedulers no longer configured. */
export async function scheduleChecks(queue: Queue, schedulers: readonly KeptScheduler[]): Promise<void> {
  for (const scheduler of schedulers) await scheduler.upsert();
  const wanted = new Set(schedulers.map((s) => s.id));
  for (const scheduler of await queue.getJobSchedulers()) {
    if (scheduler.key.startsWith('check:') && !wanted.has(scheduler.key)) await queue.removeJobScheduler(scheduler.key);
  }
}

export async function startCheckWorker(options: CheckWorkerOptions): Promise<RunningCheckWorker> {
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const queueName = options.queueName ?? CHECK_QUEUE;
  const prefix = options.prefix ?? 'bull';
  const log = options.log.child({ unit: 'checks' });
  logRedisErrors(connection, log, 'check-queue');
  const queue = new Queue(queueName, { connection, prefix });
  queue.on('error', () => {});
  const byName = new Map(options.checks.map((c) => [c.name, c]));
  const schedulers = checkSchedulers(queue, options.checks, options.clusters);
  await scheduleChecks(queue, schedulers);
  // Schedulers live only in Redis: re-created when Redis lost them, as the snapshot schedulers are.
  const reconciler = startSchedulerReconciler({
    schedulers,
    intervalMs: Math.min(30_000, ...options.checks.map((c) => c.interval)),
    connection,
    log,
  });
  const worker = new Worker(
    queueName,
    async (job) => {
      const parsed = checkJobSchema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid check job payload: ${parsed.error.message}`);
      const check = byName.get(parsed.data.check);
      if (!check) throw new UnrecoverableError(`check "${parsed.data.check}" is not configured`);
      const outcome = await runCheckOnCluster({ ...options, log }, check, parsed.data.cluster, new Date());
      return { phases: outcome.phases, changes: outcome.written.changes.length, rows: outcome.written.rows };
    },
    { connection, prefix, concurrency: options.concurrency ?? 4 },
  );
  logRedisErrors(worker, log, 'check-worker');
  worker.on('failed', (job, error) =>
    log.error({ check: job?.data?.check, cluster: job?.data?.cluster, err: error }, 'check run failed'),
  );
  return {
    queue,
    reconcileSchedulers: () => reconciler.reconcile(),
    async close() {
      reconciler.stop();
      await worker.close();
      await queue.close();
      await options.close?.();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
