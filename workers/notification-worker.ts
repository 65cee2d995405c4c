/**
 * Transition notifications: a fleet-wide job scheduler scans the change log (src/notify/scan.ts)
 * and one job per delivery sends it (src/notify/deliver.ts), with retries and exponential backoff.
 *
 * Guarantees, and where each comes from:
 * - one delivery per (route, seq): the scan records it in the transaction that moves the route's
 *   cursor, under the cursor's row lock, and a unique index says so too;
 * - nothing lost when a worker is killed or Redis loses its data: the cursor and delivery rows are
 *   in PostgreSQL; each scan re-queues every pending delivery (a no-op while its job waits or runs), and
 *   the scheduler reconciler re-creates the scan scheduler;
 * - no second send of a delivery recorded as sent: a job sends only a pending delivery. A crash
 *   between the receiver's 2xx and that record sends it again, with the same
 *   `X-Phaselog-Delivery` key: at-least-once with a stable idempotency key, exactly once when no
 *   crash lands between send and record.
 */
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Metrics } from '../src/metrics/registry.ts';
import type { NotificationsConfig } from '../src/notify/config.ts';
import { attemptDelivery, type LiveRoute } from '../src/notify/deliver.ts';
import { resolveReceiver } from '../src/notify/receiver-files.ts';
import { scanRoute } from '../src/notify/scan.ts';
import {
  enqueueDeliveries,
  notificationJobSchema,
  requeueDeliveries,
  NOTIFICATION_QUEUE,
  NOTIFICATION_SCAN_QUEUE,
  NOTIFICATION_SCHEDULER_ID,
  upsertScanScheduler,
} from '../src/queue/notification-jobs.ts';
import { logRedisErrors } from '../src/runtime/redis-errors.ts';
import { TIMED_OUT, withDeadline } from '../src/runtime/wait.ts';
import { ConfigError } from '../src/config.ts';
import { createNotificationStore } from '../src/store/notification-store.ts';
import type { Db } from '../src/store/db.ts';
import { createHistoryReader } from '../src/store/read-history.ts';
import { startSchedulerReconciler } from './scheduler-reconciler.ts';

export interface NotificationWorkerOptions {
  db: Db;
  redisUrl: string;
  log: Logger;
  config: NotificationsConfig;
  /** Directory relative receiver files resolve from (phaselog.yaml's). */
  baseDir: string;
  /** Redis key prefix of the queues. @default 'bull' */
  prefix?: string;
  metrics?: Metrics;
  /** How many deliveries are sent at once. @default 8 */
  concurrency?: number;
  /** BullMQ lock of a send job; a killed worker's job is retried once it expires. @default 30000 */
  lockDurationMs?: number;
  /** How often the scan scheduler's presence is checked. @default 5000 */
  reconcileIntervalMs?: number;
  /** Longest wait for the workers to close. @default 5000 */
  closeTimeoutMs?: number;
}

export interface RunningNotificationWorker {
  queue: Queue;
  /** Scans every route now (tests; the scheduler does this every scanInterval). */
  scanNow(): Promise<void>;
  close(): Promise<void>;
}

/** Most pending deliveries re-queued per scan. */
const REQUEUE_LIMIT = 1000;
/** How often pending deliveries are re-queued without a sign that Redis lost jobs (a flush loses no connection). */
const REQUEUE_EVERY_MS = 10_000;

