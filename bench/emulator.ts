/**
 * How the Kubernetes API emulator copes with a large cluster: filling it with objects in-process,
 * LIST of 2,000 Deployments in one namespace (raw HTTP and through client-node's AppsV1Api), the
 * first page and a full paginated walk of a cluster-wide list, sequential GETs, and watch fan-out.
 *
 *   node --import tsx bench/emulator.ts [--objects 100000] [--list 2000] [--repeats 7]
 */
import { Agent, get } from 'node:http';
import { pathToFileURL } from 'node:url';
import { AppsV1Api, KubeConfig } from '@kubernetes/client-node';
import { startEmulator, type Emulator } from '../src/emulator/index.ts';

/** Options for {@link run}. */
export interface EmulatorBenchOptions {
  /** ConfigMaps to fill the cluster with. @default 100000 */
  objects?: number;
  /** Deployments in the namespace that is listed. @default 2000 */
  list?: number;
  /** Repetitions of each LIST measurement (median reported). @default 7 */
  repeats?: number;
}

function buildDeployment(i: number): Record<string, unknown> {
  const name = `svc-${String(i).padStart(5, '0')}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: 'listed',
      labels: { app: name, tier: i % 3 === 0 ? 'web' : 'worker', 'app.kubernetes.io/part-of': 'shop' },
      annotations: { 'deployment.kubernetes.io/revision': '3' },
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'main',
              image: `registry.example.com/shop/${name}:1.4.${i % 10}`,
              ports: [{ containerPort: 8080 }],
              resources: { requests: { cpu: '100m', memory: '128Mi' } },
            },
          ],
        },
      },
    },
    status: {
      observedGeneration: 1,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
          lastUpdateTime: '2026-11-20T10:00:00Z',
          lastTransitionTime: '2026-11-20T10:00:00Z',
        },
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: `ReplicaSet "${name}-5d9f7c" has successfully progressed.`,
          lastUpdateTime: '2026-11-20T10:00:00Z',
          lastTransitionTime: '2026-11-20T10:00:00Z',
        },
      ],
    },
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

const agent = new Agent({ keepAlive: true });

// node:http rather than fetch: undici's own overhead would dominate the small requests.
function httpGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve(bytes));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function walkAllPages(em: Emulator, limit: number): Promise<number> {
  let token = '';
  let items = 0;
  do {
    const res = await fetch(
      `${em.url}/api/v1/configmaps?limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
    );
    const body = (await res.json()) as { items: unknown[]; metadata: { continue?: string } };
    items += body.items.length;
    token = body.metadata.continue ?? '';
  } while (token !== '');
  return items;
}

async function measureWatchFanOut(em: Emulator, watchers: number, changes: number): Promise<number> {
  const controllers: AbortController[] = [];
  const received = new Array<number>(watchers).fill(0);
  let resolveAll: () => void = () => undefined;
  const allDone = new Promise<void>((r) => (resolveAll = r));
  const from = em.resourceVersion();
  await Promise.all(
    Array.from({ length: watchers }, async (_, w) => {
      const controller = new AbortController();
      controllers.push(controller);
      const res = await fetch(`${em.url}/api/v1/namespaces/fanout/configmaps?watch=true&resourceVersion=${from}`, {
        signal: controller.signal,
      });
      const reader = res.body?.getReader();
      const decoder = new TextDecoder();
      void (async () => {
        for (;;) {
          const chunk = await reader?.read().catch(() => undefined);
          if (!chunk || chunk.done) return;
          received[w] = (received[w] ?? 0) + (decoder.decode(chunk.value).match(/\n/g)?.length ?? 0);
          if (received.every((n) => n >= changes)) resolveAll();
        }
      })();
    }),
  );
  const started = performance.now();
  for (let i = 0; i < changes; i++)
    em.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `f-${i % 50}`, namespace: 'fanout' },
      data: { n: String(i) },
    });
  await allDone;
  const elapsed = performance.now() - started;
  for (const c of controllers) c.abort();
  return elapsed;
}

