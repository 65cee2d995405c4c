/**
 * Where clusters come from: every (or some) context of a kubeconfig, the in-cluster service
 * account, and `clusters:` entries in config. Every auth method client-node supports (token,
 * token file, client certificate, exec plugin, auth providers) works because each cluster keeps
 * its own `KubeConfig`. Loading never throws: a bad entry is reported and the others load.
 */
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
// config.js, not the package's main entry, which loads the whole generated API client (see lean-client-node.ts).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { proxyUrlProblem } from './agents.ts';
import { SERVICE_ACCOUNT_DIR, type ClusterEntry, type ClustersConfig } from './config.ts';
import { proxyFromEnvironment, type ProxyEnv } from './env-proxy.ts';
import { KubeconfigError, readKubeconfigFiles } from './kubeconfig-files.ts';
import { useWatchedTokenFiles, watchedTokenFileProvider } from './token-file.ts';

export { SERVICE_ACCOUNT_DIR };

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
export function createClusterHandle(
  name: string,
  labels: Record<string, string>,
  kubeConfig: KubeConfig,
  server: string,
): ClusterHandle {
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
  /** Several kubeconfig files merged as kubectl merges a `KUBECONFIG` list (first definition wins). */
  paths?: string[];
  /** Kubeconfig YAML text, when there is no file. */
  yaml?: string;
  /** Only these contexts; every context when omitted. */
  contexts?: string[];
  /** Labels given to every cluster loaded. */
  labels?: Record<string, string>;
  /** Name for the cluster when exactly one context is chosen. @default the context name */
  name?: string;
  /** HTTPS_PROXY/HTTP_PROXY/NO_PROXY, used for clusters without `proxy-url` as kubectl uses them. */
  proxyEnv?: ProxyEnv;
}

/** Loads one cluster per chosen context of a kubeconfig, named after the context. */
export function loadKubeconfigClusters(source: KubeconfigSource): ClusterLoadResult {
  const label = source.paths?.join(path.delimiter) ?? source.path ?? 'kubeconfig';
  let contextNames: string[];
  try {
    contextNames = readKubeconfig(source)
      .getContexts()
      .map((c) => c.name);
  } catch (err) {
    return {
      clusters: [],
      errors: [
        {
          cluster: label,
          message: err instanceof KubeconfigError ? err.message : `cannot read ${label}: ${errorMessage(err)}`,
        },
      ],
    };
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
    // A proxy that cannot be used (kubeconfig proxy-url or HTTPS_PROXY) is reported here, not on every request.
    const envProblem = useEnvProxy(kubeConfig, source.proxyEnv);
    const proxyUrl = kubeConfig.getCurrentCluster()?.proxyUrl;
    const proxyProblem =
      envProblem ?? (proxyUrl !== undefined && proxyUrl !== '' ? proxyUrlProblem(proxyUrl) : undefined);
    if (proxyProblem !== undefined) {
      result.errors.push({ cluster: context, message: `context "${context}": ${proxyProblem}` });
      continue;
    }
    const name = wanted.length === 1 && source.name !== undefined ? source.name : context;
    result.clusters.push(createClusterHandle(name, { ...source.labels }, kubeConfig, server));
  }
  return result;
}

/** Where the pod's service account is and how the API server is reached from inside the cluster. */
export interface InClusterSource {
  /** Cluster name. @default 'in-cluster' */
  name?: string;
  labels?: Record<string, string>;
  /** KUBERNETES_SERVICE_HOST; unset outside a pod. */
  serviceHost?: string;
  /** KUBERNETES_SERVICE_PORT. @default 443 */
  servicePort?: string;
  /** Folder holding `token`, `ca.crt` and `namespace`. @default the kubelet's mount point */
  serviceAccountDir?: string;
  /** HTTPS_PROXY/NO_PROXY, as client-go's in-cluster config uses them. */
  proxyEnv?: ProxyEnv;
}

/**
 * The service account of the pod phaselog runs in, as client-go's `rest.InClusterConfig` builds
 * it: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, the mounted CA bundle, and the
 * mounted token, re-read whenever the kubelet rotates it.
 */
export function loadInClusterCluster(source: InClusterSource = {}): ClusterLoadResult {
  const name = source.name ?? 'in-cluster';
  const host = source.serviceHost;
  if (host === undefined || host === '') {
    return {
      clusters: [],
      errors: [{ cluster: name, message: 'not running in a cluster (KUBERNETES_SERVICE_HOST is unset)' }],
    };
  }
  const dir = source.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const tokenFile = path.join(dir, 'token');
  const caFile = path.join(dir, 'ca.crt');
  for (const file of [tokenFile, caFile]) {
    try {
      readFileSync(file);
    } catch (error) {
      return {
        clusters: [],
        errors: [
          { cluster: name, message: `in-cluster service account: cannot read ${file}: ${(error as Error).message}` },
        ],
      };
    }
  }
  const server = `https://${net.isIPv6(host) ? `[${host}]` : host}:${source.servicePort ?? '443'}`;
  const kubeConfig = new KubeConfig();
  useWatchedTokenFiles(kubeConfig);
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'in-cluster', server, caFile, skipTLSVerify: false }],
    users: [{ name: 'service-account', authProvider: watchedTokenFileProvider(tokenFile) }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'service-account' }],
    currentContext: 'in-cluster',
  });
  const proxyProblem = useEnvProxy(kubeConfig, source.proxyEnv);
  if (proxyProblem !== undefined) return { clusters: [], errors: [{ cluster: name, message: proxyProblem }] };
  return { clusters: [createClusterHandle(name, { ...source.labels }, kubeConfig, server)], errors: [] };
}

