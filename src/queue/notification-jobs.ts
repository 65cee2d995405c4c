/**
 * The notification queues' contract. Sending: one job per delivery, its id made of (route, seq), so
 * queueing a delivery again (each scan re-queues what is still pending, e.g. after Redis lost its
 * jobs) is a no-op while its job exists. Scanning: one job scheduler for the fleet reads the change
 * log every `scanInterval`. Payloads name a delivery only; never a URL or a secret.
 */
import { z } from 'zod';
import type { JobsOptions, Queue } from 'bullmq';

export const NOTIFICATION_QUEUE = 'phaselog-notifications';
export const NOTIFICATION_SCAN_QUEUE = 'phaselog-notification-scans';
export const NOTIFICATION_JOB = 'send-notification';
export const NOTIFICATION_SCAN_JOB = 'scan-change-log';
export const NOTIFICATION_SCHEDULER_ID = 'notifications.scan';

/** A send job's payload, validated when read back from Redis. */
export const notificationJobSchema = z.strictObject({ route: z.string().min(1), seq: z.string().regex(/^\d+$/) });
export type NotificationJobData = z.infer<typeof notificationJobSchema>;

/** The job id of a delivery (BullMQ ids may not contain ':'; route names cannot contain '.'). */
export function notificationJobId(route: string, seq: bigint): string {
  return `notify.${route}.${seq}`;
}

/** Queues the sending of deliveries; those already queued (or kept after completing) are not queued twice. */
export async function enqueueDeliveries(
  queue: Queue,
  deliveries: readonly { route: string; seq: bigint }[],
  retry: (route: string) => { attempts: number; backoff: number },
): Promise<void> {
  if (deliveries.length === 0) return;
  await queue.addBulk(
    deliveries.map(({ route, seq }) => {
      const { attempts, backoff } = retry(route);
      const opts: JobsOptions = {
        jobId: notificationJobId(route, seq),
        attempts,
        backoff: { type: 'exponential', delay: backoff },
        // Kept a day, so a re-queue of a delivery just sent is refused by its id.
        removeOnComplete: { age: 24 * 3600, count: 100_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      };
      return { name: NOTIFICATION_JOB, data: { route, seq: seq.toString() } satisfies NotificationJobData, opts };
    }),
  );
}

/**
 * Queues pending deliveries again (their jobs may be gone with Redis' data). A job that ended while
 * its delivery stayed pending (every attempt's row update failed with the database down, or the send
 * succeeded and recording it did not) would keep the delivery's id, and so the delivery, blocked for
 * as long as BullMQ keeps it: it is removed first. A delivery that was in fact recorded meanwhile is
 * skipped by its next attempt (attempts read the row), so at worst a send is repeated under the same
 * idempotency key, the guarantee's one window.
 */
export async function requeueDeliveries(
  queue: Queue,
  deliveries: readonly { route: string; seq: bigint }[],
  retry: (route: string) => { attempts: number; backoff: number },
): Promise<void> {
  for (const { route, seq } of deliveries) {
    const job = await queue.getJob(notificationJobId(route, seq));
    if (job === undefined) continue;
    const state = await job.getState();
    if (state === 'failed' || state === 'completed') await job.remove();
  }
  await enqueueDeliveries(queue, deliveries, retry);
}

/** Creates or updates the scan scheduler (also how one lost with Redis' data is re-created). */
export async function upsertScanScheduler(queue: Queue, everyMs: number): Promise<void> {
  await queue.upsertJobScheduler(
    NOTIFICATION_SCHEDULER_ID,
    { every: everyMs },
    {
      name: NOTIFICATION_SCAN_JOB,
      data: {},
      opts: { attempts: 1, removeOnComplete: { count: 10 }, removeOnFail: { count: 100 } },
    },
  );
}
