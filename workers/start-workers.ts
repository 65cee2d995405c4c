/**
 * The worker role's composition root: one BullMQ worker on the snapshot queue, one job scheduler
 * per cluster, cluster ownership and the per-cluster lock. Several processes may run it against the
 * same Redis and Postgres; each tick of each cluster is one job, processed by exactly one of them.
 *
 * Clusters are sharded: each is owned by one live process at a time (src/queue/ownership.ts), and
 * only its owner watches it, keeps its state and runs its snapshots. Any process may take a job
 * from the shared queue (schedulers, refreshes); for a cluster it does not own it hands the job on
 * to the owner's own queue and waits for the owner's outcome. A new owner snapshots the cluster
 * at once, diffing against the store, so nothing that changed during a handover is lost.
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
import { DelayedError, Queue, QueueEvents, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { logRedisErrors } from '../src/runtime/redis-errors.ts';
import type { Config } from '../src/config.ts';
import { createClusterClient, type ClusterClient, type ClusterClientOptions } from '../src/kube/cluster-client.ts';
import type { ClusterHandle } from '../src/kube/clusters.ts';
import { createChangePublisher } from '../src/pubsub/change-publisher.ts';
import { createClusterLocks } from '../src/queue/cluster-lock.ts';
import {
  enqueueLiveSnapshot,
  enqueueSnapshot,
  forwardedJobId,
  ownerQueueName,
  scheduleSnapshots,
  snapshotSchedulerId,
  SNAPSHOT_JOB,
  SNAPSHOT_JOB_OPTIONS,
  SNAPSHOT_QUEUE,
  snapshotJobSchema,
  upsertSnapshotScheduler,
} from '../src/queue/snapshot-jobs.ts';
import { newInstance, ownershipPrefix, startOwnership, workerOf, type Ownership } from '../src/queue/ownership.ts';
import { ObservationMemos } from '../src/snapshot/memos.ts';
import type { ObserveClusterOptions } from '../src/snapshot/observe.ts';
import { createRecorder } from '../src/snapshot/record.ts';
import { snapshotCluster, type SnapshotOutcome } from '../src/snapshot/snapshot-cluster.ts';
import { createHealthChecker } from '../src/status/custom/health-checker.ts';
import { createClusterStore } from '../src/store/cluster-store.ts';
import { createSnapshotStore } from '../src/store/snapshot-store.ts';
import { createConditionStore } from '../src/store/condition-store.ts';
import { createCelChecks } from '../src/services/run-cel-checks.ts';
import { createHolderConditions } from '../src/services/record-holder-conditions.ts';
import type { CheckConfig } from '../src/checks/config.ts';
import type { ClusterObservation } from '../src/history/types.ts';
import { applyRetention, type RetentionPolicy } from '../src/store/retention.ts';
import { createLiveClusters, type LiveSnapshotOptions, type LiveTreeOptions } from '../src/snapshot/live.ts';
import { createTreePublisher, TREE_PREFIX } from '../src/pubsub/resource-trees.ts';
import { startLiveStatusResponder } from '../src/pubsub/live-status.ts';
import { readLiveStatuses } from '../src/kube/read-live-status.ts';
import { createRecordingCheck } from './recording-check.ts';
import { startSchedulerReconciler, type KeptScheduler } from './scheduler-reconciler.ts';
import type { Db } from '../src/store/db.ts';
import { TIMED_OUT, withDeadline } from '../src/runtime/wait.ts';
import type { Metrics } from '../src/metrics/registry.ts';
import { registerWorkerMetrics } from '../src/metrics/worker-metrics.ts';

/** Options of {@link startWorkers}. */
export interface StartWorkersOptions {
  config: Pick<Config, 'health' | 'baseDir'> & {
    snapshot: Pick<Config['snapshot'], 'interval' | 'jitter'> & Partial<Pick<Config['snapshot'], 'keepState'>>;
  };
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
  /** This process's worker id in the cluster ownership (`worker.id`). @default `<host>-<pid>` */
  workerId?: string;
  /**
   * Cluster ownership timing: membership and leases are renewed every `heartbeatMs`, and a killed
   * worker's clusters are taken over after about `leaseMs + heartbeatMs`. @default 2000 and 10000
   */
  ownership?: { heartbeatMs?: number; leaseMs?: number };
}

