/**
 * The read path against the Kubernetes API emulator over real HTTP: resources per second read by
 * `readObjects` (batched, paginated LISTs) for many clusters at once, and the requests one tick
 * costs compared with one GET per object (also measured, on one cluster).
 *
 *   node --import tsx bench/read-path.ts [--clusters 10] [--resources 2000] [--namespaces 5] [--ticks 3] [--page-size 500] [--skip-gets]
 */
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from '../src/emulator/index.ts';
import type { ObjectRef } from '../src/inventory/types.ts';
import { createClusterClient, type ClusterClient } from '../src/kube/cluster-client.ts';
import { loadKubeconfigClusters } from '../src/kube/clusters.ts';
import { collectionPath, isKubeError } from '../src/kube/discovery.ts';
import { readObjects, runLimited } from '../src/kube/read-objects.ts';

/** Options of {@link run}. */
export interface ReadPathBenchOptions {
  /** @default 10 */
  clusters?: number;
  /** Resources per cluster, spread over 6 kinds. @default 2000 */
  resources?: number;
  /** Namespaces the resources are spread over. @default 5 */
  namespaces?: number;
  /** Timed ticks after one warm-up tick; the median is reported. @default 3 */
  ticks?: number;
  /** @default 500 */
  pageSize?: number;
  /** Skip measuring the one-GET-per-object path. @default false */
  skipGets?: boolean;
  /** Print the table. @default true */
  print?: boolean;
}

const KINDS: Array<{ apiVersion: string; group: string; kind: string }> = [
  { apiVersion: 'apps/v1', group: 'apps', kind: 'Deployment' },
  { apiVersion: 'v1', group: '', kind: 'Service' },
  { apiVersion: 'v1', group: '', kind: 'ConfigMap' },
  { apiVersion: 'v1', group: '', kind: 'ServiceAccount' },
  { apiVersion: 'apps/v1', group: 'apps', kind: 'StatefulSet' },
  { apiVersion: 'batch/v1', group: 'batch', kind: 'Job' },
];

