/**
 * The GraphQL endpoint: Apollo Server for HTTP and graphql-ws for WebSocket, on one port and one
 * path. Apollo runs without a web framework: a framework's HTTP integration layer would outweigh the
 * work of a small request, so we hand Apollo the parsed request ourselves.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ApolloServer, HeaderMap } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import type { ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { getOperationAST, GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import type { GraphQLFormattedError, GraphQLSchema, ValidationRule } from 'graphql';
import { WebSocketServer } from 'ws';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import type { AuthResult, Principal } from '../auth/principal.ts';
import type { GraphqlContext, OperationKind } from './context.ts';
import { unauthenticated } from './errors.ts';
import { graphiqlPage, loadGraphiqlAssets, type GraphiqlAssets } from './graphiql.ts';
import { createCompiledExecution, type CompiledExecutionOptions } from './executor.ts';
import {
  checkPageSizeVariables,
  createLimitRules,
  DEFAULT_LIMITS,
  parseOptionsOf,
  prepareOperation,
  type QueryLimits,
} from './limits.ts';
import { refusalBody, type RequestGuard } from '../http/origin.ts';
import { isDatabaseUnavailable } from '../store/database-errors.ts';
import { createWebSocketErrorFormatter } from './ws-errors.ts';
import {
  createConnectionCounter,
  DEFAULT_WEBSOCKET_LIMITS,
  TOO_MANY_CONNECTIONS_CLOSE_CODE,
  tooManyOperations,
  type WebSocketLimits,
} from './ws-limits.ts';

/** Every answer is live data: never stored by a cache (what Apollo's cache-control plugin said without hints). */
const noStore: ApolloServerPlugin<GraphqlContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        response.http.headers.set('cache-control', 'no-store');
      },
    };
  },
};

/** Page sizes given by variables are refused before anything runs, as those written in the query are. */
/** Reports each request's operation type and time, from the start of Apollo's handling to the response. */
function timeRequests(report: (operationType: string, seconds: number) => void): ApolloServerPlugin<GraphqlContext> {
  return {
    async requestDidStart() {
      const started = performance.now();
      return {
        async willSendResponse(requestContext) {
          report(requestContext.operation?.operation ?? 'unknown', (performance.now() - started) / 1000);
        },
      };
    },
  };
}

const refusePageSizeVariables: ApolloServerPlugin<GraphqlContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ schema, document, request }) {
        const error = checkPageSizeVariables(schema, document, request.variables);
        if (error !== undefined)
          throw new GraphQLError(error.message, { extensions: { ...error.extensions, http: { status: 400 } } });
      },
    };
  },
};

/**
 * The code a limit rule gave its validation error (BAD_USER_INPUT for a page size), which Apollo
 * replaces with GRAPHQL_VALIDATION_FAILED for every validation error.
 */
function limitCode(error: unknown): string | undefined {
  const original = error instanceof GraphQLError ? error.originalError : undefined;
  if (!(original instanceof GraphQLError) || typeof original.extensions.limit !== 'string') return undefined;
  const code = original.extensions.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The operation each error came from (Apollo formats errors without their context), so a masked
 * error names the request id its operation's log lines carry.
 */
const errorContexts = new WeakMap<object, GraphqlContext>();
const rememberErrorContexts: ApolloServerPlugin<GraphqlContext> = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, contextValue }) {
        for (const error of errors) errorContexts.set(error, contextValue);
      },
    };
  },
};

/**
 * An HTTP context is built before Apollo parses the document, for a query; a mutation gets its
 * own once the operation is known (its reads, and its result's fields, go to the primary).
 */
function contextForOperation(build: GraphqlServerOptions['context']): ApolloServerPlugin<GraphqlContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, contextValue }) {
          if (operation !== undefined && operation.operation !== 'query')
            Object.assign(contextValue, build(operation.operation));
        },
      };
    },
  };
}

