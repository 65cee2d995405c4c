/**
 * Where clusters come from: every (or some) context of a kubeconfig, the in-cluster service
 * account, and `clusters:` entries in config. Every auth method client-node supports (token,
 * token file, client certificate, exec plugin, auth providers) works because each cluster keeps
 * its own `KubeConfig`. Loading never throws: a bad entry is reported and the others load.
 */
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterEntry, ClustersConfig } from './config.ts';

/** One cluster phaselog reads. Holds credentials: never log or serialise `kubeConfig`. */
export interface ClusterHandle {
  name: string;
  labels: Record<string, string>;
  /** A KubeConfig whose current context is this cluster. */
  kubeConfig: KubeConfig;
  /** API server URL, safe to show. */
  server: string;
  /** Serialises without credentials, so logging a cluster never leaks a token. */
  toJSON?(): { name: string; labels: Record<string, string>; server: string };
}

/** Builds a handle whose JSON form (logs, API answers) leaves the KubeConfig out. */
export function createClusterHandle(name: string, labels: Record<string, string>, kubeConfig: KubeConfig, server: string): ClusterHandle {
  return {
    name,
    labels,
    kubeConfig,
    server,
    toJSON() {
      return { name: this.name, labels: this.labels, server: this.server };
    },
  };
}

/** A cluster entry that could not be loaded. */
export interface ClusterLoadError {
  /** The cluster or context name, or `clusters[3]` when the entry had none. */
  cluster: string;
  message: string;
}

/** Clusters that loaded, and the entries that did not. */
export interface ClusterLoadResult {
  clusters: ClusterHandle[];
  errors: ClusterLoadError[];
}

/** Options of {@link loadKubeconfigClusters}. */
export interface KubeconfigSource {
  /** Path of a kubeconfig file (relative certificate paths resolve against its folder). */
  path?: string;
  /** Kubeconfig YAML text, when there is no file. */
  yaml?: string;
  /** Only these contexts; every context when omitted. */
  contexts?: string[];
  /** Labels given to every cluster loaded. */
  labels?: Record<string, string>;
  /** Name for the cluster when exactly one context is chosen. @default the context name */
  name?: string;
}

/** Loads one cluster per chosen context of a kubeconfig, named after the context. */
export function loadKubeconfigClusters(source: KubeconfigSource): ClusterLoadResult {
  const label = source.path ?? 'kubeconfig';
  let contextNames: string[];
  try {
    contextNames = readKubeconfig(source).getContexts().map((c) => c.name);
  } catch (err) {
    return { clusters: [], errors: [{ cluster: label, message: `cannot read ${label}: ${errorMessage(err)}` }] };
  }
  const wanted = source.contexts ?? contextNames;
  const result: ClusterLoadResult = { clusters: [], errors: [] };
  for (const context of wanted) {
    if (!contextNames.includes(context)) {
      result.errors.push({ cluster: context, message: `context "${context}" is not in ${label}` });
      continue;
    }
    const kubeConfig = readKubeconfig(source);
    kubeConfig.setCurrentContext(context);
    const server = kubeConfig.getCurrentCluster()?.server;
    if (server === undefined || server === '') {
      result.errors.push({ cluster: context, message: `context "${context}" has no cluster server` });
      continue;
    }
    const name = wanted.length === 1 && source.name !== undefined ? source.name : context;
    result.clusters.push(createClusterHandle(name, { ...source.labels }, kubeConfig, server));
  }
  return result;
}

/** The service account of the pod phaselog runs in. */
export function loadInClusterCluster(name = 'in-cluster', labels: Record<string, string> = {}): ClusterLoadResult {
  if (process.env.KUBERNETES_SERVICE_HOST === undefined) {
    return { clusters: [], errors: [{ cluster: name, message: 'not running in a cluster (KUBERNETES_SERVICE_HOST is unset)' }] };
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromCluster();
  return { clusters: [createClusterHandle(name, labels, kubeConfig, kubeConfig.getCurrentCluster()?.server ?? '')], errors: [] };
}

/** Loads every `clusters:` entry; failures are collected, never thrown. */
export function loadClusters(config: ClustersConfig): ClusterLoadResult {
  const result: ClusterLoadResult = { clusters: [], errors: [] };
  config.forEach((entry, index) => {
    const part = loadEntry(entry, index);
    result.clusters.push(...part.clusters);
    result.errors.push(...part.errors);
  });
  const seen = new Set<string>();
  result.clusters = result.clusters.filter((cluster) => {
    if (!seen.has(cluster.name)) return seen.add(cluster.name);
    result.errors.push({ cluster: cluster.name, message: `cluster name "${cluster.name}" is used twice; the second is ignored` });
    return false;
  });
  return result;
}

function loadEntry(entry: ClusterEntry, index: number): ClusterLoadResult {
  if (entry.kubeconfig !== undefined) {
    const source: KubeconfigSource = { path: entry.kubeconfig, labels: entry.labels };
    if (entry.context !== undefined) source.contexts = [entry.context];
    else if (entry.contexts !== undefined) source.contexts = entry.contexts;
    if (entry.name !== undefined) source.name = entry.name;
    return loadKubeconfigClusters(source);
  }
  const name = entry.name ?? `clusters[${index}]`;
  if (entry.inCluster === true) return loadInClusterCluster(name, entry.labels);
  return loadServerCluster({ ...entry, name, server: entry.server ?? '' });
}

function loadServerCluster(entry: ClusterEntry & { name: string; server: string }): ClusterLoadResult {
  for (const file of [entry.tokenFile, entry.caFile]) {
    if (file !== undefined && !existsSync(file)) return { clusters: [], errors: [{ cluster: entry.name, message: `file ${file} does not exist` }] };
  }
  const user: Record<string, unknown> = { name: 'user' };
  if (entry.token !== undefined) user.token = entry.token;
  if (entry.tokenFile !== undefined) user.authProvider = { name: 'tokenFile', config: { tokenFile: entry.tokenFile } };
  // client-node 1.4 refuses plain-http servers unless skipTLSVerify is set; for http it means nothing else.
  const plainHttp = entry.server.startsWith('http:');
  const cluster: Record<string, unknown> = { name: 'cluster', server: entry.server, skipTLSVerify: entry.insecureSkipTLSVerify === true || plainHttp };
  if (entry.caFile !== undefined) cluster.caFile = entry.caFile;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [user],
    contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
    currentContext: 'context',
  });
  return { clusters: [createClusterHandle(entry.name, entry.labels, kubeConfig, entry.server)], errors: [] };
}

function readKubeconfig(source: KubeconfigSource): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (source.path !== undefined) kubeConfig.loadFromFile(source.path);
  else kubeConfig.loadFromString(source.yaml ?? '');
  return kubeConfig;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
