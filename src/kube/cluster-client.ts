/**
 * Everything phaselog needs to read one cluster: its transport, its discovery cache and any watch
 * caches. One per cluster, created by a composition root and closed on shutdown.
 */
import type { ClusterHandle } from './clusters.ts';
import { createDiscovery, type Discovery, type DiscoveryOptions } from './discovery.ts';
import { createKubeTransport, type KubeTransport, type TransportOptions } from './transport.ts';
import type { CachedObject } from './compact.ts';

/** The part of a watch cache the batched reader uses (see watch-cache.ts). */
export interface CacheView {
  readonly synced: boolean;
  /**
   * The records' views are whole (slimmed) objects, not status views: what inventory parsing and
   * custom health checks need (compact.ts).
   */
  readonly whole: boolean;
  /** Every cached object as `[namespace/name, record]` (`/name` when cluster-scoped). */
  records(): Iterable<[string, CachedObject]>;
  /** One cached object (`namespace` is `''` when cluster-scoped). */
  record(namespace: string, name: string): CachedObject | undefined;
}

/** A cluster ready to be read. */
export interface ClusterClient {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly server: string;
  readonly transport: KubeTransport;
  readonly discovery: Discovery;
  /** Watch caches by {@link cacheKey}; the batched reader uses a synced one instead of a LIST. */
  readonly caches: Map<string, CacheView>;
  close(): void;
}

/** Options of {@link createClusterClient}. */
export interface ClusterClientOptions {
  transport?: TransportOptions;
  discovery?: DiscoveryOptions;
}

/** Wraps a loaded cluster with a transport and a discovery cache. */
export function createClusterClient(handle: ClusterHandle, options: ClusterClientOptions = {}): ClusterClient {
  const transport = createKubeTransport(handle.kubeConfig, options.transport);
  const discovery = createDiscovery(transport, options.discovery);
  return {
    name: handle.name,
    labels: handle.labels,
    server: handle.server,
    transport,
    discovery,
    caches: new Map(),
    close: () => transport.close(),
  };
}

/**
 * Key of a watch cache: group, kind and namespace (`*` for all namespaces), and the label selector
 * of a cache that holds only the matching objects (such a cache never answers reads of members).
 */
export function cacheKey(group: string, kind: string, namespace?: string, labelSelector?: string): string {
  const key = `${group}/${kind}/${namespace === undefined || namespace === '' ? '*' : namespace}`;
  return labelSelector === undefined || labelSelector === '' ? key : `${key}?${labelSelector}`;
}
