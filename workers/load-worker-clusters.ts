/**
 * The clusters a worker reads: every `clusters:` entry of the config, plus every context of the
 * kubeconfig named by `kube.kubeconfig` (KUBECONFIG). Entries that fail to load are logged and
 * skipped; the others are read.
 */
import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import { loadClusters, loadKubeconfigClusters, type ClusterHandle } from '../src/kube/clusters.ts';

/**
 * Loads the configured clusters; names must be unique (later duplicates are skipped). `unloaded`
 * names the entries that failed to load: still configured, so they are not retired.
 */
export function loadWorkerClusters(config: Pick<Config, 'clusters' | 'kube'>, log: Logger): { clusters: ClusterHandle[]; unloaded: string[] } {
  const fromConfig = loadClusters(config.clusters);
  const fromKubeconfig = config.kube.kubeconfig !== undefined ? loadKubeconfigClusters({ path: config.kube.kubeconfig }) : { clusters: [], errors: [] };
  const clusters: ClusterHandle[] = [];
  const names = new Set<string>();
  for (const handle of [...fromConfig.clusters, ...fromKubeconfig.clusters]) {
    if (names.has(handle.name)) {
      log.warn({ cluster: handle.name }, 'cluster name used twice; the second is ignored');
      continue;
    }
    names.add(handle.name);
    clusters.push(handle);
  }
  const errors = [...fromConfig.errors, ...fromKubeconfig.errors];
  for (const error of errors) log.error({ cluster: error.cluster, reason: error.message }, 'cluster not loaded');
  return { clusters, unloaded: errors.map((e) => e.cluster).filter((name) => !names.has(name)) };
}
