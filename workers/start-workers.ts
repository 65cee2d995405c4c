/**
 * The worker role's composition root: one BullMQ worker on the snapshot queue, one job scheduler
 * per cluster, and the per-cluster lock. Several processes may run it against the same Redis and
 * Postgres; each tick of each cluster is one job, processed by exactly one of them.
 *
 * Guarantees, and where each comes from:
 * - one job per cluster and tick: the scheduler's job id (`repeat:<scheduler>:<slot>`), or
 *   {@link snapshotJobId} for refreshes; BullMQ refuses a second job with a live id;
 * - one read of a cluster at a time: a per-cluster Redis lock; a job that finds it taken is
 *   delayed and tried again, never run beside the other;
 * - no partial or double write: the snapshot transaction locks the cluster row and skips ticks
 *   already written, and a killed process's transaction is rolled back by Postgres;
 * - every cluster of the configuration is registered with its snapshot interval, and clusters no
 *   longer configured are marked retired (an API-only process has no list and registers nothing);
 * - a killed worker's job is recovered by another worker once its BullMQ lock expires (stalled
 *   jobs); store failures are retried with exponential backoff; a job whose payload is invalid or
 *   whose cluster is not configured fails at once with `UnrecoverableError`;
 * - a killed worker's cluster lock is a short lease (renewed while its holder lives), so the next
 *   tick of that cluster runs within about one lease; a lock found held for longer than a tick
 *   should take is logged;
 * - job schedulers lost with Redis' data are re-created by a reconciler, and {@link RunningWorkers.recording}
 *   fails while they are missing or a cluster's snapshots have stopped completing.
 */
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { logRedisErrors } from '../src/runtime/redis-errors.ts';
import type { Config } from '../src/config.ts';
import { createClusterClient, type ClusterClient, type ClusterClientOptions } from '../src/kube/cluster-client.ts';
import type { ClusterHandle } from '../src/kube/clusters.ts';
import { createChangePublisher } from '../src/pubsub/change-publisher.ts';
import { createClusterLocks } from '../src/queue/cluster-lock.ts';
import { enqueueLiveSnapshot, enqueueSnapshot, scheduleSnapshots, snapshotSchedulerId, SNAPSHOT_QUEUE, snapshotJobSchema, upsertSnapshotScheduler } from '../src/queue/snapshot-jobs.ts';
import { ObservationMemos } from '../src/snapshot/memos.ts';
import type { ObserveClusterOptions } from '../src/snapshot/observe.ts';
import { createRecorder } from '../src/snapshot/record.ts';
import { snapshotCluster, type SnapshotOutcome } from '../src/snapshot/snapshot-cluster.ts';
import { createHealthChecker } from '../src/status/custom/health-checker.ts';
import { createClusterStore } from '../src/store/cluster-store.ts';
import { createSnapshotStore } from '../src/store/snapshot-store.ts';
import { createConditionStore } from '../src/store/condition-store.ts';
import { createCelChecks } from '../src/services/run-cel-checks.ts';
import type { CheckConfig } from '../src/checks/config.ts';
import type { ClusterObservation } from '../src/history/types.ts';
import { applyRetention, type RetentionPolicy } from '../src/store/retention.ts';
import { startLiveSnapshots, type LiveSnapshotOptions, type LiveTreeOptions } from '../src/snapshot/live.ts';
import { createTreePublisher, TREE_PREFIX } from '../src/pubsub/resource-trees.ts';
import { createRecordingCheck } from './recording-check.ts';
import { startSchedulerReconciler, type KeptScheduler } from './scheduler-reconciler.ts';
import type { Db } from '../src/store/prisma.ts';
import { TIMED_OUT, withDeadline } from '../src/runtime/wait.ts';
import type { Metrics } from '../src/metrics/registry.ts';
import { registerWorkerMetrics } from '../src/metrics/worker-metrics.ts';

