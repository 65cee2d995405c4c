/**
 * The clusters a worker reads, from every source kubectl users expect, in kubectl's order:
 * `clusters:` entries of the config, plus the kubeconfig named by `kube.kubeconfig` (KUBECONFIG,
 * a `:`-separated list merged as kubectl merges it) or else `~/.kube/config`; with none of those,
 * the pod's service account when KUBERNETES_SERVICE_HOST says phaselog runs in a cluster.
 * A `clusters:` entry that fails to load is logged and skipped (the others are read); a kubeconfig
 * or service account that is the whole source and cannot be used stops the start with an error
 * naming the file, never a silent fallback to the demo.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import {
  loadClusters,
  loadInClusterCluster,
  loadKubeconfigClusters,
  type ClusterHandle,
  type ClusterLoadResult,
} from '../src/kube/clusters.ts';
import type { ProxyEnv } from '../src/kube/env-proxy.ts';
import { KubeconfigError, readKubeconfigFiles, splitKubeconfigPaths } from '../src/kube/kubeconfig-files.ts';
import { StartupError } from '../src/runtime/errors.ts';

/** Where the clusters came from; an empty list means no cluster source exists at all. */
export type ClusterSource = 'clusters' | 'kubeconfig' | 'in-cluster';

/** What {@link loadWorkerClusters} found. */
export interface WorkerClusters {
  clusters: ClusterHandle[];
  /** Names of entries that failed to load: still configured, so they are not retired. */
  unloaded: string[];
  /** The sources that exist (configured or found); empty only where no cluster source exists. */
  sources: ClusterSource[];
}

/** Options of {@link loadWorkerClusters}. */
export interface LoadWorkerClustersOptions {
  /** The home folder whose `.kube/config` is the default kubeconfig. @default os.homedir() */
  homeDir?: string;
}

/**
 * Loads the configured clusters; names must be unique (later duplicates are skipped).
 * @throws StartupError when the kubeconfig or service account phaselog was pointed at cannot be used
 */
export function loadWorkerClusters(
  config: Pick<Config, 'clusters' | 'kube'>,
  log: Logger,
  options: LoadWorkerClustersOptions = {},
): WorkerClusters {
  const proxyEnv: ProxyEnv = {
    httpsProxy: config.kube.httpsProxy,
    httpProxy: config.kube.httpProxy,
    noProxy: config.kube.noProxy,
  };
  const inCluster = {
    serviceHost: config.kube.serviceHost,
    servicePort: config.kube.servicePort,
    serviceAccountDir: config.kube.serviceAccountDir,
    proxyEnv,
  };
  const sources: ClusterSource[] = [];
  const parts: ClusterLoadResult[] = [];
  if (config.clusters.length > 0) {
    sources.push('clusters');
    parts.push(loadClusters(config.clusters, inCluster));
  }
  const kubeconfigFiles = findKubeconfigFiles(config, options.homeDir ?? os.homedir());
  if (kubeconfigFiles !== undefined) {
    sources.push('kubeconfig');
    parts.push(loadKubeconfig(kubeconfigFiles, proxyEnv, log));
  } else if (config.clusters.length === 0 && config.kube.serviceHost !== undefined) {
    sources.push('in-cluster');
    const loaded = loadInClusterCluster({ ...inCluster, name: config.kube.inClusterName });
    const failure = loaded.errors[0];
    if (failure !== undefined) {
      throw new StartupError(
        `${failure.message} (KUBERNETES_SERVICE_HOST is set, so phaselog runs in a cluster; mount the service-account token, or set KUBECONFIG or clusters:)`,
      );
    }
    log.info(
      { cluster: config.kube.inClusterName, server: loaded.clusters[0]?.server },
      'reading the cluster phaselog runs in, with its service account',
    );
    parts.push(loaded);
  }
  const clusters: ClusterHandle[] = [];
  const names = new Set<string>();
  for (const handle of parts.flatMap((p) => p.clusters)) {
    if (names.has(handle.name)) {
      log.warn({ cluster: handle.name }, 'cluster name used twice; the second is ignored');
      continue;
    }
    names.add(handle.name);
    clusters.push(handle);
  }
  const errors = parts.flatMap((p) => p.errors);
  for (const error of errors) log.error({ cluster: error.cluster, reason: error.message }, 'cluster not loaded');
  return { clusters, unloaded: errors.map((e) => e.cluster).filter((name) => !names.has(name)), sources };
}

/** `kube.kubeconfig` (KUBECONFIG), else `~/.kube/config` when it exists, as kubectl does. */
function findKubeconfigFiles(config: Pick<Config, 'kube'>, homeDir: string): string[] | undefined {
  if (config.kube.kubeconfig !== undefined) return splitKubeconfigPaths(config.kube.kubeconfig);
  const home = path.join(homeDir, '.kube', 'config');
  return existsSync(home) ? [home] : undefined;
}

function loadKubeconfig(files: string[], proxyEnv: ProxyEnv, log: Logger): ClusterLoadResult {
  try {
    const merged = readKubeconfigFiles(files);
    if (merged.missing.length > 0)
      log.info(
        { missing: merged.missing, read: merged.files },
        'kubeconfig files that do not exist were skipped, as kubectl skips them',
      );
    if (merged.kubeConfig.getContexts().length === 0)
      log.warn({ read: merged.files }, 'the kubeconfig defines no context: no cluster to read from it');
  } catch (error) {
    if (error instanceof KubeconfigError) throw new StartupError(error.message);
    throw error;
  }
  return loadKubeconfigClusters({ paths: files, proxyEnv });
}
