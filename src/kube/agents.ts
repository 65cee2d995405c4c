/**
 * The socket agents of a cluster's transport: plain, TLS, or through the kubeconfig cluster's
 * `proxy-url` as kubectl honours it (an `http(s)://` proxy tunnels with CONNECT, via hpagent; a
 * `socks5://` or `socks4://` proxy via socks-proxy-agent). TLS to the API server runs end to end
 * through the tunnel, with the cluster's CA and the user's client certificate.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
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
  /**
   * Idle keep-alive sockets kept open for the next request; sockets freed beyond it close. Each
   * idle TLS socket holds its OpenSSL state and buffers. @default Node's 256
   */
  maxFreeSockets?: number;
}

// Secure contexts by TLS material. Without one, Node builds a context (parsing the CA bundle and the
// client key into an OpenSSL store) for every TLS connection; one per material serves every
// connection to a cluster, and every cluster (several kubeconfig contexts of one server) that uses
// the same CA and client certificate. Entries go when no agent holds their context any more.
const secureContexts = new Map<string, WeakRef<tls.SecureContext>>();
const forgetContext = new FinalizationRegistry<string>((key) => {
  if (secureContexts.get(key)?.deref() === undefined) secureContexts.delete(key);
});

/**
 * The secure context for `material`, shared by every agent given the same CA, certificate and key.
 * @throws Error when the certificate, key or CA cannot be parsed
 */
export function sharedSecureContext(material: TlsMaterial): tls.SecureContext {
  const key = tlsMaterialKey(true, { ca: material.ca, cert: material.cert, key: material.key });
  const known = secureContexts.get(key)?.deref();
  if (known !== undefined) return known;
  const context = tls.createSecureContext({ ca: material.ca, cert: material.cert, key: material.key });
  secureContexts.set(key, new WeakRef(context));
  forgetContext.register(context, key);
  return context;
}

/** A digest of the TLS material, so a rotated certificate, key or CA is noticed without keeping copies around. */
export function tlsMaterialKey(isHttps: boolean, material: TlsMaterial): string {
  if (!isHttps) return 'http';
  const hash = createHash('sha256');
  for (const value of [material.ca, material.cert, material.key]) hash.update(materialText(value)).update('\0');
  hash.update(`${String(material.rejectUnauthorized)}\0${material.servername ?? ''}`);
  return hash.digest('hex');
}

function materialText(value: unknown): string {
  if (value === undefined) return '';
  const parts = Array.isArray(value) ? value : [value];
  return parts
    .map((part) =>
      typeof part === 'string' ? part : Buffer.isBuffer(part) ? part.toString('base64') : JSON.stringify(part),
    )
    .join('\n');
}

const PROXY_SCHEMES = new Set(['http:', 'https:', 'socks:', 'socks4:', 'socks4a:', 'socks5:', 'socks5h:']);

/** Why a `proxy-url` cannot be used, or undefined when it can. */
export function proxyUrlProblem(proxyUrl: string): string | undefined {
  if (!URL.canParse(proxyUrl)) return 'proxy-url is not a URL';
  const scheme = new URL(proxyUrl).protocol;
  return PROXY_SCHEMES.has(scheme)
    ? undefined
    : `proxy-url scheme ${scheme} is not supported (use http, https or socks5)`;
}

/**
 * An agent for one cluster. Its TLS connections share one secure context per TLS material.
 * @throws Error when `proxyUrl` has a scheme kubectl does not support either, or the TLS material cannot be parsed
 */
export function createClusterAgent(options: ClusterAgentOptions): http.Agent {
  const { isHttps, tls: material, proxyUrl } = options;
  const pool: http.AgentOptions = {
    keepAlive: options.keepAlive,
    ...(options.maxFreeSockets !== undefined ? { maxFreeSockets: options.maxFreeSockets } : {}),
  };
  const tlsOptions: https.AgentOptions = isHttps
    ? {
        ca: material.ca,
        cert: material.cert,
        key: material.key,
        rejectUnauthorized: material.rejectUnauthorized,
        servername: material.servername,
        secureContext: sharedSecureContext(material),
      }
    : {};
  if (proxyUrl === undefined || proxyUrl === '') {
    return isHttps ? new https.Agent({ ...pool, ...tlsOptions }) : new http.Agent(pool);
  }
  const scheme = URL.canParse(proxyUrl) ? new URL(proxyUrl).protocol : '';
  if (scheme === 'http:' || scheme === 'https:') {
    return isHttps
      ? new HttpsProxyAgent({ ...pool, proxy: proxyUrl, ...tlsOptions })
      : new HttpProxyAgent({ ...pool, proxy: proxyUrl });
  }
  const problem = proxyUrlProblem(proxyUrl);
  if (problem !== undefined) throw new Error(problem);
  return new SocksProxyAgent(proxyUrl, { ...pool, ...tlsOptions });
}
