/**
 * The snapshot queue's contract: its name, the job payload (cluster name, tick time and, for a live
 * snapshot, the identities of the changed objects; never credentials or object contents),
 * idempotent job ids, default retry policy and the per-cluster job schedulers.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ChangedObjects } from '../inventory/affected-phases.ts';
import type { ObjectRef } from '../inventory/types.ts';
import type { JobsOptions, Queue } from 'bullmq';

/** Default name of the snapshot queue. */
export const SNAPSHOT_QUEUE = 'phaselog-snapshots';
/** Job name of a cluster snapshot. */
export const SNAPSHOT_JOB = 'snapshot-cluster';
const SCHEDULER_PREFIX = 'snapshot.';

/**
 * Most changed objects a live snapshot job names; a burst with more is a snapshot of the whole
 * cluster (its job carries no `changed`).
 */
export const MAX_CHANGED_OBJECTS = 256;

/** An object's identity (never its contents). */
const objectRefSchema = z.strictObject({
  group: z.string(),
  kind: z.string().min(1),
  namespace: z.string(),
  name: z.string().min(1),
});

/** A snapshot job's payload, validated when read back from Redis. */
export const snapshotJobSchema = z.strictObject({
  cluster: z.string().min(1),
  /** Epoch ms of the tick; scheduled jobs take it from their scheduler slot instead. */
  tickAt: z.number().int().nonnegative().optional(),
  /** A live snapshot's changed objects, by identity: only the phases they affect are observed. */
  changed: z
    .strictObject({
      objects: z.array(objectRefSchema).max(MAX_CHANGED_OBJECTS),
      inventories: z.array(objectRefSchema).max(MAX_CHANGED_OBJECTS),
    })
    .optional(),
});

/** A snapshot job's payload. */
export type SnapshotJobData = z.infer<typeof snapshotJobSchema>;

/** Retries with exponential backoff (1 s, 2 s, 4 s, ...); completed jobs are kept an hour so a duplicate id is refused. */
export const SNAPSHOT_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** BullMQ job ids may not contain ':'; cluster names (EKS ARNs) may. */
function encodeCluster(cluster: string): string {
  return encodeURIComponent(cluster).replaceAll('.', '%2E');
}

/** The id of a snapshot of `cluster` for the tick at `tickAt`: adding it twice queues it once. */
export function snapshotJobId(cluster: string, tickAt: number): string {
  return `snapshot.${encodeCluster(cluster)}.${tickAt}`;
}

/** The job scheduler id of a cluster. */
export function snapshotSchedulerId(cluster: string): string {
  return `${SCHEDULER_PREFIX}${encodeCluster(cluster)}`;
}

/**
 * Spreads clusters over the interval: a stable offset in [0, jitterMs) from the cluster name, so
 * a fleet's ticks do not all fire in the same millisecond, and a cluster's ticks stay evenly spaced.
 */
export function jitterOffset(cluster: string, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  let hash = 2166136261;
  for (let i = 0; i < cluster.length; i += 1) hash = Math.imul(hash ^ cluster.charCodeAt(i), 16777619) >>> 0;
  return hash % Math.floor(jitterMs);
}

/** Options of {@link scheduleSnapshots}. */
export interface ScheduleOptions {
  intervalMs: number;
  /** @default a tenth of the interval */
  jitterMs?: number;
}

/**
 * Creates or updates one job scheduler per cluster (`every` interval plus its jitter offset), and
 * removes the schedulers of clusters no longer configured. Safe to call from every worker process.
 */
export async function scheduleSnapshots(
  queue: Queue,
  clusters: readonly string[],
  options: ScheduleOptions,
): Promise<void> {
  const wanted = new Set(clusters.map(snapshotSchedulerId));
  for (const cluster of clusters) await upsertSnapshotScheduler(queue, cluster, options);
  for (const scheduler of await queue.getJobSchedulers()) {
    const id = scheduler.key;
    if (id.startsWith(SCHEDULER_PREFIX) && !wanted.has(id)) await queue.removeJobScheduler(id);
  }
}

/** Creates or updates the job scheduler of one cluster (also how a scheduler lost with Redis' data is re-created). */
export async function upsertSnapshotScheduler(queue: Queue, cluster: string, options: ScheduleOptions): Promise<void> {
  const jitter = options.jitterMs ?? Math.floor(options.intervalMs / 10);
  await queue.upsertJobScheduler(
    snapshotSchedulerId(cluster),
    { every: options.intervalMs, offset: jitterOffset(cluster, Math.min(jitter, options.intervalMs)) },
    { name: SNAPSHOT_JOB, data: { cluster } satisfies SnapshotJobData, opts: SNAPSHOT_JOB_OPTIONS },
  );
}

/** Queues a snapshot of `cluster` for `tickAt` (a refresh, a watch event); a second call for the same tick is a no-op. */
export async function enqueueSnapshot(queue: Queue, cluster: string, tickAt: number = Date.now()): Promise<string> {
  const job = await queue.add(SNAPSHOT_JOB, { cluster, tickAt } satisfies SnapshotJobData, {
    ...SNAPSHOT_JOB_OPTIONS,
    jobId: snapshotJobId(cluster, tickAt),
  });
  return job.id ?? snapshotJobId(cluster, tickAt);
}

/**
 * Queues a live snapshot of the phases `changed` affects (of the whole cluster when `changed` is
 * undefined). The id names the changes too: worker processes that saw the same changes in the
 * same debounce slot queue one job, and a process that saw others queues its own.
 */
export async function enqueueLiveSnapshot(
  queue: Queue,
  cluster: string,
  tickAt: number,
  changed: ChangedObjects | undefined,
): Promise<string> {
  if (changed === undefined) return enqueueSnapshot(queue, cluster, tickAt);
  const data = {
    cluster,
    tickAt,
    changed: { objects: changed.objects.map(refOnly), inventories: changed.inventories.map(refOnly) },
  } satisfies SnapshotJobData;
  const digest = createHash('sha256').update(JSON.stringify(data.changed)).digest('base64url').slice(0, 16);
  const jobId = `${snapshotJobId(cluster, tickAt)}.${digest}`;
  const job = await queue.add(SNAPSHOT_JOB, data, { ...SNAPSHOT_JOB_OPTIONS, jobId });
  return job.id ?? jobId;
}

function refOnly(ref: ObjectRef): { group: string; kind: string; namespace: string; name: string } {
  return { group: ref.group, kind: ref.kind, namespace: ref.namespace, name: ref.name };
}

/** The queue of one worker instance, where jobs for the clusters it owns are handed on. */
export function ownerQueueName(queueName: string, instance: string): string {
  // BullMQ queue names may not contain ':'; instances are `<worker id>#<hex>`.
  return `${queueName}.owner.${encodeURIComponent(instance)}`;
}

/** The id a job keeps when handed on: scheduler ids (`repeat:...`) are BullMQ's own, so those get the tick's id. */
export function forwardedJobId(jobId: string | undefined, cluster: string, tickAt: number): string {
  return jobId === undefined || jobId.startsWith('repeat:') ? snapshotJobId(cluster, tickAt) : jobId;
}
