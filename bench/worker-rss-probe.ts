/**
 * Measures resident memory in a fresh process (run with --expose-gc by bench/worker-rss.ts):
 *
 *   node --import tsx --expose-gc bench/worker-rss-probe.ts watch '<kubeconfig yaml>'
 *   node --import tsx --expose-gc bench/worker-rss-probe.ts map <count>
 *
 * `watch`: loads phaselog's kube layer, then starts one watch cache per kind of the typical mix
 * (Deployment, Pod, Service, ConfigMap) cluster-wide, as watch mode does, and waits until synced.
 * `map`: JSON.parse of `count` typical objects kept in a Map (the stack notes' reference figure).
 * Either way it reports RSS and heap before and after, each after two full garbage collections.
 * "Before" follows a warm-up that does the same work once and drops it (a watch set synced and
 * stopped; the objects parsed and dropped): V8 grows its young generation and compiles code on the
 * first large parse, tens of MB that every worker pays once and that are not held by the caches.
 * `rssCold` is the RSS before the warm-up, for the figure without it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTypicalObject, TYPICAL_KINDS } from './lib/k8s-objects.ts';

/** What the probe reports (with `ready: true`, read by startReadyChild). */
export interface ProbeResult {
  ready: true;
  url: string;
  objects: number;
  /** RSS of the fresh process, before the warm-up. */
  rssCold: number;
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
  /** V8 heap committed (heapTotal) and memory outside it (external, array buffers), before and after. */
  heapTotalBefore?: number;
  heapTotalAfter?: number;
  externalBefore?: number;
  externalAfter?: number;
  error?: string;
}

async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Several rounds: V8 and the C heap hand freed pages back to the system over a few hundred ms.
  for (let i = 0; i < 6; i++) {
    gc?.();
    await sleep(100);
  }
  return process.memoryUsage();
}

async function probeWatch(kubeconfig: string): Promise<Omit<ProbeResult, 'ready' | 'url'>> {
  const { loadKubeconfigClusters } = await import('../src/kube/clusters.ts');
  const { createClusterClient } = await import('../src/kube/cluster-client.ts');
  const { createWatchSet } = await import('../src/kube/watch-set.ts');
  const handle = loadKubeconfigClusters({ yaml: kubeconfig, name: 'rss' }).clusters[0];
  if (handle === undefined) throw new Error('kubeconfig did not load');
  const client = createClusterClient(handle, { transport: { timeoutMs: 120_000 } });
  const cold = await settle();
  const warm = createWatchSet(client, TYPICAL_KINDS, { pageSize: 500 });
  await warm.start();
  warm.stop();
  const before = await settle();
  const set = createWatchSet(client, TYPICAL_KINDS, { pageSize: 500 });
  const outcomes = await set.start();
  const errors = [...outcomes].filter(([, e]) => e !== undefined).map(([k, e]) => `${k}: ${e?.message ?? ''}`);
  const objects = [...set.caches.values()].reduce((n, c) => n + c.list().length, 0);
  const after = await settle();
  const result = { objects, rssCold: cold.rss, rssBefore: before.rss, rssAfter: after.rss, heapBefore: before.heapUsed, heapAfter: after.heapUsed, heapTotalBefore: before.heapTotal, heapTotalAfter: after.heapTotal, externalBefore: before.external, externalAfter: after.external, ...(errors.length > 0 ? { error: errors.join('; ') } : {}) };
  set.stop();
  client.close();
  return result;
}

async function probeMap(count: number): Promise<Omit<ProbeResult, 'ready' | 'url'>> {
  const cold = await settle();
  let warm: unknown[] | undefined = [];
  for (let i = 0; i < count; i++) warm.push(JSON.parse(JSON.stringify(buildTypicalObject(i))));
  warm = undefined;
  const before = await settle();
  const map = new Map<number, unknown>();
  for (let i = 0; i < count; i++) map.set(i, JSON.parse(JSON.stringify(buildTypicalObject(i))));
  const after = await settle();
  return { objects: map.size, rssCold: cold.rss, rssBefore: before.rss, rssAfter: after.rss, heapBefore: before.heapUsed, heapAfter: after.heapUsed };
}

const [mode, arg] = process.argv.slice(2);
const result = mode === 'watch' ? await probeWatch(arg ?? '') : await probeMap(Number(arg ?? '10000'));
process.send?.({ ready: true, url: '', ...result } satisfies ProbeResult);
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