/** Options of {@link startWorkers}. */
export interface StartWorkersOptions {
  config: Pick<Config, 'health' | 'baseDir'> & { snapshot: Pick<Config['snapshot'], 'interval' | 'jitter'> & Partial<Pick<Config['snapshot'], 'keepState'>> };
  db: Db;
  redisUrl: string;
  log: Logger;
  /** The clusters this process can read (every worker process should get the same list). */
  clusters: readonly ClusterHandle[];
  /**
   * Names of clusters configured but not loaded (a broken kubeconfig entry): still configured, so
   * not retired, but not read either. @default []
   */
  unloadedClusters?: readonly string[];
  /** Queue name and BullMQ key prefix (tests use unique ones). @default SNAPSHOT_QUEUE, 'bull' */
  queueName?: string;
  prefix?: string;
  /** Prefix of the pub/sub channels. @default 'phaselog' */
  channelPrefix?: string;
  /** Snapshots running at once in this process (different clusters). @default 4 */
  concurrency?: number;
  /** Longest wait for running snapshots and BullMQ when closing; then connections are cut. @default 5000 */
  closeTimeoutMs?: number;
  /** Upsert the job schedulers. @default true */
  schedule?: boolean;
  /**
   * BullMQ job lock (renewed every half of it while the job runs); a killed worker's job is picked
   * up after about this long plus `stalledIntervalMs`. @default 10000
   */
  lockDurationMs?: number;
  /** How often BullMQ looks for stalled jobs. @default 5000 */
  stalledIntervalMs?: number;
  /**
   * Per-cluster read lock lease, renewed every third of it while held: a killed holder frees its
   * cluster within this time. @default 6000
   */
  clusterLockTtlMs?: number;
  /** How often the job schedulers are checked and missing ones re-created. @default the snapshot interval, at most 30000 */
  reconcileIntervalMs?: number;
  /**
   * Longest time a cluster may go without a completed snapshot before {@link RunningWorkers.recording}
   * fails. @default 3 intervals + the cluster lock lease + 15000 (one read timeout)
   */
  recordingBoundMs?: number;
  /** Delay before a job that found its cluster locked tries again. @default 250 */
  lockedRetryDelayMs?: number;
  /** Extra observation options (redaction, read tuning). */
  observe?: ObserveClusterOptions;
  /** Compaction: a job scheduler running {@link applyRetention} every `intervalMs` (default 1 h). Off when omitted. */
  retention?: { policy: RetentionPolicy; intervalMs?: number };
  /** Watch the clusters and snapshot on change (debounced) as well as on schedule. Off when omitted. */
  live?: Omit<LiveSnapshotOptions, 'trees'> & { trees?: Omit<LiveTreeOptions, 'publish'> };
  /** Where snapshot durations, status changes, queue depth and watch counts are recorded. @default none */
  metrics?: Metrics;
  /** Checks; the cel ones run after each snapshot of the phases they select. @default [] */
  checks?: readonly CheckConfig[];
}

/** Running snapshot workers. */
export interface RunningWorkers {
  readonly queue: Queue;
  readonly worker: Worker;
  /** Queues an immediate snapshot of one cluster ("refresh now", watch events). */
  snapshotNow(cluster: string, tickAt?: number): Promise<string>;
  /**
   * The `recording` readiness check: rejects with a `NotRecordingError` (code SCHEDULER_MISSING,
   * SCHEDULERS_UNREADABLE or NOT_RECORDING) when a configured cluster has no job scheduler or no
   * snapshot of it completed within the bound.
   */
  recording(): Promise<void>;
  /** Re-creates missing job schedulers now (it also happens every interval and on reconnect); resolves with their ids. */
  reconcileSchedulers(): Promise<string[]>;
  /** Stops taking jobs, waits for running ones, closes connections and cluster clients. */
  close(): Promise<void>;
}

