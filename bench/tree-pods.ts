/**
 * Resource trees' memory: the JS heap a worker adds to watch `pods` Pods (and their ReplicaSets)
 * for trees, scaled to 10,000 Pods (issue #22's target: within 10 MB per 10,000 watched objects),
 * the time to build every Deployment's tree from the caches, and the bytes published to Redis.
 * The emulator runs in its own process; each measurement in a fresh one (the median of 3 taken).
 *
 *   node --import tsx bench/tree-pods.ts [--pods 10000]
 */
import { fileURLToPath } from 'node:url';
import { startReadyChild, type ServerReadyMessage } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { TreeProbeResult } from './tree-pods-probe.ts';

/** Options of {@link run}. */
export interface TreePodsBenchOptions {
  /** Pods in the emulated cluster (10 per Deployment); figures are scaled to 10,000. @default 20000 */
  pods?: number;
  /** Fresh probe processes, the median heap taken. @default 3 */
  probes?: number;
}

interface ClusterReady extends ServerReadyMessage {
  kubeconfig: string;
  deployments: number;
}

const CLUSTER_FILE = fileURLToPath(new URL('./tree-pods-cluster.ts', import.meta.url));
const PROBE_FILE = fileURLToPath(new URL('./tree-pods-probe.ts', import.meta.url));
const MB = 1024 * 1024;

export async function run(options: TreePodsBenchOptions = {}): Promise<Figures> {
  const pods = options.pods ?? 20_000;
  const cluster = await startReadyChild<ClusterReady>(CLUSTER_FILE, [String(pods)], 180_000);
  try {
    const results: TreeProbeResult[] = [];
    for (let i = 0; i < (options.probes ?? 3); i++) {
      const child = await startReadyChild<TreeProbeResult>(
        PROBE_FILE,
        [cluster.ready.kubeconfig, String(cluster.ready.deployments)],
        180_000,
        ['--expose-gc'],
      );
      await child.stop();
      if (child.ready.error !== undefined) throw new Error(`tree caches did not sync: ${child.ready.error}`);
      results.push(child.ready);
    }
    results.sort((a, b) => a.heapAfter - a.heapBefore - (b.heapAfter - b.heapBefore));
    const median = results[Math.floor(results.length / 2)] as TreeProbeResult;
    const per10k = (bytes: number) => round(((bytes / Math.max(1, median.pods)) * 10_000) / MB, 2);
    return {
      'watched Pods': median.pods,
      Deployments: cluster.ready.deployments,
      'tree caches (Pods + ReplicaSets): JS heap MB per 10k Pods': per10k(median.heapAfter - median.heapBefore),
      'JS heap MB per 10k Pods, each process': results
        .map((r) => round((((r.heapAfter - r.heapBefore) / Math.max(1, r.pods)) * 10_000) / MB, 2))
        .join(', '),
      'ms to build every tree (index + trees)': round(median.buildMs, 1),
      'published tree KB per Deployment': round(
        median.publishedBytes / Math.max(1, cluster.ready.deployments) / 1024,
        2,
      ),
    };
  } finally {
    await cluster.stop();
  }
}

if (isMain(import.meta.url)) {
  printFigures(
    'resource trees: worker memory per 10,000 watched Pods',
    await run({ pods: readNumberFlag('pods'), probes: readNumberFlag('probes') }),
  );
}