/** Running snapshot workers. */
export interface RunningWorkers {
  readonly queue: Queue;
  /** The worker on the shared queue (schedulers, refreshes): it snapshots owned clusters and hands the others on. */
  readonly worker: Worker;
  /** This process's own queue: jobs handed on to it for the clusters it owns, and its live snapshots. */
  readonly ownQueue: Queue;
  /** The worker on {@link RunningWorkers.ownQueue}: where this process's snapshots run. */
  readonly ownWorker: Worker;
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
  /** This process's share of the clusters. */
  readonly ownership: Ownership;
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
  // This process in the cluster ownership; its API requests carry its name (API server audit logs).
  const instance = newInstance(options.workerId);
  const clients = new Map<string, ClusterClient>(
    options.clusters.map((handle) => [
      handle.name,
      createClusterClient(handle, clientOptions(handle.name, instance, options.metrics)),
    ]),
  );
  const health =
    config.health !== undefined ? await createHealthChecker(config.health, { baseDir: config.baseDir }) : undefined;
  for (const error of health?.errors ?? []) log.warn({ error }, 'custom health check not loaded');
  const observe: ObserveClusterOptions = {
    memos: new ObservationMemos(),
    ...options.observe,
    ...(health ? { customHealth: (object) => health.checker.evaluate(object) } : {}),
  };
  const publisher = createChangePublisher(options.redisUrl, {
    ...(options.channelPrefix !== undefined ? { prefix: options.channelPrefix } : {}),
    log,
  });
  // The caller binds `part` (app.ts: part=worker); sub-units bind `unit`, so no JSON log line carries a key twice.
  const conditionStore = createConditionStore(db);
  const holderConditions = createHolderConditions(conditionStore);
  const celChecks = (options.checks ?? []).some((c) => c.cel !== undefined)
    ? createCelChecks({ conditions: conditionStore, log: log.child({ unit: 'cel-checks' }) }, options.checks ?? [])
    : undefined;
  // Checks whose False condition makes the phase Failed: each snapshot reads their current conditions.
  const affecting = (options.checks ?? []).filter((c) => c.affectsStatus).map((c) => c.name);
  const affectingCel = new Set(
    (options.checks ?? []).filter((c) => c.affectsStatus && c.cel !== undefined).map((c) => c.name),
  );
  let snapshotSoon: (cluster: string) => void = () => {};
  const deps = {
    // Each owned cluster's state stays valid between its snapshots (no other worker writes it): keep every one this worker may own.
    recorder: createRecorder(createSnapshotStore(db), {
      keepState: config.snapshot.keepState ?? true,
      maxKeptClusters: Math.max(64, clients.size),
    }),
    publisher,
    log: log.child({ unit: 'snapshot' }),
    observe,
    afterRecord: async (observation: ClusterObservation) => {
      // The holders' conditions first: their verdict is already in the phases' statuses.
      const holders = await holderConditions.afterSnapshot(observation, config.snapshot.interval);
      if (celChecks === undefined) return holders;
      const changes = await celChecks.afterSnapshot(observation, config.snapshot.interval);
      // A cel condition with affectsStatus that changed is folded in by the next snapshot: ask for it now.
      if (changes.some((c) => c.conditionType != null && affectingCel.has(c.conditionType.split('/')[0] ?? '')))
        snapshotSoon(observation.cluster);
      return [...holders, ...changes];
    },
    ...(affecting.length > 0
      ? { falseConditions: (cluster: string) => conditionStore.falseConditions(cluster, affecting) }
      : {}),
  };
  const lockTtlMs = options.clusterLockTtlMs ?? 6_000;
  const locks = createClusterLocks(lockRedis, { prefix: `${prefix}:${queueName}:cluster-lock`, ttlMs: lockTtlMs });
  const queue = new Queue(queueName, { connection, prefix });
  const schedule = options.schedule !== false;
  const recording = createRecordingCheck({
    queue,
    redis: lockRedis,
    key: `${prefix}:${queueName}:recorded`,
    clusters: [...clients.keys()],
    schedulers: schedule,
    log: log.child({ unit: 'recording' }),
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
    if (episode === undefined || now - episode.seen > lockTtlMs)
      return void heldSince.set(cluster, { since: now, seen: now, warned: false });
    episode.seen = now;
    if (!episode.warned && now - episode.since > config.snapshot.interval + lockTtlMs) {
      log.warn(
        { cluster, heldForMs: now - episode.since },
        'cluster lock held past expectation; its holder is stuck or slow',
      );
      episode.warned = true;
    }
  };
  // The queue re-emits its connection's errors, logged above; BullMQ writes unheard ones to stderr.
  queue.on('error', () => {});

  // Owners' queues and their events, for handing jobs on and waiting for their outcome; dropped
  // once their instance has left.
  const owners = new Map<string, { queue: Queue; events: QueueEvents; ready: Promise<unknown> }>();
  const ownerOf = (instance: string) => {
    let entry = owners.get(instance);
    if (entry === undefined) {
      const name = ownerQueueName(queueName, instance);
      const q = new Queue(name, { connection, prefix });
      q.on('error', () => {});
      // Every routed job waiting on this owner listens for its closing; the router's concurrency bounds them.
      q.setMaxListeners(0);
      const events = new QueueEvents(name, { connection: { url: options.redisUrl }, prefix });
      events.on('error', () => {});
      entry = { queue: q, events, ready: events.waitUntilReady() };
      owners.set(instance, entry);
    }
    return entry;
  };
  const dropOwner = (instance: string): void => {
    const entry = owners.get(instance);
    owners.delete(instance);
    void entry?.events.close().catch(() => {});
    void entry?.queue.close().catch(() => {});
  };
  const ownershipRetryMs = 500;
  const inflight = new Map<string, Promise<unknown>>();

  // Resource trees go to Redis for the API (which may run in another process); see src/pubsub/resource-trees.ts.
  const treePublisher = createTreePublisher(lockRedis, {
    prefix: options.channelPrefix ?? TREE_PREFIX,
    ttlMs: 3 * (options.live?.trees?.intervalMs ?? 10_000),
  });
  const live =
    options.live !== undefined
      ? createLiveClusters(
          (cluster, tickAt, changed) => enqueueLiveSnapshot(ownQueue, cluster, tickAt, changed),
          log.child({ unit: 'live' }),
          {
            ...options.live,
            // Kinds a custom health check covers keep whole objects in the caches; revisions are redacted as snapshots redact them.
            ...(health
              ? { wholeObjects: (apiVersion: string, kind: string) => health.checker.matches(apiVersion, kind) }
              : {}),
            ...(observe.redaction !== undefined ? { redaction: observe.redaction } : {}),
            ...(observe.owners !== undefined ? { owners: observe.owners } : {}),
            trees: { ...options.live.trees, publish: treePublisher.publish, forget: treePublisher.forget },
          },
        )
      : undefined;
  // Before any snapshot can take the database's connections. The configured list is known here only: record each cluster's interval (readers judge from it
  // whether a cluster is still observed) and retire the clusters no longer configured.
  const registered = await createClusterStore(db).registerClusters({
    configured: [...clients.keys(), ...(options.unloadedClusters ?? [])],
    snapshotIntervalMs: config.snapshot.interval,
  });
  if (registered.retired.length > 0)
    log.warn({ clusters: registered.retired }, 'clusters no longer configured are marked retired');
  if (registered.restored.length > 0)
    log.info({ clusters: registered.restored }, 'retired clusters are configured again');
  const scheduleOptions = {
    intervalMs: config.snapshot.interval,
    ...(config.snapshot.jitter !== undefined ? { jitterMs: config.snapshot.jitter } : {}),
  };
  if (schedule) await scheduleSnapshots(queue, [...clients.keys()], scheduleOptions);
  // Jobs for the clusters this process owns arrive on its own queue (handed on by whichever process
  // took them from the shared one); live snapshots of its watches go there directly.
  const ownQueue = ownerOf(instance).queue;
  const ownership = await startOwnership({
    redis: lockRedis,
    prefix: ownershipPrefix(prefix, queueName),
    instance,
    ...options.ownership,
    clusters: [...clients.keys()],
    log: log.child({ unit: 'ownership' }),
    acquire: async (cluster) => {
      // The first snapshot of a new owner diffs against the store: whatever changed while nobody owned the cluster is recorded.
      await enqueueSnapshot(ownQueue, cluster).catch((err: unknown) =>
        log.warn(
          { err, cluster },
          'could not queue the first snapshot of an acquired cluster; its next tick records it',
        ),
      );
      const client = clients.get(cluster);
      if (live !== undefined && client !== undefined) await live.add(client);
    },
    release: async (cluster) => {
      live?.remove(cluster);
      await inflight.get(cluster);
    },
    onGone: (gone) => void obliterateQueue(ownerQueueName(queueName, gone), connection, prefix, log),
    onRound: (members) => {
      for (const known of [...owners.keys()]) if (known !== instance && !members.includes(known)) dropOwner(known);
    },
  });

  // Live status blocks on demand (Resource.liveStatus): the API asks this worker for its own clusters only.
  const liveStatus = await startLiveStatusResponder({
    redisUrl: options.redisUrl,
    publisher: lockRedis,
    prefix: options.channelPrefix ?? TREE_PREFIX,
    instance,
    log: log.child({ unit: 'live-status' }),
    answer: async (cluster, objects, timeoutMs) => {
      const client = clients.get(cluster);
      if (client === undefined || !ownership.owns(cluster)) return 'NOT_OWNED';
      return readLiveStatuses(client, objects, { timeoutMs });
    },
  });

  const parseJob = (job: Job) => {
    const payload = snapshotJobSchema.safeParse(job.data);
    if (!payload.success)
      throw new UnrecoverableError(
        `invalid snapshot job payload: ${payload.error.issues.map((i) => i.message).join('; ')}`,
      );
    const client = clients.get(payload.data.cluster);
    if (client === undefined)
      throw new UnrecoverableError(`cluster "${payload.data.cluster}" is not configured in this worker`);
    return { data: payload.data, client, tickAt: payload.data.tickAt ?? scheduledSlot(job) ?? job.timestamp };
  };

  /**
   * A job of the shared queue: handed on to the cluster's owner (this process or another), whose
   * outcome it waits for and returns, so whoever queued it (a refresh, a scheduler) sees the
   * snapshot's own outcome. Should the owner leave first, this attempt fails and the retry goes to
   * the next owner.
   */
  const routeSnapshot = async (job: Job, token?: string): Promise<SnapshotOutcome> => {
    const { data, client, tickAt } = parseJob(job);
    const own = ownership;
    const holder = own.owns(client.name) ? own.instance : await own.holder(client.name);
    if (holder === undefined || (holder !== own.instance && !own.isLive(holder))) {
      // No live owner yet (a handover in progress): try again shortly.
      await job.moveToDelayed(Date.now() + ownershipRetryMs, token);
      throw new DelayedError();
    }
    const target = ownerOf(holder);
    await target.ready;
    // One attempt, one handed-on job: a retry after the owner changed is a job of its own.
    const jobId = `${forwardedJobId(job.id, client.name, tickAt)}.${job.attemptsMade}`;
    // A refresh that waited for an owner reads the cluster now, and is recorded as of now: its old
    // moment would be older than the new owner's first snapshot and written as stale. Scheduler
    // slots and live snapshots keep their moments.
    const waited =
      data.changed === undefined && !(job.id ?? '').startsWith('repeat:') && Date.now() - tickAt > ownershipRetryMs;
    const handed = await target.queue.add(
      SNAPSHOT_JOB,
      { ...data, tickAt: waited ? Date.now() : tickAt },
      { ...SNAPSHOT_JOB_OPTIONS, attempts: 1, jobId },
    );
    let watch: NodeJS.Timeout | undefined;
    const ownerLeft = new Promise<never>((_, reject) => {
      watch = setInterval(() => {
        if (holder !== own.instance && !own.isLive(holder))
          reject(
            new Error(
              `the owner of ${client.name} (${workerOf(holder)}) left before snapshotting it; retried on the next owner`,
            ),
          );
      }, ownershipRetryMs);
    });
    try {
      const outcome = (await Promise.race([handed.waitUntilFinished(target.events), ownerLeft])) as SnapshotOutcome;
      if (outcome.skipped === 'NOT_OWNER')
        throw new Error(`${client.name} changed owner before its snapshot ran; retried on the new owner`);
      return outcome;
    } finally {
      clearInterval(watch);
    }
  };

  /** A job of this process's own queue: the snapshot itself, of a cluster this process owns. */
  const processSnapshot = async (job: Job, token?: string): Promise<SnapshotOutcome> => {
    const { data, client, tickAt } = parseJob(job);
    // Owned no more (given up since the job was handed on): the router retries it on the new owner.
    if (!ownership.owns(client.name))
      return {
        cluster: client.name,
        tickAt: new Date(tickAt).toISOString(),
        written: false,
        skipped: 'NOT_OWNER',
        changes: 0,
        rows: 0,
        published: false,
      };
    const lock = await locks.tryAcquire(client.name);
    if (lock === undefined) {
      noteHeld(client.name);
      await job.moveToDelayed(Date.now() + (options.lockedRetryDelayMs ?? 250), token);
      throw new DelayedError();
    }
    heldSince.delete(client.name);
    const started = performance.now();
    const kind = data.changed !== undefined ? 'live' : 'scheduled';
    let finished: () => void = () => {};
    inflight.set(client.name, new Promise<void>((resolve) => (finished = resolve)));
    try {
      const outcome = await snapshotCluster(
        deps,
        client,
        new Date(tickAt),
        data.changed !== undefined ? { changed: data.changed } : {},
      ).catch((error: unknown) => {
        options.metrics?.snapshots.failed.inc({ cluster: client.name });
        options.metrics?.snapshots.duration.observe(
          { cluster: client.name, kind, outcome: 'error' },
          (performance.now() - started) / 1000,
        );
        throw error;
      });
      options.metrics?.snapshots.duration.observe(
        { cluster: client.name, kind, outcome: outcome.skipped !== undefined ? 'skipped' : (outcome.outcome ?? 'ok') },
        (performance.now() - started) / 1000,
      );
      if (outcome.written && outcome.changes > 0)
        options.metrics?.snapshots.statusChanges.inc({ cluster: client.name }, outcome.changes);
      // Only a snapshot of the whole cluster shows that recording goes on; a live one may cover one phase.
      if (outcome.live !== true && outcome.skipped !== 'NOTHING_AFFECTED') recording.completed(client.name);
      return outcome;
    } finally {
      inflight.delete(client.name);
      finished();
      await lock.release().catch(() => {});
    }
  };

  // Routing mostly waits on the owners, so it takes many jobs at once; snapshots run at `concurrency` in the own queue.
  const worker = new Worker(queueName, routeSnapshot, {
    connection,
    prefix,
    concurrency: Math.max(16, 4 * (options.concurrency ?? 4)),
    lockDuration: options.lockDurationMs ?? 10_000,
    stalledInterval: options.stalledIntervalMs ?? 5_000,
    maxStalledCount: 2,
  });
  worker.on('failed', (job, error) =>
    log.error({ err: error, jobId: job?.id, attempts: job?.attemptsMade }, 'snapshot job failed'),
  );
  logRedisErrors(worker, log, 'snapshot-worker');
  const ownWorker = new Worker(ownQueue.name, processSnapshot, {
    connection,
    prefix,
    concurrency: options.concurrency ?? 4,
    lockDuration: options.lockDurationMs ?? 10_000,
    stalledInterval: options.stalledIntervalMs ?? 5_000,
    maxStalledCount: 2,
  });
  ownWorker.on('failed', (job, error) =>
    log.error({ err: error, jobId: job?.id, attempts: job?.attemptsMade }, 'snapshot job failed'),
  );
  logRedisErrors(ownWorker, log, 'owned-snapshot-worker');
  const retention =
    options.retention !== undefined
      ? await startRetention(options, connection, prefix, `${queueName}-retention`, log)
      : undefined;
  const kept: KeptScheduler[] = [
    ...(schedule
      ? [...clients.keys()].map((cluster) => ({
          queue,
          id: snapshotSchedulerId(cluster),
          upsert: () => upsertSnapshotScheduler(queue, cluster, scheduleOptions),
        }))
      : []),
    ...(retention !== undefined ? [retention.scheduler] : []),
  ];
  const reconciler = startSchedulerReconciler({
    schedulers: kept,
    intervalMs: options.reconcileIntervalMs ?? Math.min(config.snapshot.interval, 30_000),
    connection,
    log: log.child({ unit: 'schedulers' }),
    onRecreated: () => recording.rescheduled(),
  });
  if (options.metrics !== undefined)
    registerWorkerMetrics(options.metrics, queue, live, { queue: ownQueue, owned: () => ownership.owned().length });
  snapshotSoon = (cluster) =>
    void enqueueSnapshot(queue, cluster).catch((err: unknown) =>
      log.warn(
        { err, cluster },
        'could not queue the snapshot a changed affectsStatus condition asks for; the next tick records it',
      ),
    );
  log.info(
    {
      clusters: clients.size,
      owned: ownership.owned().length,
      worker: ownership.instance,
      queue: queueName,
      intervalMs: config.snapshot.interval,
      live: live !== undefined,
    },
    'snapshot workers started',
  );

  return {
    queue,
    worker,
    ownQueue,
    ownWorker,
    snapshotNow: (cluster, tickAt) => enqueueSnapshot(queue, cluster, tickAt),
    recording: () => recording.check(),
    reconcileSchedulers: () => reconciler.reconcile(),
    ownership,
    async close() {
      reconciler.stop();
      // Giving the clusters up first lets the other workers take them over at once, not after the leases ran out.
      await settlesWithin(ownership.close(), options.closeTimeoutMs ?? 5000);
      live?.close();
      // BullMQ's close waits on Redis; while Redis is down (or just after it came back, see
      // taskforcesh/bullmq#4656) it can wait forever. A snapshot cut short here is rolled back by
      // PostgreSQL and its job retried as stalled, so shutdown never needs to wait longer.
      if (!(await settlesWithin(Promise.all([worker.close(), ownWorker.close()]), options.closeTimeoutMs ?? 5000))) {
        log.warn(
          { timeoutMs: options.closeTimeoutMs ?? 5000 },
          'snapshot worker did not close in time (Redis unreachable?); closing its connections',
        );
        void worker.close(true).catch(() => {});
        void ownWorker.close(true).catch(() => {});
        connection.disconnect();
        lockRedis.disconnect();
      } else {
        // Nothing runs in this instance's queue any more and no router hands it jobs (it left the
        // membership): remove the queue, or every clean restart would leave one behind in Redis
        // (a new instance gets a new queue). A job a router handed on just before is lost with it,
        // and that router's attempt fails and is retried by the cluster's next owner.
        await settlesWithin(
          ownQueue
            .obliterate({ force: true })
            .catch((err: unknown) =>
              log.warn({ err, queue: ownQueue.name }, "removing this worker's own queue failed"),
            ),
          options.closeTimeoutMs ?? 5000,
        );
      }
      await settlesWithin(retention?.close() ?? Promise.resolve(), 1000);
      await settlesWithin(
        Promise.all([queue.close(), ...[...owners.values()].flatMap((o) => [o.queue.close(), o.events.close()])]),
        1000,
      );
      await publisher.close();
      await settlesWithin(liveStatus.close(), 1000);
      health?.checker.close();
      for (const client of clients.values()) client.close();
      await Promise.all([
        connection.quit().catch(() => connection.disconnect()),
        lockRedis.quit().catch(() => lockRedis.disconnect()),
      ]);
    },
  };
}

/** A cluster client naming its worker, whose requests are counted by status code when metrics are on. */
function clientOptions(cluster: string, instance: string, metrics: Metrics | undefined): ClusterClientOptions {
  const userAgent = `phaselog-worker/${instance}`;
  return {
    transport: {
      userAgent,
      ...(metrics === undefined ? {} : { onAnswer: (code: string) => metrics.kubeRequests.inc({ cluster, code }) }),
    },
  };
}

/** Whether `promise` settled within `ms` (a rejection counts as settled). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return (
    (await withDeadline(
      promise.then(
        () => true,
        () => true,
      ),
      ms,
    )) !== TIMED_OUT
  );
}

/** A scheduler job's slot: its id is `repeat:<scheduler>:<slot ms>` (its `prevMillis` can lag a slot). */
function scheduledSlot(job: Job): number | undefined {
  const match = /^repeat:[^:]+:(\d+)$/.exec(job.id ?? '');
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** Removes the queue of a worker instance that died, with whatever jobs were waiting in it (their ticks come again). */
async function obliterateQueue(name: string, connection: Redis, prefix: string, log: Logger): Promise<void> {
  const queue = new Queue(name, { connection, prefix });
  queue.on('error', () => {});
  try {
    await queue.obliterate({ force: true });
  } catch (err) {
    log.warn({ err, queue: name }, "removing a dead worker's queue failed");
  } finally {
    await queue.close().catch(() => {});
  }
}

/** One compaction job scheduler for the whole fleet; any worker process may run it. */
async function startRetention(
  options: StartWorkersOptions,
  connection: Redis,
  prefix: string,
  queueName: string,
  log: Logger,
): Promise<{ scheduler: KeptScheduler; close(): Promise<void> }> {
  const { policy, intervalMs = 3_600_000 } = options.retention as NonNullable<StartWorkersOptions['retention']>;
  const queue = new Queue(queueName, { connection, prefix });
  const scheduler: KeptScheduler = {
    queue,
    id: 'retention',
    upsert: () =>
      queue.upsertJobScheduler(
        'retention',
        { every: intervalMs },
        {
          name: 'apply-retention',
          data: {},
          opts: {
            attempts: 3,
            backoff: { type: 'exponential', delay: 5000 },
            removeOnComplete: { count: 100 },
            removeOnFail: { count: 100 },
          },
        },
      ),
  };
  queue.on('error', () => {}); // its connection's errors are logged by startWorkers
  await scheduler.upsert();
  const worker = new Worker(
    queueName,
    async () => {
      const removed = await applyRetention(options.db, policy);
      log.info({ removed }, 'retention applied');
      return removed;
    },
    { connection, prefix, concurrency: 1 },
  );
  logRedisErrors(worker, log, 'retention-worker');
  return {
    scheduler,
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