/** What every `clusters:` entry shares: the pod's service-account settings and the proxy variables. */
export type SharedClusterSettings = Omit<InClusterSource, 'name' | 'labels'>;

/** Loads every `clusters:` entry; failures are collected, never thrown. */
export function loadClusters(config: ClustersConfig, inCluster: SharedClusterSettings = {}): ClusterLoadResult {
  const result: ClusterLoadResult = { clusters: [], errors: [] };
  config.forEach((entry, index) => {
    const part = loadEntry(entry, index, inCluster);
    result.clusters.push(...part.clusters);
    result.errors.push(...part.errors);
  });
  const seen = new Set<string>();
  result.clusters = result.clusters.filter((cluster) => {
    if (!seen.has(cluster.name)) return seen.add(cluster.name);
    result.errors.push({
      cluster: cluster.name,
      message: `cluster name "${cluster.name}" is used twice; the second is ignored`,
    });
    return false;
  });
  return result;
}

function loadEntry(entry: ClusterEntry, index: number, inCluster: SharedClusterSettings): ClusterLoadResult {
  if (entry.kubeconfig !== undefined) {
    const source: KubeconfigSource = { path: entry.kubeconfig, labels: entry.labels };
    if (inCluster.proxyEnv !== undefined) source.proxyEnv = inCluster.proxyEnv;
    if (entry.context !== undefined) source.contexts = [entry.context];
    else if (entry.contexts !== undefined) source.contexts = entry.contexts;
    if (entry.name !== undefined) source.name = entry.name;
    return loadKubeconfigClusters(source);
  }
  const name = entry.name ?? `clusters[${index}]`;
  if (entry.inCluster === true) return loadInClusterCluster({ ...inCluster, name, labels: entry.labels });
  return loadServerCluster({ ...entry, name, server: entry.server ?? '' }, inCluster.proxyEnv);
}

function loadServerCluster(
  entry: ClusterEntry & { name: string; server: string },
  proxyEnv: ProxyEnv | undefined,
): ClusterLoadResult {
  for (const file of [entry.tokenFile, entry.caFile]) {
    if (file !== undefined && !existsSync(file))
      return { clusters: [], errors: [{ cluster: entry.name, message: `file ${file} does not exist` }] };
  }
  const user: Record<string, unknown> = { name: 'user' };
  if (entry.token !== undefined) user.token = entry.token;
  if (entry.tokenFile !== undefined) user.authProvider = watchedTokenFileProvider(entry.tokenFile);
  // client-node 1.4 refuses plain-http servers unless skipTLSVerify is set; for http it means nothing else.
  const plainHttp = entry.server.startsWith('http:');
  const cluster: Record<string, unknown> = {
    name: 'cluster',
    server: entry.server,
    skipTLSVerify: entry.insecureSkipTLSVerify === true || plainHttp,
  };
  if (entry.caFile !== undefined) cluster.caFile = entry.caFile;
  const kubeConfig = new KubeConfig();
  useWatchedTokenFiles(kubeConfig);
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [user],
    contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
    currentContext: 'context',
  });
  const proxyProblem = useEnvProxy(kubeConfig, proxyEnv);
  if (proxyProblem !== undefined) return { clusters: [], errors: [{ cluster: entry.name, message: proxyProblem }] };
  return { clusters: [createClusterHandle(entry.name, entry.labels, kubeConfig, entry.server)], errors: [] };
}

/**
 * Gives the current cluster the proxy the environment names for it, unless its kubeconfig sets
 * `proxy-url` (which wins, as in kubectl). Returns why that proxy cannot be used, if it cannot.
 */
function useEnvProxy(kubeConfig: KubeConfig, proxyEnv: ProxyEnv | undefined): string | undefined {
  const cluster = kubeConfig.getCurrentCluster();
  if (proxyEnv === undefined || cluster === null || (cluster.proxyUrl ?? '') !== '') return undefined;
  const proxyUrl = proxyFromEnvironment(cluster.server, proxyEnv);
  if (proxyUrl === undefined) return undefined;
  const problem = proxyUrlProblem(proxyUrl);
  if (problem !== undefined) return `HTTPS_PROXY/HTTP_PROXY: ${problem}`;
  kubeConfig.clusters = kubeConfig.clusters.map((c) => (c.name === cluster.name ? { ...c, proxyUrl } : c));
  return undefined;
}

function readKubeconfig(source: KubeconfigSource): KubeConfig {
  if (source.paths !== undefined) return readKubeconfigFiles(source.paths).kubeConfig;
  if (source.path !== undefined) return readKubeconfigFiles([source.path]).kubeConfig;
  const kubeConfig = new KubeConfig();
  useWatchedTokenFiles(kubeConfig);
  kubeConfig.loadFromString(source.yaml ?? '');
  return kubeConfig;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