/** Runs the benchmark and returns its figures. */
export async function run(options: EmulatorBenchOptions = {}): Promise<Record<string, number | string>> {
  const objects = options.objects ?? 100_000;
  const listSize = options.list ?? 2_000;
  const repeats = options.repeats ?? 7;
  const em = await startEmulator();
  try {
    const rssBefore = process.memoryUsage().rss;
    const fillStart = performance.now();
    for (let i = 0; i < objects; i++) {
      em.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: `ns-${i % 200}`, labels: { shard: String(i % 10) } },
        data: { payload: 'x'.repeat(512), index: String(i) },
      });
    }
    const fillMs = performance.now() - fillStart;
    for (let i = 0; i < listSize; i++) em.apply(buildDeployment(i));
    const rssMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;

    const rawTimes: number[] = [];
    let bytes = 0;
    for (let r = 0; r < repeats; r++) {
      rawTimes.push(
        await timeIt(async () => (bytes = await httpGet(`${em.url}/apis/apps/v1/namespaces/listed/deployments`))),
      );
    }
    const kc = new KubeConfig();
    kc.loadFromString(em.kubeconfig());
    const apps = kc.makeApiClient(AppsV1Api);
    const clientTimes: number[] = [];
    for (let r = 0; r < repeats; r++)
      clientTimes.push(await timeIt(() => apps.listNamespacedDeployment({ namespace: 'listed' })));
    const selectorTimes: number[] = [];
    for (let r = 0; r < repeats; r++)
      selectorTimes.push(
        await timeIt(() => httpGet(`${em.url}/apis/apps/v1/namespaces/listed/deployments?labelSelector=tier%3Dweb`)),
      );
    const firstPageTimes: number[] = [];
    for (let r = 0; r < repeats; r++)
      firstPageTimes.push(await timeIt(() => httpGet(`${em.url}/api/v1/configmaps?limit=500`)));
    let walked = 0;
    const walkMs = await timeIt(async () => (walked = await walkAllPages(em, 500)));

    const getSeconds = 1.5;
    let gets = 0;
    const getEnd = performance.now() + getSeconds * 1000;
    while (performance.now() < getEnd) {
      await httpGet(`${em.url}/api/v1/namespaces/ns-7/configmaps/cm-${7 + 200 * (gets % 100)}`);
      gets++;
    }
    const fanOutMs = await measureWatchFanOut(em, 20, 2_000);

    return {
      objectsStored: em.objectCount(),
      fillObjectsPerSecond: Math.round(objects / (fillMs / 1000)),
      retainedRssMb: Math.round(rssMb),
      listedObjects: listSize,
      listBytes: bytes,
      listRawMedianMs: round(median(rawTimes)),
      listClientNodeMedianMs: round(median(clientTimes)),
      listSelectorMedianMs: round(median(selectorTimes)),
      clusterWideFirstPage500MedianMs: round(median(firstPageTimes)),
      fullWalkItems: walked,
      fullWalkSeconds: round(walkMs / 1000, 2),
      sequentialGetsPerSecond: Math.round(gets / getSeconds),
      watchFanOut20x2000Ms: round(fanOutMs),
      watchEventsDeliveredPerSecond: Math.round((20 * 2_000) / (fanOutMs / 1000)),
    };
  } finally {
    agent.destroy();
    await em.close();
  }
}

function readFlag(argv: string[], name: string): number | undefined {
  const i = argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : Number(argv[i + 1]);
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const opts: EmulatorBenchOptions = {};
  const o = readFlag(process.argv, 'objects');
  const l = readFlag(process.argv, 'list');
  const r = readFlag(process.argv, 'repeats');
  if (o !== undefined) opts.objects = o;
  if (l !== undefined) opts.list = l;
  if (r !== undefined) opts.repeats = r;
  const figures = await run(opts);
  console.log('Kubernetes API emulator');
  console.log('figure                          | value');
  console.log('------------------------------- | -----');
  for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(31)} | ${v}`);
}