export interface GraphqlServerOptions {
  schema: GraphQLSchema;
  httpServer: Server;
  path: string;
  log: Logger;
  /**
   * Builds the per-request context for an authenticated caller (everything but the request id,
   * logger and principal). Over HTTP it is built for a query before the document is parsed, and
   * built again for a mutation once the operation is known, so that a mutation reads the primary
   * database.
   */
  context: (operation: OperationKind) => Omit<GraphqlContext, 'requestId' | 'log' | 'principal'>;
  /**
   * Authenticates the `Authorization` header of an HTTP request, or the `authorization` connection
   * param (else the upgrade request's header) of a WebSocket at `connection_init`.
   */
  authenticate: (authorization: string | undefined) => Promise<AuthResult>;
  /** Answer introspection queries. @default true */
  introspection?: boolean;
  /** Query limits; those left out take their default. @default DEFAULT_LIMITS */
  limits?: Partial<QueryLimits>;
  /** Serve GraphiQL to browsers on GET (bundled from local packages on first use). @default false */
  graphiql?: boolean;
  /** Show internal error messages to clients (development only). @default false */
  exposeInternalErrors?: boolean;
  /** Largest request body accepted, in bytes. @default 1 MiB */
  maxBodyBytes?: number;
  /** How HTTP queries are compiled (see executor.ts). @default {} */
  compiledExecution?: CompiledExecutionOptions;
  /** Checks `Host` and `Origin` of WebSocket upgrades (see http/origin.ts); HTTP requests are checked by the HTTP server. @default none */
  guard?: RequestGuard;
  /** Message size, connection and operation limits of the WebSocket endpoint. @default DEFAULT_WEBSOCKET_LIMITS */
  webSocket?: Partial<WebSocketLimits>;
  /** Called once per HTTP request answered, with its operation type (`unknown` when it did not parse). @default none */
  onRequestAnswered?: (operationType: string, seconds: number) => void;
}

export interface GraphqlServer {
  /** Serve one HTTP request for the GraphQL path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /**
   * Close every WebSocket (subscribers get close code 1001 and reconnect elsewhere). A connection
   * whose token is revoked is closed on its own with 4403 Forbidden (graphql-ws' code for a refused
   * connection), on every replica, as soon as the replica learns of the revocation.
   */
  closeWebSockets(): Promise<void>;
  /** Operations (subscriptions, and queries sent over WebSocket) running on open connections now. */
  activeWebSocketOperations(): number;
  /** Stop Apollo; call after the HTTP server has drained. */
  stop(): Promise<void>;
}

const EXPECTED_CODES = new Set([
  'TOO_MANY_OPERATIONS',
  'BAD_USER_INPUT',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'NOT_FOUND',
  'FORBIDDEN',
  'UNAUTHENTICATED',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'OPERATION_RESOLUTION_FAILURE',
  'QUERY_TOO_COMPLEX',
  'SERVICE_UNAVAILABLE',
]);

