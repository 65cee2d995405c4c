/** Cluster access: loading clusters, discovery, batched reads, watch caches and phase discovery. */
export { clusterEntrySchema, clustersConfigSchema } from './config.ts';
export type { ClusterEntry, ClustersConfig } from './config.ts';
export {
  createClusterHandle,
  loadClusters,
  loadInClusterCluster,
  loadKubeconfigClusters,
  SERVICE_ACCOUNT_DIR,
} from './clusters.ts';
export type {
  ClusterHandle,
  ClusterLoadError,
  ClusterLoadResult,
  InClusterSource,
  KubeconfigSource,
} from './clusters.ts';
export { KubeconfigError, readKubeconfigFiles, splitKubeconfigPaths } from './kubeconfig-files.ts';
export type { MergedKubeconfig } from './kubeconfig-files.ts';
export { cacheKey, createClusterClient } from './cluster-client.ts';
export type { CacheView, ClusterClient, ClusterClientOptions } from './cluster-client.ts';
export {
  classifyKubeError,
  isRetryable,
  parseRetryAfter,
  CLUSTER_LEVEL_KINDS,
  RETRYABLE_KINDS,
  KubeRequestError,
} from './errors.ts';
export type { KubeError, KubeErrorKind } from './errors.ts';
export { collectionPath, createDiscovery, isKubeError } from './discovery.ts';
export type { Discovery, DiscoveryOptions, ResolvedKind } from './discovery.ts';
export { readObjects } from './read-objects.ts';
export type { KindReadError, ReadObjectsOptions, ReadObjectsResult } from './read-objects.ts';
export { indexOutcomes } from './ref-outcome.ts';
export type { RefOutcome } from './ref-outcome.ts';
export { readClusters } from './read-clusters.ts';
export type { ClusterReadRequest } from './read-clusters.ts';
export { createWatchCache } from './watch-cache.ts';
export type { WatchCache, WatchCacheEvents, WatchCacheOptions, WatchCacheStats, WatchChange } from './watch-cache.ts';
export { createWatchSet } from './watch-set.ts';
export type { WatchSet } from './watch-set.ts';
export { discoverPhases } from './discover-phases.ts';
export type {
  DiscoveredPhase,
  DiscoverPhasesOptions,
  DiscoverPhasesResult,
  InvalidInventory,
  PhaseSourceToggles,
} from './discover-phases.ts';
export { slimObject } from './slim.ts';
export type { KubeObject } from './slim.ts';
export { createKubeTransport } from './transport.ts';
export type { KubeTransport, TransportOptions } from './transport.ts';