/** Starts the snapshot worker (and schedulers) for `clusters`. */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  const { config, db, log } = options;
  const queueName = options.queueName ?? SNAPSHOT_QUEUE;
  const prefix = options.prefix ?? 'bull';
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const lockRedis = new Redis(options.redisUrl, { maxRetriesPerRequest: 3 });
  logRedisErrors(connection, log, 'snapshot-queue');
  logRedisErrors(lockRedis, log, 'cluster-locks');
  const clients = new Map<string, ClusterClient>(options.clusters.map((handle) => [handle.name, createClusterClient(handle, clientOptions(handle.name, options.metrics))]));
  const health = config.health !== undefined ? await createHealthChecker(config.health, { baseDir: config.baseDir }) : undefined;
  for (const error of health?.errors ?? []) log.warn({ error }, 'custom health check not loaded');
  const observe: ObserveClusterOptions = { memos: new ObservationMemos(), ...options.observe, ...(health ? { customHealth: (object) => health.checker.evaluate(object) } : {}) };
  const publisher = createChangePublisher(options.redisUrl, { ...(options.channelPrefix !== undefined ? { prefix: options.channelPrefix } : {}), log });
  // The caller binds `part` (app.ts: part=worker); sub-units bind `unit`, so no JSON log line carries a key twice.
  const conditionStore = createConditionStore(db);
  const celChecks = (options.checks ?? []).some((c) => c.cel !== undefined) ? createCelChecks({ conditions: conditionStore, log: log.child({ unit: 'cel-checks' }) }, options.checks ?? []) : undefined;
  // Checks whose False condition makes the phase Failed: each snapshot reads their current conditions.
  const affecting = (options.checks ?? []).filter((c) => c.affectsStatus).map((c) => c.name);
  const affectingCel = new Set((options.checks ?? []).filter((c) => c.affectsStatus && c.cel !== undefined).map((c) => c.name));
  let snapshotSoon: (cluster: string) => void = () => {};
  const deps = {
    recorder: createRecorder(createSnapshotStore(db), { keepState: config.snapshot.keepState ?? true }),
    publisher,
    log: log.child({ unit: 'snapshot' }),
    observe,
    ...(celChecks
      ? {
          afterRecord: async (observation: ClusterObservation) => {
            const changes = await celChecks.afterSnapshot(observation, config.snapshot.interval);
            // A cel condition with affectsStatus that changed is folded in by the next snapshot: ask for it now.
            if (changes.some((c) => c.conditionType != null && affectingCel.has(c.conditionType.split('/')[0] ?? ''))) snapshotSoon(observation.cluster);
            return changes;
          },
        }
      : {}),
    ...(affecting.length > 0 ? { falseConditions: (cluster: string) => conditionStore.falseConditions(cluster, affecting) } : {}),
  };
  const lockTtlMs = options.clusterLockTtlMs ?? 6_000;
  const locks = createClusterLocks(lockRedis, { prefix: `${prefix}:${queueName}:cluster-lock`, ttlMs: lockTtlMs });
  const queue = new Queue(queueName, { connection, prefix });
  const schedule = options.schedule !== false;
  const recording = createRecordingCheck({
    queue, redis: lockRedis, key: `${prefix}:${queueName}:recorded`, clusters: [...clients.keys()], schedulers: schedule, log: log.child({ unit: 'recording' }),
    connected: () => connection.status === 'ready',
    boundMs: options.recordingBoundMs ?? 3 * config.snapshot.interval + lockTtlMs + 15_000,
  });
  // A tick should not wait on a lock longer than a tick takes: past that, the holder is stuck or very
  // slow. An episode is the lock found held again and again (a delayed job retries every few hundred
  // ms); a gap longer than a lease means the retry went to another process and this is a new episode.
  const heldSince = new Map<string, { since: number; seen: number; warned: boolean }>();
  const noteHeld = (cluster: string): void => {
    const now = Date.now();
    const episode = heldSince.get(cluster);
    if (episode === undefined || now - episode.seen > lockTtlMs) return void heldSince.set(cluster, { since: now, seen: now, warned: false });
    episode.seen = now;
    if (!episode.warned && now - episode.since > config.snapshot.interval + lockTtlMs) {
      log.warn({ cluster, heldForMs: now - episode.since }, 'cluster lock held past expectation; its holder is stuck or slow');
      episode.warned = true;
    }
  };
  // The queue re-emits its connection's errors, logged above; BullMQ writes unheard ones to stderr.
  queue.on('error', () => {});

  const processSnapshot = async (job: Job, token?: string): Promise<SnapshotOutcome> => {
    const payload = snapshotJobSchema.safeParse(job.data);
    if (!payload.success) throw new UnrecoverableError(`invalid snapshot job payload: ${payload.error.issues.map((i) => i.message).join('; ')}`);
    const client = clients.get(payload.data.cluster);
    if (client === undefined) throw new UnrecoverableError(`cluster "${payload.data.cluster}" is not configured in this worker`);
    const tickAt = payload.data.tickAt ?? scheduledSlot(job) ?? job.timestamp;
    const lock = await locks.tryAcquire(client.name);
    if (lock === undefined) {
      noteHeld(client.name);
      await job.moveToDelayed(Date.now() + (options.lockedRetryDelayMs ?? 250), token);
      throw new DelayedError();
    }
    heldSince.delete(client.name);
    const started = performance.now();
    const kind = payload.data.changed !== undefined ? 'live' : 'scheduled';
    try {
      const outcome = await snapshotCluster(deps, client, new Date(tickAt), payload.data.changed !== undefined ? { changed: payload.data.changed } : {}).catch((error: unknown) => {
        options.metrics?.snapshots.failed.inc({ cluster: client.name });
        options.metrics?.snapshots.duration.observe({ cluster: client.name, kind, outcome: 'error' }, (performance.now() - started) / 1000);
        throw error;
      });
      options.metrics?.snapshots.duration.observe({ cluster: client.name, kind, outcome: outcome.skipped !== undefined ? 'skipped' : (outcome.outcome ?? 'ok') }, (performance.now() - started) / 1000);
      if (outcome.written && outcome.changes > 0) options.metrics?.snapshots.statusChanges.inc({ cluster: client.name }, outcome.changes);
      // Only a snapshot of the whole cluster shows that recording goes on; a live one may cover one phase.
      if (outcome.live !== true && outcome.skipped !== 'NOTHING_AFFECTED') recording.completed(client.name);
      return outcome;
    } finally {
      await lock.release().catch(() => {});
    }
  };

  const worker = new Worker(queueName, processSnapshot, {
    connection,
    prefix,
    concurrency: options.concurrency ?? 4,
    lockDuration: options.lockDurationMs ?? 10_000,
    stalledInterval: options.stalledIntervalMs ?? 5_000,
    maxStalledCount: 2,
  });
  worker.on('failed', (job, error) => log.error({ err: error, jobId: job?.id, attempts: job?.attemptsMade }, 'snapshot job failed'));
  logRedisErrors(worker, log, 'snapshot-worker');
  // The configured list is known here only: record each cluster's interval (readers judge from it
  // whether a cluster is still observed) and retire the clusters no longer configured.
  const registered = await createClusterStore(db).registerClusters({ configured: [...clients.keys(), ...(options.unloadedClusters ?? [])], snapshotIntervalMs: config.snapshot.interval });
  if (registered.retired.length > 0) log.warn({ clusters: registered.retired }, 'clusters no longer configured are marked retired');
  if (registered.restored.length > 0) log.info({ clusters: registered.restored }, 'retired clusters are configured again');
  const scheduleOptions = { intervalMs: config.snapshot.interval, ...(config.snapshot.jitter !== undefined ? { jitterMs: config.snapshot.jitter } : {}) };
  if (schedule) await scheduleSnapshots(queue, [...clients.keys()], scheduleOptions);
  const retention = options.retention !== undefined ? await startRetention(options, connection, prefix, `${queueName}-retention`, log) : undefined;
  const kept: KeptScheduler[] = [
    ...(schedule ? [...clients.keys()].map((cluster) => ({ queue, id: snapshotSchedulerId(cluster), upsert: () => upsertSnapshotScheduler(queue, cluster, scheduleOptions) })) : []),
    ...(retention !== undefined ? [retention.scheduler] : []),
  ];
  const reconciler = startSchedulerReconciler({
    schedulers: kept,
    intervalMs: options.reconcileIntervalMs ?? Math.min(config.snapshot.interval, 30_000),
    connection,
    log: log.child({ unit: 'schedulers' }),
    onRecreated: () => recording.rescheduled(),
  });
  const live = options.live !== undefined ? await startLiveSnapshots(clients.values(), (cluster, tickAt, changed) => enqueueLiveSnapshot(queue, cluster, tickAt, changed), log.child({ unit: 'live' }), {
    ...options.live,
    // Kinds a custom health check covers keep whole objects in the caches; revisions are redacted as snapshots redact them.
    ...(health ? { wholeObjects: (apiVersion: string, kind: string) => health.checker.matches(apiVersion, kind) } : {}),
    ...(observe.redaction !== undefined ? { redaction: observe.redaction } : {}),
    ...(observe.owners !== undefined ? { owners: observe.owners } : {}),
    // Resource trees go to Redis for the API (which may run in another process); see src/pubsub/resource-trees.ts.
    trees: { ...options.live.trees, publish: createTreePublisher(lockRedis, { prefix: options.channelPrefix ?? TREE_PREFIX, ttlMs: 3 * (options.live.trees?.intervalMs ?? 10_000) }).publish },
  }) : undefined;
  if (options.metrics !== undefined) registerWorkerMetrics(options.metrics, queue, live);
  snapshotSoon = (cluster) => void enqueueSnapshot(queue, cluster).catch((err: unknown) => log.warn({ err, cluster }, 'could not queue the snapshot a changed affectsStatus condition asks for; the next tick records it'));
  log.info({ clusters: clients.size, queue: queueName, intervalMs: config.snapshot.interval, live: live !== undefined }, 'snapshot workers started');

  return {
    queue,
    worker,
    snapshotNow: (cluster, tickAt) => enqueueSnapshot(queue, cluster, tickAt),
    recording: () => recording.check(),
    reconcileSchedulers: () => reconciler.reconcile(),
    async close() {
      reconciler.stop();
      live?.close();
      // BullMQ's close waits on Redis; while Redis is down (or just after it came back, see
      // taskforcesh/bullmq#4656) it can wait forever. A snapshot cut short here is rolled back by
      // PostgreSQL and its job retried as stalled, so shutdown never needs to wait longer.
      if (!(await settlesWithin(worker.close(), options.closeTimeoutMs ?? 5000))) {
        log.warn({ timeoutMs: options.closeTimeoutMs ?? 5000 }, 'snapshot worker did not close in time (Redis unreachable?); closing its connections');
        void worker.close(true).catch(() => {});
        connection.disconnect();
        lockRedis.disconnect();
      }
      await settlesWithin(retention?.close() ?? Promise.resolve(), 1000);
      await settlesWithin(queue.close(), 1000);
      await publisher.close();
      health?.checker.close();
      for (const client of clients.values()) client.close();
      await Promise.all([connection.quit().catch(() => connection.disconnect()), lockRedis.quit().catch(() => lockRedis.disconnect())]);
    },
  };
}