class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Keep reading (and dropping) the rest so the 413 reaches the client; the connection closes after it.
        reject(new BodyTooLargeError(`request body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * One operation's context. Its request id and child logger are made when a resolver first uses
 * them: most operations never log, and both cost a little on every request otherwise.
 */
function requestContext(
  base: Omit<GraphqlContext, 'requestId' | 'log' | 'principal'>,
  principal: Principal,
  log: Logger,
): GraphqlContext {
  let requestId: string | undefined;
  let child: Logger | undefined;
  return {
    ...base,
    principal,
    get requestId() {
      return (requestId ??= randomUUID());
    },
    get log() {
      return (child ??= log.child({ requestId: this.requestId }));
    },
  };
}

/**
 * `message` without graphql-js' suggestion sentence: it is always the last one, " Did you mean
 * "a", "b" or "c"?" (graphql-js 16, `didYouMean`), so the message ends where it begins.
 */
export function withoutSuggestions(message: string): string {
  const at = message.lastIndexOf(' Did you mean ');
  return at === -1 || !message.endsWith('?') ? message : message.slice(0, at);
}

export async function createGraphqlServer(options: GraphqlServerOptions): Promise<GraphqlServer> {
  const { log } = options;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;

  const introspection = options.introspection ?? true;
  // With introspection off the schema is not for strangers to map: graphql-js' "Did you mean ...?"
  // (unknown fields, arguments, input fields, enum values, types) would name it one guess at a time.
  const formatError = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const shaped = shapeError(formatted, error);
    return introspection ? shaped : { ...shaped, message: withoutSuggestions(shaped.message) };
  };
  const shapeError = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    if (code === 'GRAPHQL_VALIDATION_FAILED') {
      const own = limitCode(error);
      return own === undefined ? formatted : { ...formatted, extensions: { ...formatted.extensions, code: own } };
    }
    if (typeof code === 'string' && EXPECTED_CODES.has(code)) return formatted;
    const original = unwrapResolverError(error);
    const context = typeof error === 'object' && error !== null ? errorContexts.get(error) : undefined;
    const requestId = context?.requestId ?? randomUUID();
    if (isDatabaseUnavailable(original)) {
      // Down or unreachable (with database.readUrl, /readyz says which): a client may retry; the
      // driver's text names hosts and ports, so it goes to the log only.
      log.error({ err: original, requestId, path: formatted.path }, 'a database did not answer a GraphQL operation');
      return {
        message: `the database is unavailable; try again later (request id ${requestId})`,
        path: formatted.path,
        extensions: { code: 'SERVICE_UNAVAILABLE', requestId },
      };
    }
    log.error({ err: original, requestId, path: formatted.path }, 'internal error in a GraphQL operation');
    if (options.exposeInternalErrors) return formatted;
    return {
      message: `Internal server error (request id ${requestId})`,
      path: formatted.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR', requestId },
    };
  };

  const limits: QueryLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const validationRules: ValidationRule[] = [
    ...createLimitRules(limits),
    ...(introspection ? [] : [NoSchemaIntrospectionCustomRule]),
  ];

  // The principal of each WebSocket connection, set at connection_init.
  const principals = new WeakMap<object, Principal>();
  const wsLimits: WebSocketLimits = {
    ...DEFAULT_WEBSOCKET_LIMITS,
    ...Object.fromEntries(Object.entries(options.webSocket ?? {}).filter(([, v]) => v !== undefined)),
  };
  const perIp = createConnectionCounter(wsLimits.maxConnectionsPerIp);
  const perToken = createConnectionCounter(wsLimits.maxConnectionsPerToken);
  const wsServer = new WebSocketServer({
    server: options.httpServer,
    path: options.path,
    maxPayload: wsLimits.maxMessageBytes,
    // Refused before the handshake completes, so no GraphQL message is ever read from these.
    // Counted in 'connection', which ws emits in the same tick as this callback's acceptance.
    verifyClient: ({ req }, accept) => {
      const refusal = options.guard?.(req);
      if (refusal !== undefined) {
        log.info(
          { code: refusal.code, host: req.headers.host, origin: req.headers.origin },
          'WebSocket upgrade refused',
        );
        accept(false, refusal.status, refusalBody(refusal), { 'content-type': 'application/json; charset=utf-8' });
        return;
      }
      if (!perIp.hasRoom(req.socket.remoteAddress ?? '')) {
        log.warn(
          { address: req.socket.remoteAddress, limit: wsLimits.maxConnectionsPerIp },
          'WebSocket upgrade refused: too many connections from one address',
        );
        const message = `this address already holds ${wsLimits.maxConnectionsPerIp} WebSocket connections`;
        accept(false, 429, JSON.stringify({ errors: [{ message, extensions: { code: 'TOO_MANY_CONNECTIONS' } }] }), {
          'content-type': 'application/json; charset=utf-8',
        });
        return;
      }
      accept(true);
    },
  });
  // Open connections, whose running operations graphql-ws keeps in `subscriptions`.
  const connections = new Set<{ subscriptions: Record<string, unknown> }>();
  const wsErrors = createWebSocketErrorFormatter({ format: formatError, contexts: errorContexts });
  const wsCleanup = useServer(
    {
      schema: options.schema,
      // What escapes the hooks closes the connection; its close reason carries no error text.
      isProd: !options.exposeInternalErrors,
      connectionInitWaitTimeout: wsLimits.connectionInitTimeoutMs,
      onConnect: async (ctx) => {
        const param = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const header = typeof param === 'string' ? param : ctx.extra.request.headers.authorization;
        const socket = ctx.extra.socket;
        let result: AuthResult;
        try {
          result = await options.authenticate(header);
        } catch (error) {
          // Closed here rather than thrown: graphql-ws would put the raw message in the close reason.
          const requestId = randomUUID();
          log.error({ err: error, requestId }, 'internal error authenticating a WebSocket connection');
          socket.close(
            CloseCode.InternalServerError,
            options.exposeInternalErrors
              ? String((error as Error).message).slice(0, 120)
              : `Internal server error (request id ${requestId})`,
          );
          return false;
        }
        if (!result.ok) {
          log.info({ reason: result.reason }, 'WebSocket connection refused');
          return false;
        }
        const { revoked } = result.principal;
        if (revoked?.aborted) return false;
        // Gone while authenticating: its 'close' has fired, and a slot taken now would never be released.
        if (socket.readyState === socket.CLOSED) return false;
        if (result.principal.kind === 'token') {
          const release = perToken.acquire(result.principal.name);
          if (release === undefined) {
            log.warn(
              { token: result.principal.name, limit: wsLimits.maxConnectionsPerToken },
              'WebSocket connection refused: too many connections with one token',
            );
            socket.close(TOO_MANY_CONNECTIONS_CLOSE_CODE, 'Too many connections with this token');
            return false;
          }
          socket.once('close', release);
        }
        principals.set(ctx.extra, result.principal);
        connections.add(ctx);
        socket.once('close', () => connections.delete(ctx));
        if (revoked !== undefined) {
          // The token was revoked while this connection is open: close it as graphql-ws refuses one.
          const socket = ctx.extra.socket;
          const close = () => socket.close(CloseCode.Forbidden, 'Forbidden: the API token was revoked');
          revoked.addEventListener('abort', close, { once: true });
          socket.once('close', () => revoked.removeEventListener('abort', close));
        }
        return true;
      },
      onSubscribe: (ctx, _id, payload) => {
        // ctx.subscriptions already holds the operation being started.
        if (Object.keys(ctx.subscriptions).length > wsLimits.maxOperationsPerConnection)
          return [tooManyOperations(wsLimits.maxOperationsPerConnection)];
        // Parsed and validated here, not by graphql-ws: the token and length limits apply while
        // parsing, and a syntax error is answered as HTTP answers it (graphql-ws would close the
        // whole connection with 4500).
        return prepareOperation(options.schema, payload, limits, validationRules);
      },
      context: (ctx, id, _payload, args) => {
        const principal = principals.get(ctx.extra);
        if (principal === undefined) throw unauthenticated('the connection is not authenticated');
        const operation = getOperationAST(args.document, args.operationName)?.operation ?? 'query';
        return wsErrors.remember(ctx, id, requestContext(options.context(operation), principal, log));
      },
      onNext: (ctx, id, _payload, _args, result) => wsErrors.formatResult(ctx, id, result),
      onError: (ctx, id, _payload, errors) => wsErrors.formatErrors(ctx, id, errors),
      onComplete: (ctx, id) => wsErrors.forget(ctx, id),
    },
    wsServer,
  );
  // Registered after useServer's, so it runs after graphql-ws has added its own socket listeners.
  wsServer.on('connection', (socket, req) => {
    const release = perIp.acquire(req.socket.remoteAddress ?? '');
    if (release !== undefined) socket.once('close', release);
    // A server-side socket only emits errors for a client breaking the protocol (a message over
    // maxPayload, a bad frame), after ws has closed it with the matching code. graphql-ws would
    // print each to stderr with a stack, outside the JSON log, as an internal error.
    socket.removeAllListeners('error');
    socket.on('error', (error: Error & { code?: string }) => {
      log.info(
        { code: error.code, reason: error.message, address: req.socket.remoteAddress },
        'WebSocket closed: the client broke the protocol',
      );
    });
  });

  const apollo = new ApolloServer<GraphqlContext>({
    // The schema, its HTTP queries executed compiled (see executor.ts).
    gateway: createCompiledExecution(options.schema, options.compiledExecution).gateway,
    formatError,
    introspection,
    parseOptions: parseOptionsOf(limits),
    validationRules,
    includeStacktraceInErrorResponses: options.exposeInternalErrors ?? false,
    // phaselog sets no cache hints, so Apollo's cache-control plugin would only cost a hook on every
    // field of every response (about a tenth of a history page's server time) to compute "no-store".
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      noStore,
      rememberErrorContexts,
      refusePageSizeVariables,
      contextForOperation(options.context),
      ...(options.onRequestAnswered !== undefined ? [timeRequests(options.onRequestAnswered)] : []),
    ],
    logger: {
      debug: (m) => log.debug(m),
      info: (m) => log.info(m),
      warn: (m) => log.warn(m),
      error: (m) => log.error(m),
    },
  });
  await apollo.start();

  let graphiqlAssets: Promise<GraphiqlAssets> | undefined;
  /** Answers GraphiQL's page and assets; false when the request is not one for them. */
  const serveGraphiql = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (!options.graphiql || req.method !== 'GET') return false;
    const url = new URL(req.url ?? '/', 'http://localhost');
    const asset = url.searchParams.get('graphiql');
    if (asset === 'app.js' || asset === 'app.css') {
      graphiqlAssets ??= loadGraphiqlAssets().catch((error: unknown) => {
        graphiqlAssets = undefined;
        throw error;
      });
      const assets = await graphiqlAssets;
      res.writeHead(200, {
        'content-type': asset === 'app.js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=3600',
      });
      res.end(asset === 'app.js' ? assets.js : assets.css);
      return true;
    }
    if (url.searchParams.has('query') || !(req.headers.accept ?? '').includes('text/html')) return false;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(graphiqlPage(options.path));
    return true;
  };

  return {
    activeWebSocketOperations: () => {
      let count = 0;
      for (const connection of connections) count += Object.keys(connection.subscriptions).length;
      return count;
    },
    async handle(req, res) {
      if (await serveGraphiql(req, res)) return;
      const headers = new HeaderMap();
      for (const [key, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
      }
      let body: unknown;
      try {
        const text = req.method === 'POST' ? await readBody(req, maxBodyBytes) : '';
        body = text && headers.get('content-type')?.includes('application/json') ? JSON.parse(text) : text;
      } catch (error) {
        const status = error instanceof BodyTooLargeError ? 413 : 400;
        res.writeHead(status, {
          'content-type': 'application/json',
          ...(status === 413 ? { connection: 'close' } : {}),
        });
        res.end(
          JSON.stringify({
            errors: [
              {
                message: status === 413 ? (error as Error).message : 'request body is not valid JSON',
                extensions: { code: 'BAD_REQUEST' },
              },
            ],
          }),
        );
        return;
      }
      const target = req.url ?? '/';
      const query = target.indexOf('?');
      const response = await apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: {
          method: req.method ?? 'GET',
          headers,
          search: query === -1 ? '' : target.slice(query),
          body,
        },
        context: async () => {
          const auth = await options.authenticate(req.headers.authorization);
          if (!auth.ok) throw unauthenticated(auth.message);
          return requestContext(options.context('query'), auth.principal, log);
        },
      });
      const outHeaders: Record<string, string> = {};
      for (const [key, value] of response.headers) outHeaders[key] = value;
      res.writeHead(response.status ?? 200, outHeaders);
      if (response.body.kind === 'complete') {
        res.end(response.body.string);
        return;
      }
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
    },
    async closeWebSockets() {
      for (const socket of wsServer.clients) socket.close(1001, 'Going away');
      await wsCleanup.dispose();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    },
    stop: () => apollo.stop(),
  };
}
