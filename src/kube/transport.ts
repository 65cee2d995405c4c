/**
 * GET-only HTTP to one cluster. Authentication (bearer token, token file, client certificate,
 * exec plugins, CA data) comes from client-node's `KubeConfig.applyToHTTPSOptions`, called per
 * request so rotating credentials are picked up; the socket work is Node's own http/https so we
 * control timeouts, keep-alive and status handling. Read-only by construction: there is no way
 * to send anything but GET.
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeRequestError, parseRetryAfter } from './errors.ts';
import { createClusterAgent, tlsMaterialKey, type TlsMaterial } from './agents.ts';

/** Query parameters; `undefined` values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** Per-request options. */
export interface RequestOptions {
  /** Overrides the transport's timeout for this request. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A read-only HTTP client for one cluster. */
export interface KubeTransport {
  /** The API server URL (no trailing slash). */
  readonly server: string;
  /** GETs `path` and parses the JSON answer; throws {@link KubeRequestError} on any failure. */
  getJson(path: string, query?: Query, options?: RequestOptions): Promise<unknown>;
  /**
   * Opens a streaming GET (a watch) and hands each line to `onLine`. `onClose` is called exactly
   * once: with no argument when the server ended the stream, or with the error. Returns a function
   * that aborts the stream (then `onClose` is not called).
   */
  openStream(path: string, query: Query, handlers: StreamHandlers, options?: StreamOptions): () => void;
  /** How many requests this transport has sent. */
  readonly requestCount: number;
  /** Closes idle keep-alive sockets. */
  close(): void;
}

/** Callbacks of {@link KubeTransport.openStream}. */
export interface StreamHandlers {
  onLine(line: string): void;
  onClose(error?: unknown): void;
}

/** Timeouts of a stream. */
export interface StreamOptions {
  /** Until the response headers arrive. @default the transport timeout */
  connectTimeoutMs?: number;
  /** Longest silence (no bytes) before the stream is treated as dead. @default 0 (never) */
  idleTimeoutMs?: number;
}

/** Options of {@link createKubeTransport}. */
export interface TransportOptions {
  /** Whole-request deadline (connect, headers and body). @default 15000 */
  timeoutMs?: number;
  /** Largest response body accepted, to bound memory on huge lists. @default 256 MiB */
  maxBodyBytes?: number;
  /**
   * Keep-alive sockets kept open between requests. A snapshot opens one socket per concurrent
   * read; keeping them all through the idle time between snapshots costs memory in every cluster
   * (an idle TLS socket holds its OpenSSL state and buffers), so the extra ones close. @default 1
   */
  maxIdleSockets?: number;
  /**
   * Called once per request (GETs and watches) with the HTTP status code the API server answered,
   * or `error` when no answer came (connection refused or reset, timeout, TLS). @default none
   */
  onAnswer?: (code: string) => void;
  /**
   * The User-Agent header, as API server audit logs show it; workers name themselves in it.
   * @default 'phaselog'
   */
  userAgent?: string;
}

/** Builds a transport for the current context of `kubeConfig`. */
export function createKubeTransport(kubeConfig: KubeConfig, options: TransportOptions = {}): KubeTransport {
  const cluster = kubeConfig.getCurrentCluster();
  const server = (cluster?.server ?? '').replace(/\/+$/, '');
  const defaultTimeout = options.timeoutMs ?? 15_000;
  const maxBody = options.maxBodyBytes ?? 256 * 1024 * 1024;
  const onAnswer = options.onAnswer;
  const userAgent = options.userAgent ?? 'phaselog';
  const idleSockets = options.maxIdleSockets ?? 1;
  const proxyUrl = cluster?.proxyUrl;
  // One pooled agent per set of TLS material: when a client certificate, key or CA file is rewritten
  // (rotation), the next request gets an agent, and so connections, with the new material.
  let pooled: { key: string; agent: http.Agent } | undefined;
  let count = 0;

  function agentFor(isHttps: boolean, tls: TlsMaterial): http.Agent {
    const key = tlsMaterialKey(isHttps, tls);
    if (pooled?.key === key) return pooled.agent;
    if (pooled !== undefined) retireAgent(pooled.agent);
    pooled = {
      key,
      agent: createClusterAgent({ isHttps, tls, proxyUrl, keepAlive: true, maxFreeSockets: idleSockets }),
    };
    return pooled.agent;
  }

  /** Builds URL, agent and auth headers for one GET; credentials are re-applied every time. */
  async function prepare(
    path: string,
    query: Query,
  ): Promise<{
    url: URL;
    client: typeof http | typeof https;
    init: http.RequestOptions;
    isHttps: boolean;
    tls: TlsMaterial;
  }> {
    if (server === '')
      throw new KubeRequestError('the kubeconfig context has no cluster server URL', { code: 'ENOTFOUND' });
    const url = new URL(server + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    const options: https.RequestOptions = {};
    try {
      await kubeConfig.applyToHTTPSOptions(options);
    } catch (error) {
      // A token, certificate or CA file that cannot be read, or an exec plugin that failed: say which, and retry later.
      throw new KubeRequestError(`cannot load the credentials for ${shownServer(server)}: ${credentialProblem(error)}`);
    }
    const isHttps = url.protocol === 'https:';
    const tls: TlsMaterial = {
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      rejectUnauthorized: options.rejectUnauthorized,
      servername: options.servername,
    };
    const headers: http.OutgoingHttpHeaders = {
      Accept: 'application/json',
      'User-Agent': userAgent,
      ...flattenHeaders(options.headers),
    };
    if (typeof options.auth === 'string')
      headers.Authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
    let agent: http.Agent;
    try {
      agent = agentFor(isHttps, tls);
    } catch (error) {
      throw new KubeRequestError(
        `cannot use the TLS credentials for ${shownServer(server)}: ${(error as Error).message}`,
      );
    }
    count += 1;
    return { url, client: isHttps ? https : http, init: { method: 'GET', agent, headers }, isHttps, tls };
  }

  async function getJson(path: string, query: Query = {}, requestOptions: RequestOptions = {}): Promise<unknown> {
    const { url, client, init } = await prepare(path, query);
    return send(
      client,
      url,
      init,
      requestOptions.timeoutMs ?? defaultTimeout,
      maxBody,
      requestOptions.signal,
      onAnswer,
    );
  }

  function openStream(path: string, query: Query, handlers: StreamHandlers, options: StreamOptions = {}): () => void {
    let request: http.ClientRequest | undefined;
    let answered = false;
    let finished = false;
    let aborted = false;
    const finish = (error?: unknown): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      request?.destroy();
      if (!aborted) handlers.onClose(error);
    };
    let timer: NodeJS.Timeout = setTimeout(() => {
      finish(new KubeRequestError(`watch ${path} got no answer within the connect timeout`, { timedOut: true }));
    }, options.connectTimeoutMs ?? defaultTimeout);
    const armIdle = (): void => {
      clearTimeout(timer);
      const idle = options.idleTimeoutMs ?? 0;
      if (idle > 0)
        timer = setTimeout(
          () => finish(new KubeRequestError(`watch ${path} was silent for ${idle} ms`, { timedOut: true })),
          idle,
        );
    };
    prepare(path, query).then(({ url, client, init, isHttps, tls }) => {
      if (finished) return;
      // Watches get their own socket: a long-lived stream must not hold a pooled keep-alive socket.
      request = client.request(
        url,
        { ...init, agent: createClusterAgent({ isHttps, tls, proxyUrl, keepAlive: false }) },
        (response) => {
          const status = response.statusCode ?? 0;
          answered = true;
          onAnswer?.(String(status));
          if (status < 200 || status >= 300) {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              finish(statusError(status, Buffer.concat(chunks).toString('utf8'), response.headers['retry-after'], url)),
            );
            return;
          }
          armIdle();
          let buffered = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            armIdle();
            buffered += chunk;
            let newline = buffered.indexOf('\n');
            while (newline !== -1) {
              const line = buffered.slice(0, newline).trim();
              buffered = buffered.slice(newline + 1);
              if (line !== '' && !finished) handlers.onLine(line);
              newline = buffered.indexOf('\n');
            }
          });
          response.on('end', () => finish());
          response.on('error', (err) => finish(err));
        },
      );
      request.on('error', (err) => {
        if (!answered && !aborted) onAnswer?.('error');
        finish(err instanceof KubeRequestError ? err : new KubeRequestError(err.message, readSocketCode(err)));
      });
      request.end();
    }, finish);
    return () => {
      aborted = true;
      finish();
    };
  }

  return {
    server,
    getJson,
    openStream,
    get requestCount() {
      return count;
    },
    close() {
      pooled?.agent.destroy();
      pooled = undefined;
    },
  };
}

