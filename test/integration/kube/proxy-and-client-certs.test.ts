/**
 * The transport as kubectl users expect it: a kubeconfig cluster's `proxy-url` carries every
 * request and watch (an HTTP CONNECT proxy and a SOCKS5 proxy, both written here and counting
 * the tunnels they open), a proxy that is down makes the cluster unreachable rather than being
 * bypassed, HTTPS_PROXY and NO_PROXY apply where the kubeconfig names no proxy, and a client
 * certificate rewritten on disk is the one the next request presents.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { createClusterClient } from '../../../src/kube/cluster-client.ts';
import { loadKubeconfigClusters, type ClusterHandle } from '../../../src/kube/clusters.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { createKubeTransport } from '../../../src/kube/transport.ts';
import type { ProxyEnv } from '../../../src/kube/env-proxy.ts';
import { createWatchCache } from '../../../src/kube/watch-cache.ts';
import { makeObject, refOf, waitFor } from './helpers.ts';

const run = promisify(execFile);
const TOKEN = 'proxy-test-token';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'phaselog-proxy-certs-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Tunnels {
  port: number;
  targets: string[];
  close(): Promise<void>;
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

function closeServer(server: net.Server, sockets: Set<net.Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * An HTTP proxy that only tunnels (CONNECT), as corporate proxies in front of API servers do. It
 * resolves names itself, as such proxies do: `*.cluster.test` is this machine.
 */
async function startConnectProxy(): Promise<Tunnels> {
  const targets: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on('connection', (s: net.Socket) => sockets.add(s));
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    targets.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(
      Number(port),
      host?.endsWith('.cluster.test') === true ? '127.0.0.1' : (host ?? ''),
      () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      },
    );
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const port = await listen(server);
  return { port, targets, close: () => closeServer(server, sockets) };
}

/** A SOCKS5 proxy (RFC 1928, no authentication, CONNECT to an IPv4 address or a name). */
async function startSocksProxy(): Promise<Tunnels> {
  const targets: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('error', () => client.destroy());
    client.once('data', () => {
      client.write(Buffer.from([5, 0]));
      client.once('data', (request: Buffer) => {
        const type = request[3];
        let host: string;
        let offset: number;
        if (type === 1) {
          host = [...request.subarray(4, 8)].join('.');
          offset = 8;
        } else {
          const length = request[4] ?? 0;
          host = request.subarray(5, 5 + length).toString();
          offset = 5 + length;
        }
        const port = request.readUInt16BE(offset);
        targets.push(`${host}:${port}`);
        const upstream = net.connect(port, host, () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          upstream.pipe(client);
          client.pipe(upstream);
        });
        sockets.add(upstream);
        upstream.on('error', () => client.destroy());
      });
    });
  });
  const port = await listen(server);
  return { port, targets, close: () => closeServer(server, sockets) };
}

function handleWithProxy(em: Emulator, proxyUrl: string): ClusterHandle {
  const doc = parse(em.kubeconfig()) as { clusters: Array<{ cluster: Record<string, unknown> }> };
  for (const c of doc.clusters) c.cluster['proxy-url'] = proxyUrl;
  const handle = loadKubeconfigClusters({ yaml: stringify(doc) }).clusters[0];
  if (handle === undefined) throw new Error('no cluster');
  return handle;
}