export async function startNotificationWorker(options: NotificationWorkerOptions): Promise<RunningNotificationWorker> {
  const { log, db } = options;
  const prefix = options.prefix ?? 'bull';
  const routes = new Map<string, LiveRoute>();
  const issues = [];
  for (const [i, route] of options.config.routes.entries()) {
    const resolved = resolveReceiver(route.receiver, options.baseDir);
    issues.push(
      ...resolved.issues.map((issue) => ({
        key: `notifications.routes.${i}.receiver.${issue.key}`,
        message: issue.message,
      })),
    );
    if (resolved.receiver !== undefined) routes.set(route.name, { config: route, receiver: resolved.receiver });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  const store = createNotificationStore(db);
  const history = createHistoryReader(db);
  for (const name of routes.keys()) await store.ensureCursor(name);

  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  logRedisErrors(connection, log, 'notification-queue');
  const queue = new Queue(NOTIFICATION_QUEUE, { connection, prefix });
  const scanQueue = new Queue(NOTIFICATION_SCAN_QUEUE, { connection, prefix });
  // The queues re-emit their connection's errors, logged above.
  queue.on('error', () => {});
  scanQueue.on('error', () => {});
  const retryOf = (route: string) => {
    const retry = routes.get(route)?.config.retry ?? { attempts: 1, backoff: 1000 };
    return { attempts: retry.attempts, backoff: retry.backoff };
  };
  const count = (route: string, result: string, by = 1): void => {
    if (by > 0) options.metrics?.notifications.inc({ route, result }, by);
  };

  let requeueWanted = true;
  let requeuedAt = 0;
  const scanAll = async (): Promise<void> => {
    let failed: unknown;
    for (const route of routes.values()) {
      // One route failing (its scan, or queueing its deliveries) does not stop the others'.
      try {
        const scanned = await scanRoute({ store, history }, route.config, () => new Date());
        count(route.config.name, 'suppressed', scanned.suppressed);
        await enqueueDeliveries(
          queue,
          scanned.due.map((seq) => ({ route: route.config.name, seq })),
          retryOf,
        );
      } catch (error) {
        failed ??= error;
      }
    }
    // Pending deliveries whose job Redis lost (a restart, a flush) are queued again; the others' ids
    // refuse it. Those due in this scan whose queueing failed above are among them. At once after a
    // sign that jobs may be gone (start, reconnect, a scheduler re-created), else now and then.
    if (failed !== undefined || requeueWanted || Date.now() - requeuedAt > REQUEUE_EVERY_MS) {
      requeueWanted = false;
      requeuedAt = Date.now();
      await requeueDeliveries(queue, await store.listPending([...routes.keys()], REQUEUE_LIMIT), retryOf).catch(
        (error: unknown) => {
          requeueWanted = true;
          throw error;
        },
      );
    }
    if (failed !== undefined) throw failed;
  };

  const scanWorker = new Worker(NOTIFICATION_SCAN_QUEUE, async () => scanAll(), { connection, prefix, concurrency: 1 });
  logRedisErrors(scanWorker, log, 'notification-scan-worker');
  scanWorker.on('failed', (_job, error) =>
    log.warn({ err: error }, 'scanning the change log for notifications failed; the next scan retries'),
  );

  const sendWorker = new Worker(
    NOTIFICATION_QUEUE,
    async (job) => {
      const payload = notificationJobSchema.safeParse(job.data);
      if (!payload.success) throw new UnrecoverableError('invalid notification job payload');
      const route = routes.get(payload.data.route);
      if (route === undefined)
        throw new UnrecoverableError(`notification route "${payload.data.route}" is not configured in this worker`);
      const outcome = await attemptDelivery(
        { store, history, ...(options.config.uiBaseUrl !== undefined ? { uiBaseUrl: options.config.uiBaseUrl } : {}) },
        route,
        BigInt(payload.data.seq),
      );
      count(route.config.name, outcome.result);
      if (outcome.result === 'retry') {
        log.debug(
          { route: route.config.name, seq: payload.data.seq, error: outcome.error, attempt: job.attemptsMade + 1 },
          'notification attempt failed; retrying',
        );
        throw new Error(outcome.error);
      }
      if (outcome.result === 'failed') {
        log.warn(
          { route: route.config.name, seq: payload.data.seq, error: outcome.error },
          'notification delivery failed',
        );
        throw new UnrecoverableError(outcome.error);
      }
      return outcome.result;
    },
    {
      connection,
      prefix,
      concurrency: options.concurrency ?? 8,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: Math.min(options.lockDurationMs ?? 30_000, 30_000),
      maxStalledCount: 5,
    },
  );
  logRedisErrors(sendWorker, log, 'notification-worker');

  await upsertScanScheduler(scanQueue, options.config.scanInterval);
  const reconciler = startSchedulerReconciler({
    schedulers: [
      {
        queue: scanQueue,
        id: NOTIFICATION_SCHEDULER_ID,
        upsert: () => upsertScanScheduler(scanQueue, options.config.scanInterval),
      },
    ],
    intervalMs: options.reconcileIntervalMs ?? 5000,
    connection,
    log: log.child({ unit: 'notification-schedulers' }),
    onRecreated: () => void (requeueWanted = true),
  });
  connection.on('ready', () => void (requeueWanted = true));
  log.info({ routes: [...routes.keys()], scanIntervalMs: options.config.scanInterval }, 'notification workers started');

  return {
    queue,
    scanNow: scanAll,
    async close() {
      reconciler.stop();
      // As the snapshot workers do: BullMQ's close waits on Redis, forever while it is down. A send cut
      // short is retried (its delivery is still pending), so shutdown need not wait longer.
      const closed = await withDeadline(
        Promise.all([scanWorker.close(), sendWorker.close()]).then(
          () => true,
          () => true,
        ),
        options.closeTimeoutMs ?? 5000,
      );
      if (closed === TIMED_OUT) {
        log.warn('notification workers did not close in time (Redis unreachable?); closing their connection');
        void Promise.all([scanWorker.close(true), sendWorker.close(true)]).catch(() => {});
        connection.disconnect();
        return;
      }
      await withDeadline(Promise.all([queue.close(), scanQueue.close()]), 1000);
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