/**
 * Stops an agent whose credentials were replaced from keeping connections: its idle sockets close
 * now, and each request still in flight closes its socket when it ends instead of pooling it.
 */
function retireAgent(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  // Runs after the agent's own 'free' handler has pooled the socket; closing it unpools it.
  agent.on('free', (socket: Socket) => socket.destroy());
}

/** Copies auth headers, trimming string values: token files usually end in a newline. */
function flattenHeaders(headers: http.OutgoingHttpHeaders | readonly string[] | undefined): http.OutgoingHttpHeaders {
  if (headers === undefined || Array.isArray(headers)) return {};
  const out: http.OutgoingHttpHeaders = {};
  for (const [key, value] of Object.entries(headers as http.OutgoingHttpHeaders)) {
    out[key] = typeof value === 'string' ? value.trim() : value;
  }
  return out;
}

/**
 * One GET, retried once on a fresh connection when a reused keep-alive socket turned out to be
 * closed by the server before it answered (the server's idle timeout raced our reuse): that is
 * not the cluster being unreachable, and a GET is safe to send again. Node's `reusedSocket` is
 * there for exactly this.
 */
async function send(
  client: typeof http | typeof https,
  url: URL,
  init: http.RequestOptions,
  timeoutMs: number,
  maxBody: number,
  signal: AbortSignal | undefined,
  onAnswer: ((code: string) => void) | undefined,
): Promise<unknown> {
  const first = await sendOnce(client, url, init, timeoutMs, maxBody, signal, onAnswer);
  if (!first.staleSocket) return first.value;
  const again = await sendOnce(client, url, init, timeoutMs, maxBody, signal, onAnswer);
  if (again.staleSocket) throw again.error;
  return again.value;
}