describe('proxy-url', () => {
  let em: Emulator;
  const proxies: Tunnels[] = [];
  beforeAll(async () => {
    em = await startEmulator({ port: 0, tls: true, token: TOKEN });
    em.apply(makeObject('ConfigMap', 'shop', 'web'));
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await em.close();
  });

  it.each([
    ['an HTTP CONNECT proxy', startConnectProxy, 'http'],
    ['a SOCKS5 proxy', startSocksProxy, 'socks5'],
  ])('reads and watches through %s, with TLS to the API server end to end', async (_what, start, scheme) => {
    const proxy = await start();
    proxies.push(proxy);
    const client = createClusterClient(handleWithProxy(em, `${scheme}://127.0.0.1:${proxy.port}`));
    const target = new URL(em.url).host;
    try {
      const result = await readObjects(client, [refOf('ConfigMap', 'shop', 'web')]);
      expect(result.errors).toEqual([]);
      expect(result.objects.size).toBe(1);
      const afterReads = proxy.targets.length;
      expect(afterReads).toBeGreaterThan(0);
      const cache = createWatchCache(client, { group: '', kind: 'ConfigMap' }, 'shop');
      const names: string[] = [];
      cache.on('change', (c) => names.push(c.ref.name));
      try {
        expect(await cache.start()).toBeUndefined();
        em.apply(makeObject('ConfigMap', 'shop', `through-${scheme}`));
        await waitFor(() => names.includes(`through-${scheme}`), 'a watch event through the proxy');
      } finally {
        cache.stop();
      }
      // The watch opened a tunnel of its own; every tunnel went to the API server.
      expect(proxy.targets.length).toBeGreaterThan(afterReads);
      expect(new Set(proxy.targets)).toEqual(new Set([target]));
    } finally {
      client.close();
    }
  });

  it('a proxy that is down makes the cluster unreachable; the API server is never reached around it', async () => {
    const closed = net.createServer();
    const port = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    em.resetRequests();
    const client = createClusterClient(handleWithProxy(em, `http://127.0.0.1:${port}`));
    try {
      const result = await readObjects(client, [refOf('ConfigMap', 'shop', 'web')]);
      expect(result.clusterError?.kind).toBe('UNREACHABLE');
      expect(result.objects.size).toBe(0);
    } finally {
      client.close();
    }
    expect(em.requests()).toEqual([]);
  });
});

describe('HTTPS_PROXY and NO_PROXY, for clusters without proxy-url', () => {
  let em: Emulator;
  let proxy: Tunnels;
  beforeAll(async () => {
    em = await startEmulator({ port: 0, tls: true, token: TOKEN });
    em.apply(makeObject('ConfigMap', 'shop', 'web'));
    proxy = await startConnectProxy();
  });
  afterAll(async () => {
    await proxy.close();
    await em.close();
  });

  /** The emulator under a name only the proxy can resolve (its certificate is for localhost). */
  function handleByName(proxyEnv: ProxyEnv, proxyUrl?: string): ClusterHandle {
    const doc = parse(em.kubeconfig()) as { clusters: Array<{ cluster: Record<string, unknown> }> };
    for (const c of doc.clusters) {
      c.cluster.server = `https://api.cluster.test:${new URL(em.url).port}`;
      c.cluster['tls-server-name'] = 'localhost';
      if (proxyUrl !== undefined) c.cluster['proxy-url'] = proxyUrl;
    }
    const loaded = loadKubeconfigClusters({ yaml: stringify(doc), proxyEnv });
    const handle = loaded.clusters[0];
    if (handle === undefined) throw new Error(`no cluster: ${JSON.stringify(loaded.errors)}`);
    return handle;
  }

  async function readThrough(handle: ClusterHandle): Promise<string> {
    const client = createClusterClient(handle);
    try {
      const result = await readObjects(client, [refOf('ConfigMap', 'shop', 'web')]);
      return result.clusterError?.kind ?? result.errors[0]?.error.kind ?? 'read';
    } finally {
      client.close();
    }
  }

  it('HTTPS_PROXY carries the requests of a cluster whose kubeconfig names no proxy', async () => {
    const before = proxy.targets.length;
    expect(await readThrough(handleByName({ httpsProxy: `127.0.0.1:${proxy.port}` }))).toBe('read');
    expect(proxy.targets.slice(before)).toContain(`api.cluster.test:${new URL(em.url).port}`);
  });

  it('NO_PROXY sends the cluster around the proxy (here: to a name nobody else resolves)', async () => {
    const before = proxy.targets.length;
    expect(
      await readThrough(
        handleByName({ httpsProxy: `http://127.0.0.1:${proxy.port}`, noProxy: 'other.example,cluster.test' }),
      ),
    ).toBe('UNREACHABLE');
    expect(proxy.targets.length).toBe(before);
  });

  it("the kubeconfig's proxy-url wins over HTTPS_PROXY", async () => {
    const closed = net.createServer();
    const deadPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    expect(
      await readThrough(handleByName({ httpsProxy: `http://127.0.0.1:${deadPort}` }, `http://127.0.0.1:${proxy.port}`)),
    ).toBe('read');
  });

  it('an HTTPS_PROXY kubectl could not use either is a load error, never a direct connection', () => {
    const doc = parse(em.kubeconfig()) as { clusters: Array<{ cluster: Record<string, unknown> }> };
    for (const c of doc.clusters) c.cluster.server = 'https://api.cluster.test:6443';
    const loaded = loadKubeconfigClusters({
      yaml: stringify(doc),
      name: 'x',
      proxyEnv: { httpsProxy: 'ftp://proxy.corp:21' },
    });
    expect(loaded.clusters).toEqual([]);
    expect(loaded.errors[0]?.message).toContain('HTTPS_PROXY/HTTP_PROXY: proxy-url scheme ftp: is not supported');
  });
});

