/**
 * Watch mode for a whole cluster: one watch cache per kind the phases use, with one change
 * stream. Starting registers the caches with the cluster so `readObjects` answers those kinds
 * from memory; stopping returns the cluster to polling.
 */
import type { GroupKind } from '../inventory/types.ts';
import type { ClusterClient } from './cluster-client.ts';
import type { KubeError } from './errors.ts';
import {
  createWatchCache,
  type WatchCache,
  type WatchCacheOptions,
  type WatchChange,
  type WatchedKind,
} from './watch-cache.ts';

/** The caches of one cluster. */
export interface WatchSet {
  /** Starts every cache; resolves when each is synced or has failed once (failed ones keep retrying). */
  start(): Promise<Map<string, KubeError | undefined>>;
  stop(): void;
  /** Called for every change in any of the kinds, with the cluster's name and the kind entry whose cache saw it. */
  onChange(listener: (change: WatchChange, cluster: string, watched: GroupKind | WatchedKind) => void): () => void;
  readonly caches: ReadonlyMap<string, WatchCache>;
}

/**
 * Creates one cluster-wide (or single-namespace) cache per distinct group/kind and label selector;
 * of two entries for the same one, the first wins.
 */
export function createWatchSet(
  cluster: ClusterClient,
  kinds: readonly (GroupKind | WatchedKind)[],
  options: WatchCacheOptions & { namespace?: string } = {},
): WatchSet {
  const caches = new Map<string, WatchCache>();
  const watchedBy = new Map<WatchCache, GroupKind | WatchedKind>();
  for (const gk of kinds) {
    const selector = 'labelSelector' in gk ? gk.labelSelector : undefined;
    const key = `${gk.group}/${gk.kind}${selector === undefined ? '' : `?${selector}`}`;
    if (caches.has(key)) continue;
    const cache = createWatchCache(cluster, gk, options.namespace, options);
    caches.set(key, cache);
    watchedBy.set(cache, gk);
  }
  // One cache that lists again shows the API is back: the others waiting out a backoff relist now,
  // so deletions during an outage are learned together, not one backoff apart.
  for (const cache of caches.values()) {
    cache.on('synced', () => {
      for (const other of caches.values()) if (other !== cache) other.retryNow();
    });
  }
  return {
    caches,
    async start() {
      const outcomes = await Promise.all([...caches].map(async ([key, cache]) => [key, await cache.start()] as const));
      return new Map(outcomes);
    },
    stop() {
      for (const cache of caches.values()) cache.stop();
    },
    onChange(listener) {
      const offs = [...caches.values()].map((cache) => {
        const watched = watchedBy.get(cache) as GroupKind | WatchedKind;
        return cache.on('change', (change) => listener(change, cluster.name, watched));
      });
      return () => offs.forEach((off) => off());
    },
  };
}