type Sent = { staleSocket: false; value: unknown } | { staleSocket: true; error: KubeRequestError };

const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * The request deadline counts from the moment the request has a socket: connecting counts, a wait
 * in our own agent's queue does not (though it is bounded by one `timeoutMs` too). When the
 * deadline passes, the verdict waits one turn of the event loop: if this process was busy past the
 * deadline (a long synchronous task, a GC pause), what the server sent meanwhile is sitting unread
 * in the socket, and that turn reads it. A request whose socket saw activity after the deadline
 * was due gets back the time this process was late to look (at least a second), up to one more
 * `timeoutMs` in all; a server that sent nothing times out at the bound.
 */
function sendOnce(
  client: typeof http | typeof https,
  url: URL,
  init: http.RequestOptions,
  timeoutMs: number,
  maxBody: number,
  signal: AbortSignal | undefined,
  onAnswer: ((code: string) => void) | undefined,
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    let answered = false;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    let dueAt = 0;
    let lastActivity = 0;
    let extended = 0;
    const noteActivity = (): void => {
      lastActivity = performance.now();
    };
    const request = client.request(url, init, (response) => {
      answered = true;
      noteActivity();
      onAnswer?.(String(response.statusCode ?? 0));
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        noteActivity();
        size += chunk.length;
        if (size > maxBody)
          request.destroy(new KubeRequestError(`response larger than ${maxBody} bytes`, { statusCode: 507 }));
        else chunks.push(chunk);
      });
      response.on('error', fail);
      response.on('end', () => {
        settle();
        const status = response.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8');
        if (status >= 200 && status < 300) {
          try {
            resolve({ staleSocket: false, value: JSON.parse(text) });
          } catch {
            reject(new KubeRequestError(`invalid JSON from ${url.pathname}`, { statusCode: 502 }));
          }
          return;
        }
        reject(statusError(status, text, response.headers['retry-after'], url));
      });
    });
    const arm = (ms: number): void => {
      dueAt = performance.now() + ms;
      timer = setTimeout(onDue, ms);
    };
    function onDue(): void {
      const lateBy = performance.now() - dueAt;
      setImmediate(() => {
        if (done) return;
        if (lastActivity >= dueAt && extended < timeoutMs) {
          const more = Math.min(timeoutMs - extended, Math.max(lateBy, MIN_EXTENSION_MS));
          extended += more;
          arm(more);
          return;
        }
        request.destroy(new KubeRequestError(`no answer from ${url.host} within ${timeoutMs} ms`, { timedOut: true }));
      });
    }
    // Armed now in case no socket ever comes (an agent that connects through a proxy before it hands
    // one over), and again from the start once the request has its socket.
    arm(timeoutMs);
    request.once('socket', (socket: Socket) => {
      if (done) return;
      clearTimeout(timer);
      arm(timeoutMs);
      if (socket.connecting) socket.once('connect', noteActivity);
    });
    function settle(): void {
      done = true;
      clearTimeout(timer);
    }
    function fail(err: Error): void {
      if (done) return;
      settle();
      const error = err instanceof KubeRequestError ? err : new KubeRequestError(err.message, readSocketCode(err));
      if (
        !answered &&
        request.reusedSocket &&
        error.details.code !== undefined &&
        STALE_SOCKET_CODES.has(error.details.code)
      ) {
        resolve({ staleSocket: true, error });
        return;
      }
      if (!answered) onAnswer?.('error');
      reject(error);
    }
    request.on('error', fail);
    if (signal !== undefined) {
      if (signal.aborted) request.destroy(new KubeRequestError('request aborted', { timedOut: true }));
      else
        signal.addEventListener(
          'abort',
          () => request.destroy(new KubeRequestError('request aborted', { timedOut: true })),
          { once: true },
        );
    }
    request.end();
  });
}

