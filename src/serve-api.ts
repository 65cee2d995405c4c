/**
 * The API part of a phaselog process: HTTP server, GraphQL (queries and subscriptions), the web UI.
 * Loaded by src/app.ts only in a process that serves the API, so a worker process (PHASELOG_ROLE=worker)
 * never loads Apollo, graphql-ws, the schema or the UI's modules (their code and compiled
 * functions would sit in every worker's heap for nothing; figures in BENCHMARKS.md).
 */
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createSchema } from './graphql/schema.ts';
import { createApiWiring } from './graphql/api-wiring.ts';
import { createGraphqlServer } from './graphql/server.ts';
import { createHttpServer, type ReadinessCheck } from './http/server.ts';
import { createMetricsGuard, createRequestGuard, isLoopbackHost } from './http/origin.ts';
import type { createMetricsHandler } from './metrics/handler.ts';
import { registerActiveOperations, type createMetrics } from './metrics/registry.ts';
import { StartupError } from './runtime/errors.ts';
import { VERSION } from './runtime/paths.ts';
import { SNAPSHOT_QUEUE } from './queue/snapshot-jobs.ts';
import { createClusterStore } from './store/cluster-store.ts';
import type { Db } from './store/db.ts';
import { DEFAULT_UI_PATHS, ensureUiBundle } from './ui/bundle.ts';
import { createUiHandler } from './ui/serve.ts';

/** What the API part needs of the process that starts it. */
export interface ServeApiOptions {
  config: Config;
  log: Logger;
  db: Db;
  /** Where queries read from: `db`, or the database.readUrl replica's client. */
  readDb: Db;
  redisUrl: string;
  readiness: Record<string, ReadinessCheck>;
  metrics: ReturnType<typeof createMetrics>;
  metricsHandler: ReturnType<typeof createMetricsHandler>;
  startedAt: Date;
  /** Registers something to close on shutdown (closed in reverse order of registration). */
  addCloser(closer: { name: string; close: () => Promise<void> }): void;
}

/** Starts the API and resolves with its base URL once it listens. */
export async function serveApi(options: ServeApiOptions): Promise<string> {
  const { config, log, db, readDb, redisUrl, readiness, metrics, metricsHandler, startedAt, addCloser } = options;
  const guard = createRequestGuard({
    loopbackBind: isLoopbackHost(config.server.host),
    allowedHosts: config.api.allowedHosts ?? [],
    allowedOrigins: config.api.allowedOrigins ?? [],
  });
  const webSocketConfig = config.api.webSocket ?? {};
  const { connectionInitTimeout, ...webSocketLimits } = webSocketConfig;
  const http = createHttpServer({
    host: config.server.host,
    port: config.server.port,
    log: log.child({ part: 'http' }),
    guard,
    readiness,
    metrics: metricsHandler,
    metricsGuard: createMetricsGuard(config.server.host, config.api.allowedHosts ?? []),
  });
  const clusters = { primary: createClusterStore(db), read: createClusterStore(readDb) };
  const api = await createApiWiring({
    db,
    readDb,
    config,
    redisUrl,
    channelPrefix: config.redis.prefix,
    snapshotQueue: { name: SNAPSHOT_QUEUE, prefix: config.redis.prefix },
    log: log.child({ part: 'graphql' }),
  });
  addCloser({ name: 'change-feed', close: () => api.close() });
  const graphql = await createGraphqlServer({
    schema: createSchema(),
    httpServer: http.server,
    path: '/graphql',
    log: log.child({ part: 'graphql' }),
    authenticate: (header) => api.authenticator.authenticate(header),
    introspection: config.api.introspection,
    graphiql: config.api.graphiql && config.api.introspection,
    limits: {
      maxDepth: config.api.maxDepth,
      maxCost: config.api.maxCost,
      maxAliases: config.api.maxAliases,
      maxTokens: config.api.maxTokens,
    },
    guard,
    webSocket: {
      ...webSocketLimits,
      ...(connectionInitTimeout === undefined ? {} : { connectionInitTimeoutMs: connectionInitTimeout }),
    },
    onRequestAnswered: metrics.graphql.observeRequest,
    context: (operation) => {
      const read = api.readFor(operation);
      return {
        about: { version: VERSION, role: config.role, startedAt },
        clusters: operation === 'query' ? clusters.read : clusters.primary,
        read,
        loaders: api.newLoaders(read),
      };
    },
  });
  http.mount('/graphql', graphql.handle);
  registerActiveOperations(metrics, () => graphql.activeWebSocketOperations());
  // The web UI: bundled here only when web/ changed since the last bundle (or none exists).
  await ensureUiBundle().then(
    (bundled) => bundled && log.info({ dir: DEFAULT_UI_PATHS.outDir }, 'web UI bundled'),
    (error: unknown) =>
      log.warn({ err: error }, 'cannot bundle the web UI; / answers 503 until npm run build succeeds'),
  );
  http.fallback(createUiHandler());
  try {
    await http.listen();
  } catch (error) {
    throw new StartupError(`cannot listen on ${config.server.host}:${config.server.port}: ${(error as Error).message}`);
  }
  // Closed in reverse: WebSockets, then in-flight HTTP requests drain, then Apollo stops.
  addCloser({ name: 'graphql', close: () => graphql.stop() });
  addCloser({ name: 'http', close: () => http.close(3000) });
  addCloser({ name: 'websockets', close: () => graphql.closeWebSockets() });
  // The three addresses a person wants first: the UI for browsing, GraphiQL for trying queries,
  // the endpoint for the CLI (PHASELOG_URL) and other clients.
  const endpoint = `${http.url}/graphql`;
  log.info(
    {
      ui: `${http.url}/`,
      ...(config.api.graphiql && config.api.introspection ? { graphiql: endpoint } : {}),
      graphql: endpoint,
    },
    'phaselog API listening',
  );
  return http.url;
}