function makeObject(kindIndex: number, namespace: string, name: string): Record<string, unknown> {
  const k = KINDS[kindIndex] ?? KINDS[0];
  const metadata = {
    name,
    namespace,
    labels: { app: name, 'app.kubernetes.io/part-of': 'bench' },
    annotations: { 'config.k8s.io/owning-inventory': 'bench-inventory' },
  };
  const podSpec = {
    containers: [
      {
        name: 'app',
        image: 'registry.example.com/app:1.2.3',
        ports: [{ containerPort: 8080 }],
        resources: { requests: { cpu: '100m', memory: '128Mi' } },
      },
    ],
  };
  switch (k?.kind) {
    case 'Deployment':
    case 'StatefulSet':
      return {
        apiVersion: k.apiVersion,
        kind: k.kind,
        metadata,
        spec: {
          replicas: 2,
          serviceName: name,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: podSpec },
        },
        status: { replicas: 2, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 1 },
      };
    case 'Service':
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata,
        spec: {
          type: 'ClusterIP',
          clusterIP: '10.96.0.10',
          selector: { app: name },
          ports: [{ port: 80, targetPort: 8080 }],
        },
      };
    case 'ConfigMap':
      return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata,
        data: { 'application.yaml': 'server:\n  port: 8080\nlogging:\n  level: info\n' },
      };
    case 'Job':
      return {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata,
        spec: { template: { spec: { ...podSpec, restartPolicy: 'Never' } } },
        status: { succeeded: 1 },
      };
    default:
      return { apiVersion: 'v1', kind: 'ServiceAccount', metadata };
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Runs the benchmark and returns its figures. */
export async function run(options: ReadPathBenchOptions = {}): Promise<Record<string, number | string>> {
  const clusterCount = options.clusters ?? 10;
  const perCluster = options.resources ?? 2000;
  const namespaceCount = options.namespaces ?? 5;
  const ticks = options.ticks ?? 3;
  const refs: ObjectRef[] = [];
  const objects: Record<string, unknown>[] = [];
  for (let i = 0; i < perCluster; i += 1) {
    const kindIndex = i % KINDS.length;
    const namespace = `ns-${i % namespaceCount}`;
    const name = `res-${i}`;
    objects.push(makeObject(kindIndex, namespace, name));
    refs.push({ group: KINDS[kindIndex]?.group ?? '', kind: KINDS[kindIndex]?.kind ?? '', namespace, name });
  }
  const emulators: Emulator[] = [];
  const clients: ClusterClient[] = [];
  try {
    for (let c = 0; c < clusterCount; c += 1) {
      const emulator = await startEmulator({ port: 0 });
      emulator.apply(objects);
      emulators.push(emulator);
      const handle = loadKubeconfigClusters({ yaml: emulator.kubeconfig(), name: `cluster-${c}` }).clusters[0];
      if (handle === undefined) throw new Error('emulator kubeconfig did not load');
      clients.push(createClusterClient(handle, { transport: { timeoutMs: 60_000 } }));
    }
    const tick = () =>
      Promise.all(clients.map((client) => readObjects(client, refs, { pageSize: options.pageSize ?? 500 })));
    // Warm-up: discovery, connections, JIT.
    const warm = await tick();
    const firstFound = warm.reduce((n, r) => n + r.objects.size, 0);
    if (firstFound !== clusterCount * perCluster)
      throw new Error(`warm-up read ${firstFound} of ${clusterCount * perCluster} resources`);
    const warmDiscovery = emulators.reduce((n, e) => n + e.requestCount({ verb: 'discovery' }), 0);
    const times: number[] = [];
    let lists = 0;
    let discovery = 0;
    for (let t = 0; t < ticks; t += 1) {
      for (const e of emulators) e.resetRequests();
      const started = performance.now();
      await tick();
      times.push(performance.now() - started);
      lists += emulators.reduce((n, e) => n + e.requestCount({ verb: 'list' }), 0);
      discovery += emulators.reduce((n, e) => n + e.requestCount({ verb: 'discovery' }), 0);
    }
    const tickMs = median(times);
    const total = clusterCount * perCluster;
    const figures: Record<string, number | string> = {
      clusters: clusterCount,
      'resources per cluster': perCluster,
      'kinds × namespaces': `${KINDS.length} × ${namespaceCount}`,
      'tick ms (all clusters, median)': Number(tickMs.toFixed(1)),
      'resources/s (batched LIST)': Math.round((total / tickMs) * 1000),
      'LIST requests per tick (all clusters)': Math.round(lists / ticks),
      'LIST requests per tick per cluster': Number((lists / ticks / clusterCount).toFixed(1)),
      'discovery requests, first tick (all clusters)': warmDiscovery,
      'discovery requests per later tick': Math.round(discovery / ticks),
      'GET requests per tick if one per object': total,
      'requests saved ×': Number((total / Math.max(1, lists / ticks)).toFixed(0)),
    };
    if (options.skipGets !== true) Object.assign(figures, await measureGets(clients[0], refs));
    if (options.print ?? true) {
      console.log(`read path against the emulator over HTTP (node ${process.version}), median of ${ticks} ticks`);
      console.table(Object.entries(figures).map(([figure, value]) => ({ figure, value })));
    }
    return figures;
  } finally {
    for (const client of clients) client.close();
    await Promise.all(emulators.map((e) => e.close()));
  }
}

/** One GET per object on one cluster, 8 in flight, for comparison. */
async function measureGets(client: ClusterClient | undefined, refs: ObjectRef[]): Promise<Record<string, number>> {
  if (client === undefined) return {};
  const started = performance.now();
  await runLimited(refs, 8, async (ref) => {
    const resolved = await client.discovery.resolve(ref.group, ref.kind);
    if (isKubeError(resolved)) throw new Error(resolved.message);
    await client.transport.getJson(`${collectionPath(resolved, ref.namespace)}/${encodeURIComponent(ref.name)}`);
  });
  const ms = performance.now() - started;
  return {
    'one cluster, per-object GETs: ms': Number(ms.toFixed(1)),
    'one cluster, per-object GETs: resources/s': Math.round((refs.length / ms) * 1000),
  };
}

function readFlag(name: string): number | undefined {
  const index = process.argv.indexOf(`--${name}`);
  const value = index === -1 ? undefined : Number(process.argv[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await run({
    clusters: readFlag('clusters'),
    resources: readFlag('resources'),
    namespaces: readFlag('namespaces'),
    ticks: readFlag('ticks'),
    pageSize: readFlag('page-size'),
    skipGets: process.argv.includes('--skip-gets'),
  });
}
