/**
 * The composition root: starts what the configured role needs, in dependency order, and returns a
 * `close()` that stops it all in reverse (HTTP and WebSocket first, then workers, then the database
 * and Redis, then any embedded servers).
 */
import { HOLDER_SOURCES } from './inventory/holder.ts';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { groupDeclaredPhases, ownerKindsOf } from './declared-phases.ts';
import { createHttpServer, ReadinessError, type ReadinessCheck } from './http/server.ts';
import { createMetricsGuard, isLoopbackHost } from './http/origin.ts';
import { StartupError } from './runtime/errors.ts';
import { pingRedis, resolveRedis } from './runtime/redis.ts';
import { pendingMigrations, pingDatabase } from './store/database-readiness.ts';
import { migrateDatabase, MIGRATIONS_DIR } from './store/migrate.ts';
import { createPoolDb, type Db } from './store/db.ts';
import { readMigrationsList } from './store/schema-engine.ts';
import { checkDatabase, describeDatabase, firstLine } from './store/check-database.ts';
import { loadWorkerClusters } from '../workers/load-worker-clusters.ts';
import { startWorkers } from '../workers/start-workers.ts';
import { NotRecordingError } from '../workers/recording-check.ts';
import { startReportWorker } from '../workers/report-worker.ts';
import { startNotificationWorker } from '../workers/notification-worker.ts';
import { checkRunDeps, startCheckWorker } from '../workers/check-worker.ts';
import { createMetrics } from './metrics/registry.ts';
import { registerFleetMetrics } from './metrics/fleet-metrics.ts';
import { createMetricsHandler } from './metrics/handler.ts';
import { createFleetStateReader } from './store/read-fleet-state.ts';

export interface RunningPhaselog {
  /** The API's base URL, when this process serves the API. */
  url?: string;
  databaseUrl: string;
  redisUrl: string;
  /**
   * Resolves when a part phaselog owns has failed beyond repair (the embedded PostgreSQL kept
   * exiting); the process should close and exit non-zero. Never resolves otherwise.
   */
  failed: Promise<Error>;
  close(): Promise<void>;
}

type Closer = { name: string; close: () => Promise<void> };

/** In demo mode ticks come at least this often, so a new user sees history grow within a minute. */
const DEMO_SNAPSHOT_INTERVAL_MS = 5000;