/** A CA, a server certificate for 127.0.0.1, and client certificates for any common name. */
async function makePki(): Promise<{
  ca: string;
  serverCert: string;
  serverKey: string;
  client(cn: string): Promise<{ cert: string; key: string }>;
}> {
  const file = (name: string) => path.join(dir, name);
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
    '-days',
    '1',
    '-subj',
    '/CN=test-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  ]);
  const sign = async (name: string, cn: string, extensions: string): Promise<void> => {
    await run('openssl', [
      'req',
      '-new',
      ...ecKey,
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.csr`),
      '-subj',
      `/CN=${cn}`,
    ]);
    writeFileSync(file(`${name}.ext`), extensions);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.crt`),
      '-days',
      '1',
      '-extfile',
      file(`${name}.ext`),
    ]);
  };
  await sign('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  return {
    ca: readFileSync(file('ca.crt'), 'utf8'),
    serverCert: readFileSync(file('server.crt'), 'utf8'),
    serverKey: readFileSync(file('server.key'), 'utf8'),
    async client(cn) {
      await sign(`client-${cn}`, cn, 'extendedKeyUsage=clientAuth\n');
      return {
        cert: readFileSync(file(`client-${cn}.crt`), 'utf8'),
        key: readFileSync(file(`client-${cn}.key`), 'utf8'),
      };
    },
  };
}

describe('client certificates rotated on disk', () => {
  it('the next request presents the new certificate, though the old connection could have been reused', async () => {
    const pki = await makePki();
    let connections = 0;
    let open = 0;
    const server = https.createServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ cn: peer.subject?.CN }));
      },
    );
    server.on('secureConnection', (socket: TLSSocket) => {
      connections += 1;
      open += 1;
      socket.on('close', () => (open -= 1));
    });
    const port = await listen(server);
    const alice = await pki.client('alice');
    const bob = await pki.client('bob');
    const certFile = path.join(dir, 'pki-client.crt');
    const keyFile = path.join(dir, 'pki-client.key');
    writeFileSync(certFile, alice.cert);
    writeFileSync(keyFile, alice.key);
    const kubeconfig = path.join(dir, 'client-cert.kubeconfig');
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: `https://127.0.0.1:${port}`,
              'certificate-authority-data': Buffer.from(pki.ca).toString('base64'),
            },
          },
        ],
        users: [{ name: 'u', user: { 'client-certificate': certFile, 'client-key': keyFile } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const handle = loadKubeconfigClusters({ path: kubeconfig }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    const transport = createKubeTransport(handle.kubeConfig);
    try {
      expect(await transport.getJson('/whoami')).toEqual({ cn: 'alice' });
      expect(await transport.getJson('/whoami')).toEqual({ cn: 'alice' });
      expect(connections).toBe(1); // kept alive: without a rebuilt agent the old certificate would stay
      writeFileSync(certFile, bob.cert);
      writeFileSync(keyFile, bob.key);
      expect(await transport.getJson('/whoami')).toEqual({ cn: 'bob' });
      expect(connections).toBe(2);
      // The connection that presented the old certificate is closed, not kept idle in a pool.
      await waitFor(() => open === 1, 'the old connection to close');
    } finally {
      transport.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