/** Least extra time given to a request whose answer was arriving when its deadline passed. */
const MIN_EXTENSION_MS = 1000;

function readSocketCode(err: Error): { code?: string } {
  const code = (err as NodeJS.ErrnoException).code;
  return code === undefined ? { code: 'ECONNRESET' } : { code };
}

/** Builds an error from a non-2xx answer, reading the Kubernetes `Status` body when there is one. */
function statusError(status: number, text: string, retryAfterHeader: string | undefined, url: URL): KubeRequestError {
  let message = `${status} from GET ${url.pathname}`;
  let reason: string | undefined;
  let retryAfterMs = parseRetryAfter(retryAfterHeader);
  try {
    const body = JSON.parse(text) as { message?: unknown; reason?: unknown; details?: { retryAfterSeconds?: unknown } };
    if (typeof body.message === 'string' && body.message !== '') message = body.message;
    if (typeof body.reason === 'string') reason = body.reason;
    const seconds = body.details?.retryAfterSeconds;
    if (retryAfterMs === undefined && typeof seconds === 'number') retryAfterMs = seconds * 1000;
  } catch {
    // Not a Status body (a proxy or load balancer answered); the status code is enough.
  }
  const details: ConstructorParameters<typeof KubeRequestError>[1] = { statusCode: status };
  if (reason !== undefined) details.reason = reason;
  if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
  return new KubeRequestError(message, details);
}

/** The server URL as messages show it: scheme, host and path, never userinfo or a query. */
function shownServer(server: string): string {
  if (!URL.canParse(server)) return '(an invalid server URL)';
  const url = new URL(server);
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
}

/**
 * Why credentials could not be loaded, in words built here: the message is stored with the
 * cluster's reachability and served to every reader. client-node's errors are not copied: an exec
 * plugin that exits non-zero becomes an Error of its stderr, and one that prints a bare token
 * instead of an ExecCredential a SyntaxError quoting it. A file error keeps its code and path
 * (a configured path, not a secret).
 */
function credentialProblem(error: unknown): string {
  const { code, path } = error as { code?: unknown; path?: unknown };
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,47}$/.test(code))
    return typeof path === 'string' ? `${code} ${path}` : code;
  if (error instanceof SyntaxError) return 'the exec credential plugin printed something that is not an ExecCredential';
  return 'the credential source failed (an exec credential plugin that exited with an error, or an auth provider)';
}