/** Start phaselog with the given configuration. */
export async function startPhaselog(config: Config, log: Logger): Promise<RunningPhaselog> {
  const closers: Closer[] = [];
  const close = async () => {
    for (const closer of closers.reverse()) {
      try {
        await closer.close();
        log.debug({ part: closer.name }, 'closed');
      } catch (error) {
        log.error({ err: error, part: closer.name }, 'error while closing');
      }
    }
  };
  let fail: (error: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => (fail = resolve));
  try {
    let databaseUrl = config.database.url;
    if (!databaseUrl) {
      // Only the server phaselog started is restarted; an external DATABASE_URL is only reported by /readyz.
      const { startEmbeddedPostgres } = await import('./runtime/embedded-postgres.ts');
      const embedded = await startEmbeddedPostgres({
        stateDir: config.stateDir,
        log: log.child({ part: 'embedded-postgres' }),
        onGiveUp: fail,
      });
      closers.push({ name: 'embedded-postgres', close: () => embedded.stop() });
      databaseUrl = embedded.url;
    }
    await checkDatabase(databaseUrl);
    // A worker process runs all its SQL on pg: it gets a pool-only handle and never loads Prisma.
    const createDb = config.role === 'worker' ? createPoolDb : (await import('./store/prisma.ts')).createDb;
    const db: Db = createDb(databaseUrl, { poolSize: config.database.poolSize });
    closers.push({ name: 'database', close: () => db.$disconnect() });
    const expectedMigrations = (await readMigrationsList(MIGRATIONS_DIR)).migrationDirectories.map((d) => d.path);
    // The schema engine (WebAssembly, which a process keeps once loaded) starts only when there is
    // something to apply or the history cannot be read (a new database): a process starting on an
    // up-to-date database, as every worker replica does once one process migrated, never loads it.
    const pending = await pendingMigrations(db, expectedMigrations).catch(() => expectedMigrations);
    if (pending.length > 0) {
      const migrated = await migrateDatabase(databaseUrl).catch((error: unknown) => {
        throw new StartupError(
          `applying database migrations failed on ${describeDatabase(databaseUrl as string)}: ${firstLine(error)}`,
        );
      });
      if (migrated.applied.length) log.info({ applied: migrated.applied }, 'database migrations applied');
    }

    const redis = await resolveRedis({
      url: config.redis.url,
      stateDir: config.stateDir,
      log: log.child({ part: 'redis' }),
    });
    closers.push({ name: 'redis-server', close: () => redis.stop() });
    // Only the API reads from database.readUrl; workers write, and a URL equal to the primary's needs no pool of its own.
    const servesApi = config.role === 'all' || config.role === 'api';
    const readUrl =
      servesApi && config.database.readUrl !== undefined && config.database.readUrl !== databaseUrl
        ? config.database.readUrl
        : undefined;
    const readDb = readUrl === undefined ? db : createDb(readUrl, { poolSize: config.database.poolSize });
    if (readDb !== db) {
      closers.push({ name: 'read-database', close: () => readDb.$disconnect() });
      log.info({ readDatabase: describeDatabase(readUrl as string) }, 'API queries read from database.readUrl');
    }

    const running: RunningPhaselog = { databaseUrl, redisUrl: redis.url, failed, close };
    // One registry per process: the fleet's state from the database, plus what this process's parts count.
    const metrics = createMetrics();
    // Scrapes of every replica read the fleet's state: a few seconds of replica lag is fine for metrics.
    registerFleetMetrics(metrics, createFleetStateReader(readDb));
    const metricsHandler = createMetricsHandler({
      metrics,
      log: log.child({ part: 'metrics' }),
      ...(config.metrics.token !== undefined ? { token: config.metrics.token } : {}),
    });
    // Like /readyz, /metrics answers without a token; its series name clusters, namespaces and phases.
    if (config.metrics.token === undefined && !isLoopbackHost(config.server.host)) {
      log.warn(
        { host: config.server.host },
        '/metrics answers anyone who can reach this address; set metrics.token (PHASELOG_METRICS_TOKEN) to require a bearer token',
      );
    }
    const startedAt = new Date();
    let recording: (() => Promise<void>) | undefined;

    if (config.role === 'all' || config.role === 'worker') {
      const workerLog = log.child({ part: 'worker' });
      const loaded = loadWorkerClusters(config, workerLog);
      let clusters = loaded.clusters;
      let workerConfig = config;
      let checks = config.checks;
      let owners = ownerKindsOf(config.phases);
      // The demo only where no cluster source exists at all: a pod, a kubeconfig or `clusters:` that
      // fails to load is an error, never emulated clusters passed off as the real ones.
      if (config.demo.enabled ?? loaded.sources.length === 0) {
        log.warn(
          { demo: true, explicit: config.demo.enabled === true },
          config.demo.enabled === true
            ? 'DEMO MODE (PHASELOG_DEMO=true): recording emulated demo clusters, not a real cluster'
            : 'DEMO MODE: no cluster configured (no clusters:, KUBECONFIG, ~/.kube/config or in-cluster service account); recording emulated demo clusters, not a real cluster',
        );
        const { startDemo } = await import('./demo/index.ts');
        const demo = await startDemo({ log: log.child({ part: 'demo' }), stateDir: config.stateDir });
        closers.push({ name: 'demo', close: () => demo.close() });
        clusters = demo.clusters;
        checks = [...checks, ...demo.checks];
        owners = [
          ...owners,
          ...demo.owners.filter(
            (o) => !owners.some((c) => c.kind.group === o.kind.group && c.kind.kind === o.kind.kind),
          ),
        ];
        workerConfig = {
          ...config,
          snapshot: { ...config.snapshot, interval: Math.min(config.snapshot.interval, DEMO_SNAPSHOT_INTERVAL_MS) },
        };
      } else if (loaded.sources.length === 0) {
        log.warn(
          { demo: false },
          'no cluster to read: PHASELOG_DEMO=false and no clusters:, KUBECONFIG, ~/.kube/config or in-cluster service account',
        );
      }
      const prefix = config.redis.prefix;
      const { compactEvery, ...retentionPolicy } = config.retention ?? { compactEvery: 0 };
      const workers = await startWorkers({
        config: workerConfig,
        db,
        redisUrl: redis.url,
        log: workerLog,
        clusters,
        unloadedClusters: loaded.unloaded,
        prefix,
        channelPrefix: prefix,
        metrics,
        checks,
        observe: {
          redaction: { dropAnnotations: config.history.redactAnnotations },
          declared: groupDeclaredPhases(config.phases),
          owners,
          ignoreHolderVerdicts: new Set(HOLDER_SOURCES.filter((source) => !config.snapshot.holderVerdicts[source])),
        },
        ...(config.worker.id !== undefined ? { workerId: config.worker.id } : {}),
        ownership: { heartbeatMs: config.worker.heartbeat, leaseMs: config.worker.lease },
        ...(config.snapshot.live
          ? { live: { debounceMs: config.snapshot.liveDebounce, watchBackoffMaxMs: config.snapshot.watchBackoffMax } }
          : {}),
        ...(config.retention ? { retention: { policy: retentionPolicy, intervalMs: compactEvery } } : {}),
      });
      closers.push({ name: 'workers', close: () => workers.close() });
      // /readyz shows why recording stopped as the check's code; the detail stays in the log.
      recording = () =>
        workers.recording().catch((error: unknown) => {
          throw error instanceof NotRecordingError ? new ReadinessError(error.code, error.message) : error;
        });
      if (config.notifications.routes.length > 0) {
        const notifications = await startNotificationWorker({
          db,
          redisUrl: redis.url,
          log: log.child({ part: 'notifications' }),
          config: config.notifications,
          baseDir: config.baseDir,
          prefix,
          metrics,
        });
        closers.push({ name: 'notification-worker', close: () => notifications.close() });
      }
      const workerChecks = checks.filter((c) => c.http !== undefined || c.webhook !== undefined);
      if (workerChecks.length > 0) {
        const checkWorker = await startCheckWorker({
          redisUrl: redis.url,
          prefix,
          log: log.child({ part: 'checks' }),
          checks: workerChecks,
          clusters: clusters.map((c) => c.name),
          ...checkRunDeps(db, config.baseDir, redis.url, prefix, log),
          requestSnapshot: (cluster) => workers.snapshotNow(cluster),
        });
        closers.push({ name: 'check-worker', close: () => checkWorker.close() });
      }
      if (config.reports.schedules.length) {
        const reports = await startReportWorker({
          db,
          redisUrl: redis.url,
          log: log.child({ part: 'reports' }),
          schedules: config.reports.schedules,
          prefix: config.redis.prefix,
        });
        closers.push({ name: 'report-worker', close: () => reports.close() });
      }
    }

    const readiness: Record<string, ReadinessCheck> = {
      database: () => pingDatabase(db),
      ...(readDb !== db ? { readDatabase: () => pingDatabase(readDb) } : {}),
      redis: async () => {
        const ping = await pingRedis(redis.url, 1500);
        if (!ping.ok) throw new Error(ping.reason);
      },
      migrations: async () => {
        const missing = await pendingMigrations(db, expectedMigrations);
        if (missing.length) throw new ReadinessError('MIGRATIONS_PENDING', `not applied: ${missing.join(', ')}`);
      },
      // A process that records must say when it does not (schedulers lost, snapshots stopped).
      ...(recording !== undefined ? { recording } : {}),
    };

    if (config.role === 'worker' && config.server.probePort !== undefined) {
      // A worker-only process serves no API; its probes get a port of their own.
      const probes = createHttpServer({
        host: config.server.host,
        port: config.server.probePort,
        log: log.child({ part: 'probes' }),
        readiness,
        metrics: metricsHandler,
        metricsGuard: createMetricsGuard(config.server.host, config.api.allowedHosts ?? []),
      });
      try {
        await probes.listen();
      } catch (error) {
        throw new StartupError(
          `cannot listen on ${config.server.host}:${config.server.probePort} (server.probePort): ${(error as Error).message}`,
        );
      }
      closers.push({ name: 'probes', close: () => probes.close(1000) });
      log.info({ url: probes.url }, 'worker probes listening (/healthz, /readyz, /metrics)');
    }

    if (servesApi) {
      // Loaded only here: a worker process has no use for the API's modules.
      const { serveApi } = await import('./serve-api.ts');
      running.url = await serveApi({
        config,
        log,
        db,
        readDb,
        redisUrl: redis.url,
        readiness,
        metrics,
        metricsHandler,
        startedAt,
        addCloser: (closer) => closers.push(closer),
      });
    }
    return running;
  } catch (error) {
    await close();
    throw error;
  }
}
