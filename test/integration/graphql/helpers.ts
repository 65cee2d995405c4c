/**
 * The GraphQL API on port 0 with the real pieces app.ts wires (HTTP server, Apollo + graphql-ws,
 * stores over real Postgres, change feed over real Redis), plus small clients for HTTP and WebSocket.
 */
import { createClient, type Client } from 'graphql-ws';
import type { GraphQLSchema } from 'graphql';
import pino, { type Logger } from 'pino';
import WebSocket from 'ws';
import { createApiWiring, type ApiWiring } from '../../../src/graphql/api-wiring.ts';
import { isLoopbackHost } from '../../../src/http/origin.ts';
import { createSchema } from '../../../src/graphql/schema.ts';
import { createGraphqlServer } from '../../../src/graphql/server.ts';
import { createMetricsHandler } from '../../../src/metrics/handler.ts';
import { registerActiveOperations, type Metrics } from '../../../src/metrics/registry.ts';
import { createHttpServer } from '../../../src/http/server.ts';
import { createMetricsGuard, createRequestGuard } from '../../../src/http/origin.ts';
import type { WebSocketLimits } from '../../../src/graphql/ws-limits.ts';
import { createClusterStore } from '../../../src/store/cluster-store.ts';
import type { Db } from '../../../src/store/prisma.ts';
import type { DeclaredPlan } from '../../../src/declared-plans.ts';

export interface TestApi {
  url: string;
  wsUrl: string;
  wiring: ApiWiring;
  close(): Promise<void>;
}

export interface TestApiOptions {
  db: Db;
  /** database.readUrl's client: queries read it, mutations and subscriptions read `db` (as app.ts wires it). */
  readDb?: Db;
  host?: string;
  anonymousRead?: boolean;
  introspection?: boolean;
  maxDepth?: number;
  maxCost?: number;
  maxAliases?: number;
  maxTokens?: number;
  redisUrl?: string;
  channelPrefix?: string;
  snapshotQueue?: { name: string; prefix: string };
  graphiql?: boolean;
  /** Re-check of tokens in use (api-wiring's tokenRecheckMs). */
  tokenRecheckMs?: number;
  /** The server's logger (default: silent unless TEST_API_LOG names a level). */
  log?: Logger;
  /**
   * The use at which a query is compiled. Default 1, unlike the server's 2, so that every query of
   * these tests runs compiled; equivalence.test.ts compares compiled answers with graphql-js' ones.
   */
  compileOnUse?: number;
  /** The schema served (default: createSchema(), the real one). */
  schema?: GraphQLSchema;
  /** api.allowedOrigins (the Host/Origin guard is on, as app.ts wires it). */
  allowedOrigins?: string[];
  /** api.allowedHosts. */
  allowedHosts?: string[];
  /** WebSocket limits (defaults: the server's). */
  webSocket?: Partial<WebSocketLimits>;
  /** phaselog.yaml's `plans:`. */
  plans?: DeclaredPlan[];
  /** Record request durations and active operations here and serve them on /metrics, as app.ts wires it. */
  metrics?: Metrics;
}

export async function startTestApi(options: TestApiOptions): Promise<TestApi> {
  const log = options.log ?? pino({ level: process.env.TEST_API_LOG ?? 'silent' });
  const host = options.host ?? '127.0.0.1';
  const api = {
    introspection: options.introspection ?? true,
    graphiql: options.graphiql ?? false,
    maxDepth: options.maxDepth ?? 12,
    maxCost: options.maxCost ?? 50_000,
    ...(options.anonymousRead === undefined ? {} : { anonymousRead: options.anonymousRead }),
  };
  const wiring = await createApiWiring({
    db: options.db,
    ...(options.readDb ? { readDb: options.readDb } : {}),
    config: {
      server: { host },
      api: options.anonymousRead === undefined ? {} : { anonymousRead: options.anonymousRead },
      ...(options.plans ? { plans: options.plans } : {}),
    },
    log,
    ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
    ...(options.channelPrefix ? { channelPrefix: options.channelPrefix } : {}),
    ...(options.snapshotQueue ? { snapshotQueue: options.snapshotQueue } : {}),
    ...(options.tokenRecheckMs === undefined ? {} : { tokenRecheckMs: options.tokenRecheckMs }),
  });
  const guard = createRequestGuard({
    loopbackBind: isLoopbackHost(host),
    allowedHosts: options.allowedHosts ?? [],
    allowedOrigins: options.allowedOrigins ?? [],
  });
  const http = createHttpServer({
    host,
    port: 0,
    log,
    readiness: {},
    guard,
    ...(options.metrics
      ? {
          metrics: createMetricsHandler({ metrics: options.metrics, log }),
          metricsGuard: createMetricsGuard(host, options.allowedHosts ?? []),
        }
      : {}),
  });
  const clusters = { primary: createClusterStore(options.db), read: createClusterStore(options.readDb ?? options.db) };
  const graphql = await createGraphqlServer({
    schema: options.schema ?? createSchema(),
    httpServer: http.server,
    path: '/graphql',
    log,
    authenticate: (header) => wiring.authenticator.authenticate(header),
    introspection: api.introspection,
    graphiql: options.graphiql ?? false,
    limits: {
      maxDepth: api.maxDepth,
      maxCost: api.maxCost,
      ...(options.maxAliases === undefined ? {} : { maxAliases: options.maxAliases }),
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    },
    context: (operation) => {
      const read = wiring.readFor(operation);
      return {
        about: { version: 'test', role: 'api', startedAt: new Date(0) },
        clusters: operation === 'query' ? clusters.read : clusters.primary,
        read,
        loaders: wiring.newLoaders(read),
      };
    },
    compiledExecution: { compileOnUse: options.compileOnUse ?? 1 },
    guard,
    ...(options.webSocket ? { webSocket: options.webSocket } : {}),
    ...(options.metrics ? { onRequestAnswered: options.metrics.graphql.observeRequest } : {}),
  });
  if (options.metrics) registerActiveOperations(options.metrics, () => graphql.activeWebSocketOperations());
  http.mount('/graphql', graphql.handle);
  await http.listen();
  return {
    url: `${http.url}/graphql`,
    wsUrl: `${http.url.replace(/^http/, 'ws')}/graphql`,
    wiring,
    async close() {
      await graphql.closeWebSockets();
      await http.close(1000);
      await graphql.stop();
      await wiring.close();
    },
  };
}

export interface GqlResult<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: string[]; extensions?: { code?: string; limit?: string } }[];
}

/** POSTs a query as JSON. */
export async function gql<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<GqlResult<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, ...((await res.json()) as Omit<GqlResult<T>, 'status'>) };
}

/** Like {@link gql} but fails on any error and returns data. */
export async function gqlData<T = Record<string, unknown>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<T> {
  const result = await gql<T>(url, query, variables, token);
  if (result.errors?.length || !result.data) throw new Error(`GraphQL errors: ${JSON.stringify(result.errors)}`);
  return result.data;
}

/** A graphql-ws client (Node 20 has no global WebSocket). */
export function wsClient(url: string, token?: string): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    ...(token ? { connectionParams: { authorization: `Bearer ${token}` } } : {}),
  });
}
