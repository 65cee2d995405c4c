/**
 * The socket agents of a cluster's transport: plain, TLS, or through the kubeconfig cluster's
 * `proxy-url` as kubectl honours it (an `http(s)://` proxy tunnels with CONNECT, via hpagent; a
 * `socks5://` or `socks4://` proxy via socks-proxy-agent). TLS to the API server runs end to end
 * through the tunnel, with the cluster's CA and the user's client certificate.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';
import { SocksProxyAgent } from 'socks-proxy-agent';

/** TLS settings client-node derives from the kubeconfig for one request. */
export interface TlsMaterial {
  ca?: https.AgentOptions['ca'];
  cert?: https.AgentOptions['cert'];
  key?: https.AgentOptions['key'];
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** Options of {@link createClusterAgent}. */
export interface ClusterAgentOptions {
  isHttps: boolean;
  tls: TlsMaterial;
  /** The kubeconfig cluster's `proxy-url`. */
  proxyUrl?: string;
  keepAlive: boolean;
}

/** A digest of the TLS material, so a rotated certificate, key or CA is noticed without keeping copies around. */
export function tlsMaterialKey(isHttps: boolean, tls: TlsMaterial): string {
  if (!isHttps) return 'http';
  const hash = createHash('sha256');
  for (const value of [tls.ca, tls.cert, tls.key]) hash.update(materialText(value)).update('\0');
  hash.update(`${String(tls.rejectUnauthorized)}\0${tls.servername ?? ''}`);
  return hash.digest('hex');
}

function materialText(value: unknown): string {
  if (value === undefined) return '';
  const parts = Array.isArray(value) ? value : [value];
  return parts.map((part) => (typeof part === 'string' ? part : Buffer.isBuffer(part) ? part.toString('base64') : JSON.stringify(part))).join('\n');
}

const PROXY_SCHEMES = new Set(['http:', 'https:', 'socks:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:']);

/** Why a `proxy-url` cannot be used, or undefined when it can. */
export function proxyUrlProblem(proxyUrl: string): string | undefined {
  if (!URL.canParse(proxyUrl)) return 'proxy-url is not a URL';
  const scheme = new URL(proxyUrl).protocol;
  return PROXY_SCHEMES.has(scheme) ? undefined : `proxy-url scheme ${scheme} is not supported (use http, https or socks5)`;
}

/**
 * An agent for one cluster.
 * @throws Error when `proxyUrl` has a scheme kubectl does not support either
 */
export function createClusterAgent(options: ClusterAgentOptions): http.Agent {
  const { isHttps, tls, proxyUrl, keepAlive } = options;
  const tlsOptions: https.AgentOptions = isHttps ? { ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: tls.rejectUnauthorized, servername: tls.servername } : {};
  if (proxyUrl === undefined || proxyUrl === '') {
    return isHttps ? new https.Agent({ keepAlive, ...tlsOptions }) : new http.Agent({ keepAlive });
  }
  const scheme = URL.canParse(proxyUrl) ? new URL(proxyUrl).protocol : '';
  if (scheme === 'http:' || scheme === 'https:') {
    return isHttps ? new HttpsProxyAgent({ keepAlive, proxy: proxyUrl, ...tlsOptions }) : new HttpProxyAgent({ keepAlive, proxy: proxyUrl });
  }
  const problem = proxyUrlProblem(proxyUrl);
  if (problem !== undefined) throw new Error(problem);
  return new SocksProxyAgent(proxyUrl, { keepAlive, ...tlsOptions });
}