/** A cluster client whose requests are counted by status code when metrics are on. */
function clientOptions(cluster: string, metrics: Metrics | undefined): ClusterClientOptions {
  return metrics === undefined ? {} : { transport: { onAnswer: (code) => metrics.kubeRequests.inc({ cluster, code }) } };
}

/** Whether `promise` settled within `ms` (a rejection counts as settled). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return (await withDeadline(promise.then(() => true, () => true), ms)) !== TIMED_OUT;
}

/** A scheduler job's slot: its id is `repeat:<scheduler>:<slot ms>` (its `prevMillis` can lag a slot). */
function scheduledSlot(job: Job): number | undefined {
  const match = /^repeat:[^:]+:(\d+)$/.exec(job.id ?? '');
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** One compaction job scheduler for the whole fleet; any worker process may run it. */
async function startRetention(options: StartWorkersOptions, connection: Redis, prefix: string, queueName: string, log: Logger): Promise<{ scheduler: KeptScheduler; close(): Promise<void> }> {
  const { policy, intervalMs = 3_600_000 } = options.retention as NonNullable<StartWorkersOptions['retention']>;
  const queue = new Queue(queueName, { connection, prefix });
  const scheduler: KeptScheduler = {
    queue,
    id: 'retention',
    upsert: () => queue.upsertJobScheduler('retention', { every: intervalMs }, { name: 'apply-retention', data: {}, opts: { attempts: 3, backoff: { type: 'exponential', delay: 5000 }, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } }),
  };
  queue.on('error', () => {}); // its connection's errors are logged by startWorkers
  await scheduler.upsert();
  const worker = new Worker(queueName, async () => {
    const removed = await applyRetention(options.db, policy);
    log.info({ removed }, 'retention applied');
    return removed;
  }, { connection, prefix, concurrency: 1 });
  logRedisErrors(worker, log, 'retention-worker');
  return {
    scheduler,
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
