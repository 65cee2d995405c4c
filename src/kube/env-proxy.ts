/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY, as kubectl honours them for a cluster without `proxy-url`
 * (client-go's default transport uses Go's `http.ProxyFromEnvironment`, whose rules live in
 * golang.org/x/net/http/httpproxy). Written here because those rules differ from the npm
 * `proxy-from-env` package's where kubectl users would notice: loopback hosts are never proxied,
 * `foo.com` in NO_PROXY also covers its subdomains while `.foo.com` covers only them, CIDR
 * entries match IP hosts, and a proxy without a scheme means `http://`.
 */
import net from 'node:net';

/** The proxy variables kubectl reads (upper case wins over lower case when both are set). */
export interface ProxyEnv {
  httpsProxy?: string;
  httpProxy?: string;
  noProxy?: string;
}

/** A proxy variable's value as a URL: without a scheme it means `http://`, as in Go. */
export function normalizeProxy(value: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
}

/** The proxy URL for requests to `server`, or undefined for a direct connection. */
export function proxyFromEnvironment(server: string, env: ProxyEnv): string | undefined {
  if (!URL.canParse(server)) return undefined;
  const url = new URL(server);
  const https = url.protocol === 'https:';
  const proxy = https ? env.httpsProxy : env.httpProxy;
  if (proxy === undefined || proxy === '') return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port !== '' ? url.port : https ? '443' : '80';
  if (host === 'localhost' || (net.isIP(host) !== 0 && isLoopback(host))) return undefined;
  if (isExcluded(host, port, env.noProxy ?? '')) return undefined;
  return normalizeProxy(proxy);
}

function isLoopback(ip: string): boolean {
  if (net.isIPv4(ip)) return ip.startsWith('127.');
  return ip === '::1' || /^::ffff:127\./i.test(ip);
}

function isExcluded(host: string, port: string, noProxy: string): boolean {
  for (const raw of noProxy.split(',')) {
    let entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    if (entry.includes('/')) {
      if (net.isIP(host) !== 0 && inCidr(host, entry)) return true;
      continue;
    }
    let entryPort = '';
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed !== null) {
      entry = bracketed[1] ?? '';
      entryPort = bracketed[2] ?? '';
    } else if (net.isIP(entry) === 0) {
      const colon = entry.lastIndexOf(':');
      if (colon !== -1) {
        entryPort = entry.slice(colon + 1);
        entry = entry.slice(0, colon);
      }
    }
    if (entryPort !== '' && entryPort !== port) continue;
    if (net.isIP(entry) !== 0) {
      if (entry === host) return true;
      continue;
    }
    if (entry.startsWith('*.')) entry = entry.slice(1);
    // "foo.com" covers foo.com and its subdomains; ".foo.com" covers the subdomains only.
    const subdomainsOnly = entry.startsWith('.');
    const domain = subdomainsOnly ? entry : `.${entry}`;
    if (host.endsWith(domain) || (!subdomainsOnly && host === entry)) return true;
  }
  return false;
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  if (base === undefined || !Number.isInteger(bits) || net.isIP(base) === 0 || net.isIP(base) !== net.isIP(ip))
    return false;
  const list = new net.BlockList();
  try {
    list.addSubnet(base, bits, net.isIPv4(base) ? 'ipv4' : 'ipv6');
  } catch {
    return false;
  }
  return list.check(ip, net.isIPv4(ip) ? 'ipv4' : 'ipv6');
}
