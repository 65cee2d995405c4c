/**
 * When a cluster counts as not answering: only when its request really failed or had nothing from
 * the server within the bound. A process too busy to read an answer that came in time (a long
 * synchronous task while requests are out) must not record the cluster as unreachable.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadKubeconfigClusters } from '../../../src/kube/clusters.ts';
import { createKubeTransport } from '../../../src/kube/transport.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { connect, makeObject, refOf, startTestCluster, type TestCluster } from './helpers.ts';

const refs = [refOf('Deployment', 'shop', 'web'), refOf('ConfigMap', 'shop', 'web'), refOf('Service', 'shop', 'web')];

/** Keeps this process's event loop busy for `ms`, as a long synchronous task (a big parse, a GC pause) does. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

/** Blocks the event loop for `ms`, starting `afterMs` from now. */
function blockSoon(afterMs: number, ms: number): void {
  setTimeout(() => blockEventLoop(ms), afterMs);
}

describe('request deadline', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
    cluster.emulator.apply([
      makeObject('Deployment', 'shop', 'web'),
      makeObject('ConfigMap', 'shop', 'web'),
      makeObject('Service', 'shop', 'web'),
    ]);
  });
  afterEach(async () => {
    cluster.emulator.clearFaults();
    await cluster.emulator.refuseConnections(false);
  });
  afterAll(async () => cluster.close());

  it('an answer within the bound is read even when this process is blocked past the deadline: the cluster stays readable', async () => {
    const client = connect(cluster.emulator, { transport: { timeoutMs: 1000 } });
    try {
      await readObjects(client, refs); // discovery cached, so the block hits the LISTs
      cluster.emulator.injectFault({ match: { verb: 'list' }, effect: 'latency', latencyMs: 300 });
      const reading = readObjects(client, refs);
      // The server answers at ~300 ms; this process cannot look until ~2600 ms, well past the 1000 ms deadline.
      blockSoon(100, 2500);
      const result = await reading;
      expect(result.clusterError).toBeUndefined();
      expect(result.errors).toEqual([]);
      expect(result.objects.size).toBe(3);
    } finally {
      client.close();
    }
  });

  it('a server that never answers is still a cluster-level TIMEOUT at the bound', async () => {
    const client = connect(cluster.emulator, { transport: { timeoutMs: 400 } });
    try {
      await readObjects(client, refs);
      cluster.emulator.injectFault({ match: { verb: 'list' }, effect: 'hang' });
      const started = performance.now();
      const result = await readObjects(client, refs);
      const took = performance.now() - started;
      expect(result.clusterError?.kind).toBe('TIMEOUT');
      expect(took).toBeGreaterThanOrEqual(400);
      expect(took).toBeLessThan(1400);
    } finally {
      client.close();
    }
  });

  it('a server that never answers times out as soon as a blocked process can look, with no extra grace', async () => {
    const client = connect(cluster.emulator, { transport: { timeoutMs: 400 } });
    try {
      await readObjects(client, refs);
      cluster.emulator.injectFault({ match: { verb: 'list' }, effect: 'hang' });
      const started = performance.now();
      const reading = readObjects(client, refs);
      blockSoon(100, 1500);
      const result = await reading;
      const took = performance.now() - started;
      expect(result.clusterError?.kind).toBe('TIMEOUT');
      expect(took).toBeLessThan(1600 + 600);
    } finally {
      client.close();
    }
  });

  it('a refused connection makes the cluster UNREACHABLE at once, not after the bound', async () => {
    const client = connect(cluster.emulator, { transport: { timeoutMs: 10_000 } });
    try {
      await cluster.emulator.refuseConnections(true);
      const started = performance.now();
      const result = await readObjects(client, refs);
      expect(result.clusterError?.kind).toBe('UNREACHABLE');
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      client.close();
    }
  });
});

describe('keep-alive sockets the server closed', () => {
  let server: http.Server;
  let url = '';
  const sockets = new Set<Socket>();
  let served = 0;
  // Answers the first request of each connection and resets the connection on the second, before
  // answering: what a client sees when the server's idle timeout closes the socket as it is reused.
  const perSocket = new WeakMap<Socket, number>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const seen = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, seen);
      if (seen > 1) {
        req.socket.resetAndDestroy();
        return;
      }
      served += 1;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [] }),
      );
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function transportFor(): ReturnType<typeof createKubeTransport> {
    const yaml = `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: '${url}', insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`;
    const handle = loadKubeconfigClusters({ yaml, name: 'keepalive' }).clusters[0];
    if (handle === undefined) throw new Error('kubeconfig did not load');
    return createKubeTransport(handle.kubeConfig, { timeoutMs: 2000 });
  }

  it('a reused socket reset before any answer is retried once on a new connection, not reported as unreachable', async () => {
    const transport = transportFor();
    try {
      await transport.getJson('/api/v1/configmaps');
      const before = served;
      await expect(transport.getJson('/api/v1/configmaps')).resolves.toMatchObject({ kind: 'ConfigMapList' });
      expect(served).toBe(before + 1);
    } finally {
      transport.close();
    }
  });

  it('after concurrent reads, one idle keep-alive socket stays open, not one per read', async () => {
    const transport = transportFor();
    try {
      await Promise.all([1, 2, 3, 4].map(() => transport.getJson('/api/v1/configmaps')));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sockets.size).toBe(1);
    } finally {
      transport.close();
    }
  });

  it('a server that resets fresh connections too is still unreachable', async () => {
    const transport = transportFor();
    try {
      await transport.getJson('/api/v1/configmaps');
      // Every connection now resets its first request as well.
      server.removeAllListeners('request');
      server.on('request', (req: http.IncomingMessage) => req.socket.resetAndDestroy());
      await expect(transport.getJson('/api/v1/configmaps')).rejects.toMatchObject({ details: { code: 'ECONNRESET' } });
    } finally {
      transport.close();
    }
  });
});
