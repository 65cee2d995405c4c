/**
 * "Refresh now": queues a snapshot job of a cluster for this moment (the same job the scheduler and
 * watch events queue, so the one snapshot core runs in whichever worker takes it) and waits for it
 * to finish. Works the same whether the workers run in this process (role all) or elsewhere.
 */
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { logRedisErrors } from '../runtime/redis-errors.ts';
import { enqueueSnapshot, SNAPSHOT_QUEUE } from '../queue/snapshot-jobs.ts';
import type { SnapshotOutcome } from '../snapshot/snapshot-cluster.ts';

/** Outcome of {@link Refresher.refreshCluster}. */
export type RefreshOutcome =
  { ok: true; snapshot: SnapshotOutcome } | { ok: false; kind: 'TIMEOUT' | 'FAILED'; message: string };

export interface Refresher {
  refreshCluster(cluster: string): Promise<RefreshOutcome>;
  close(): Promise<void>;
}

/** Options of {@link createRefresher}. */
export interface RefresherOptions {
  redisUrl: string;
  /** Queue name and BullMQ prefix the workers use. @default SNAPSHOT_QUEUE, 'bull' */
  queueName?: string;
  prefix?: string;
  /** Longest wait for the snapshot. @default 30000 */
  timeoutMs?: number;
  /** Where Redis connection errors are logged (once per change of state). Swallowed when omitted. */
  log?: Logger;
}

export function createRefresher(options: RefresherOptions): Refresher {
  const queueName = options.queueName ?? SNAPSHOT_QUEUE;
  const prefix = options.prefix ?? 'bull';
  let started: Promise<{ queue: Queue; events: QueueEvents; connection: Redis }> | undefined;
  const start = () =>
    (started ??= (async () => {
      const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
      logRedisErrors(connection, options.log, 'refresh-queue');
      const queue = new Queue(queueName, { connection, prefix });
      // The Queue re-emits its connection's errors (logged above); BullMQ writes unheard ones to stderr.
      queue.on('error', () => {});
      const events = new QueueEvents(queueName, { connection: { url: options.redisUrl }, prefix });
      logRedisErrors(events, options.log, 'refresh-events');
      await events.waitUntilReady();
      return { queue, events, connection };
    })());
  return {
    async refreshCluster(cluster) {
      const { queue, events } = await start();
      const id = await enqueueSnapshot(queue, cluster, Date.now());
      const job = await queue.getJob(id);
      if (job === undefined) return { ok: false, kind: 'FAILED', message: `the snapshot job of ${cluster} vanished` };
      const timeoutMs = options.timeoutMs ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<RefreshOutcome>((resolve) => {
        timer = setTimeout(
          () =>
            resolve({
              ok: false,
              kind: 'TIMEOUT',
              message: `no snapshot worker finished ${cluster} within ${timeoutMs / 1000}s`,
            }),
          timeoutMs,
        );
      });
      const finished = job.waitUntilFinished(events).then(
        (snapshot: SnapshotOutcome): RefreshOutcome => ({ ok: true, snapshot }),
        (error: unknown): RefreshOutcome => ({
          ok: false,
          kind: 'FAILED',
          message: `the snapshot of ${cluster} failed: ${(error as Error).message}`,
        }),
      );
      try {
        return await Promise.race([finished, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      const current = started;
      started = undefined;
      if (!current) return;
      const { queue, events, connection } = await current;
      await events.close();
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
