/**
 * Heap a worker adds to watch Pods for resource trees, in a fresh process (run with --expose-gc by
 * bench/tree-pods.ts): the ReplicaSet and Pod caches as src/snapshot/live.ts starts them for trees
 * (status views only, no revisions), synced; then every Deployment's tree built from them (the
 * owner index and the trees, as a publish does) and its published JSON size.
 *
 *   node --import tsx --expose-gc bench/tree-pods-probe.ts '<kubeconfig yaml>' <deployments>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerReadyMessage } from './lib/child-server.ts';

/** What the probe reports. */
export interface TreeProbeResult extends ServerReadyMessage {
  pods: number;
  heapBefore: number;
  heapAfter: number;
  /** Milliseconds to index the caches and build every Deployment's tree, median of 5. */
  buildMs: number;
  /** Bytes of every tree as published (JSON). */
  publishedBytes: number;
  error?: string;
}

async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 6; i++) {
    gc?.();
    await sleep(100);
  }
  return process.memoryUsage();
}

const TREE_KINDS = [
  { group: 'apps', kind: 'ReplicaSet', viewOnly: true },
  { group: '', kind: 'Pod', viewOnly: true },
];

async function probe(kubeconfig: string, deployments: number): Promise<Omit<TreeProbeResult, 'ready' | 'url'>> {
  const { loadKubeconfigClusters } = await import('../src/kube/clusters.ts');
  const { createClusterClient } = await import('../src/kube/cluster-client.ts');
  const { createWatchSet } = await import('../src/kube/watch-set.ts');
  const { buildChildTree, indexOwners } = await import('../src/status/children.ts');
  const handle = loadKubeconfigClusters({ yaml: kubeconfig, name: 'trees' }).clusters[0];
  if (handle === undefined) throw new Error('kubeconfig did not load');
  const client = createClusterClient(handle, { transport: { timeoutMs: 120_000 } });
  // Warm-up: the same sync once, dropped (V8 grows its young generation on the first large parse).
  const warm = createWatchSet(client, TREE_KINDS, { pageSize: 500 });
  await warm.start();
  warm.stop();
  const before = await settle();
  const set = createWatchSet(client, TREE_KINDS, { pageSize: 500 });
  const outcomes = await set.start();
  const errors = [...outcomes].filter(([, e]) => e !== undefined).map(([k, e]) => `${k}: ${e?.message ?? ''}`);
  const after = await settle();
  const pods = set.caches.get('/Pod')?.list().length ?? 0;
  const times: number[] = [];
  let publishedBytes = 0;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    const index = indexOwners([
      ...(set.caches.get('apps/ReplicaSet')?.list() ?? []),
      ...(set.caches.get('/Pod')?.list() ?? []),
    ]);
    let bytes = 0;
    for (let d = 0; d < deployments; d++)
      bytes += JSON.stringify(
        buildChildTree({ namespace: `team-${d % 20}`, kind: 'Deployment', name: `web-${d}` }, index, Date.now()),
      ).length;
    times.push(performance.now() - start);
    publishedBytes = bytes;
  }
  set.stop();
  client.close();
  times.sort((a, b) => a - b);
  return {
    pods,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    buildMs: times[2] ?? 0,
    publishedBytes,
    ...(errors.length > 0 ? { error: errors.join('; ') } : {}),
  };
}

const [kubeconfig, deployments] = process.argv.slice(2);
const result = await probe(kubeconfig ?? '', Number(deployments ?? '0'));
process.send?.({ ready: true, url: '', ...result } satisfies TreeProbeResult);
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
