/**
 * Which browsers' pages may talk to the API, checked on every HTTP request and WebSocket upgrade
 * before anything else reads it.
 *
 * - `Host` (DNS rebinding): on a loopback bind, where anonymous reads are on by default, a page of
 *   `http://evil.example:4000` whose name the attacker re-points at 127.0.0.1 would otherwise be
 *   same-origin with the API. Only loopback names and configured names are answered. On other binds
 *   the API asks for a bearer token, which a rebound page cannot know, so the name is only checked
 *   when names are configured.
 * - `Origin` (cross-site reads): browsers send it on WebSocket upgrades and cross-site or non-GET
 *   requests, and a WebSocket is not protected by CORS. A request without `Origin` comes from
 *   a program (the CLI, graphql-ws on Node), not a page, and passes; a page passes when it is
 *   same-origin with the `Host` it asked for or listed in `api.allowedOrigins`.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Names a loopback bind always answers to. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Options of {@link createRequestGuard}. */
export interface RequestGuardOptions {
  /** Whether the server binds a loopback address (`isLoopbackHost(server.host)`): turns the `Host` check on. */
  loopbackBind: boolean;
  /** More names `Host` may carry (a reverse proxy's name); with any, `Host` is checked on every bind. @default [] */
  allowedHosts?: readonly string[];
  /** Origins (`https://dash.example.com`) whose pages may use the API besides same-origin ones. @default [] */
  allowedOrigins?: readonly string[];
}

/** Why a request is refused: an HTTP status and a stable code for the JSON error. */
export interface GuardRefusal {
  status: 403 | 421;
  code: 'HOST_NOT_ALLOWED' | 'ORIGIN_NOT_ALLOWED';
  message: string;
}

/** Checks a request's `Host` and `Origin`; undefined when it may go on. */
export type RequestGuard = (req: IncomingMessage) => GuardRefusal | undefined;

/** The host name of a `Host` header (`[::1]` keeps its brackets), lower case; undefined when unparsable. */
function hostnameOf(host: string): string | undefined {
  if (!URL.canParse(`http://${host}`)) return undefined;
  const url = new URL(`http://${host}`);
  // A Host with userinfo or a path is not a Host.
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
  return url.hostname.replace(/\.$/, '');
}

/**
 * The canonical form of an origin (`scheme://host[:port]`, lower case, default port dropped), or
 * undefined when `value` is not a bare http(s) origin.
 */
export function normalizeOrigin(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
    return undefined;
  return url.origin;
}

/** Options of {@link createHostGuard}. */
export interface HostGuardOptions {
  /** Whether the server binds a loopback address: turns the check on. */
  loopbackBind: boolean;
  /** More names `Host` may carry; with any, `Host` is checked on every bind. @default [] */
  allowedHosts?: readonly string[];
  /**
   * Let any IP address through as well (`Host: 10.1.2.3:4000`). DNS rebinding needs a name: a page
   * can only send an address as `Host` when the browser connected to that address, i.e. to this
   * server, whose pages are its own. A Prometheus that discovers pods scrapes their addresses.
   * @default false (the API answers loopback addresses and configured names only)
   */
  allowAddresses?: boolean;
}

/**
 * The `Host` rule alone (DNS rebinding), for what answers programs rather than pages: `/metrics`
 * and the emulator's Kubernetes API. Only the host name is compared, not its port: rebinding
 * changes the name, and a local reverse proxy may forward its own port.
 */
export function createHostGuard(options: HostGuardOptions): RequestGuard {
  const extraHosts = (options.allowedHosts ?? []).map((h) => hostnameOf(h) ?? h.toLowerCase());
  const checkHost = options.loopbackBind || extraHosts.length > 0;
  const allowedHosts = new Set([...LOOPBACK_NAMES, ...extraHosts]);
  const allowed = [...allowedHosts, ...(options.allowAddresses ? ['any IP address'] : [])].join(', ');
  return (req) => {
    const host = req.headers.host;
    if (!checkHost || host === undefined) return undefined;
    const name = hostnameOf(host);
    if (name !== undefined && (allowedHosts.has(name) || (options.allowAddresses === true && isAddress(name))))
      return undefined;
    return {
      status: 421,
      code: 'HOST_NOT_ALLOWED',
      message: `this server does not answer to the host name in "Host: ${host.slice(0, 100)}" (allowed: ${allowed}; add names with api.allowedHosts)`,
    };
  };
}

/**
 * The `Host` rule of `/metrics` on a server bound to `bindHost`: the API's (loopback names and
 * `api.allowedHosts`, checked on loopback binds and on any bind once names are configured), plus
 * IP addresses (pods scraped by address).
 */
export function createMetricsGuard(bindHost: string, allowedHosts: readonly string[] = []): RequestGuard {
  return createHostGuard({ loopbackBind: isLoopbackHost(bindHost), allowedHosts, allowAddresses: true });
}

/** Whether a `Host` name (brackets kept for IPv6) is an IP address rather than a DNS name. */
function isAddress(name: string): boolean {
  return isIP(name.replace(/^\[(.*)\]$/, '$1')) !== 0;
}

/**
 * The guard of one server: the `Host` rule ({@link createHostGuard}, loopback addresses and
 * configured names), then the `Origin` rule.
 */
export function createRequestGuard(options: RequestGuardOptions): RequestGuard {
  const hostGuard = createHostGuard({ loopbackBind: options.loopbackBind, allowedHosts: options.allowedHosts ?? [] });
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map((o) => normalizeOrigin(o) ?? o));

  return (req) => {
    const hostRefusal = hostGuard(req);
    if (hostRefusal !== undefined) return hostRefusal;
    const host = req.headers.host;
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    const normalized = normalizeOrigin(origin);
    if (normalized !== undefined) {
      if (allowedOrigins.has(normalized)) return undefined;
      // Same-origin: the page was served by the host it now talks to (the scheme may differ behind a TLS proxy).
      if (
        host !== undefined &&
        URL.canParse(`http://${host}`) &&
        new URL(normalized).host === new URL(`http://${host}`).host
      )
        return undefined;
    }
    return {
      status: 403,
      code: 'ORIGIN_NOT_ALLOWED',
      message: `pages of origin "${origin.slice(0, 100)}" may not use this API (allow it with api.allowedOrigins)`,
    };
  };
}

/** The JSON body of a refusal, in the shape of a GraphQL error response. */
export function refusalBody(refusal: GuardRefusal): string {
  return JSON.stringify({ errors: [{ message: refusal.message, extensions: { code: refusal.code } }] });
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1' || host === '[::1]') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}
