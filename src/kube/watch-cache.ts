/**
 * An informer-style cache of one kind (in one namespace or cluster-wide): LIST, then WATCH from
 * the list's resourceVersion with bookmarks, tracking the resourceVersion of every event; relist
 * when the server answers 410 Gone; reconnect with jittered exponential backoff after failures,
 * capped low so a cache relists soon after an API outage ends. Every
 * change is emitted at once so a snapshot pipeline can act within a second. While synced, the
 * batched reader answers this kind from the cache instead of sending a LIST.
 */
import { cacheKey, type CacheView, type ClusterClient } from './cluster-client.ts';
import { collectionPath, isKubeError, type ResolvedKind } from './discovery.ts';
import { classifyKubeError, KubeRequestError, type KubeError } from './errors.ts';
import { compactObject, readView, type CachedObject } from './compact.ts';
import { listCollection } from './list-collection.ts';
import { slimObject, type KubeObject } from './slim.ts';
import type { RedactionOptions } from '../history/redact.ts';
import type { ObjectRef } from '../inventory/types.ts';

/** A change seen by the cache. */
export interface WatchChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  ref: ObjectRef;
}

/** Events of a {@link WatchCache}. */
export interface WatchCacheEvents {
  change: (change: WatchChange) => void;
  /** The cache holds a complete, current copy (after the first list and after every relist). */
  synced: () => void;
  /** A list or watch failed; the cache keeps retrying. */
  failure: (error: KubeError) => void;
}

/** Counters for tests, logs and benchmarks. */
export interface WatchCacheStats {
  lists: number;
  relists: number;
  watches: number;
  bookmarks: number;
  events: number;
}

/** A running list+watch cache. */
export interface WatchCache extends CacheView {
  /** Lists, registers the cache with its cluster, and starts watching. Resolves when first synced or with the first error (retries continue). */
  start(): Promise<KubeError | undefined>;
  /** Stops watching and unregisters from the cluster. */
  stop(): void;
  /** Cuts a pending reconnect wait short (another cache of the cluster got through). */
  retryNow(): void;
  /** The status view of one object (see compact.ts). */
  get(namespace: string, name: string): KubeObject | undefined;
  /** Status views of every cached object. */
  list(): KubeObject[];
  readonly resourceVersion: string;
  readonly stats: WatchCacheStats;
  on<E extends keyof WatchCacheEvents>(event: E, listener: WatchCacheEvents[E]): () => void;
}

/** Options of {@link createWatchCache}. */
export interface WatchCacheOptions {
  /** Ask for BOOKMARK events, so a reconnect resumes from a recent resourceVersion. @default true */
  bookmarks?: boolean;
  /** Server-side watch timeout; the cache reconnects when it ends. @default 300 */
  timeoutSeconds?: number;
  /** First reconnect delay, doubled per failure up to `maxBackoffMs`. @default 250 */
  initialBackoffMs?: number;
  /**
   * Longest reconnect wait. Kept short: while a cache waits, deletions in the cluster go unseen,
   * and a refused connection costs the API server nothing. @default 5000
   */
  maxBackoffMs?: number;
  /** Silence after which a watch is treated as dead. @default timeoutSeconds + 30 s */
  idleTimeoutMs?: number;
  /** How long to wait for a watch's response headers. @default the transport timeout */
  connectTimeoutMs?: number;
  pageSize?: number;
  /**
   * Kinds whose whole (slimmed) object is kept, because a custom health check (CEL, Lua) may read
   * any field; other kinds keep a compact record (compact.ts). @default none
   */
  wholeObjects?: (apiVersion: string, kind: string) => boolean;
  /** How revisions are redacted; match the snapshot's options to reuse them. @default no extra drops */
  redaction?: RedactionOptions;
}

/** What a cache watches: a kind, and optionally only the objects a label selector matches. */
export interface WatchedKind {
  group: string;
  kind: string;
  /**
   * Only objects with these labels (inventory ConfigMaps): the cache is then not a complete copy of
   * the kind, so the batched reader never answers member reads from it. @default every object
   */
  labelSelector?: string;
  /** Keep the whole (slimmed) object of every object, whatever `wholeObjects` says. @default false */
  whole?: boolean;
  /**
   * Keep status views only, no revisions (see compact.ts `viewOnly`): kinds watched for resource
   * trees, not as phase members. @default false
   */
  viewOnly?: boolean;
}

/** Creates (but does not start) a watch cache for `group/kind`, in `namespace` or cluster-wide. */
export function createWatchCache(
  cluster: ClusterClient,
  kind: WatchedKind,
  namespace?: string,
  options: WatchCacheOptions = {},
): WatchCache {
  let objects: ObjectMap = new Map();
  const listeners: { [E in keyof WatchCacheEvents]: Set<WatchCacheEvents[E]> } = {
    change: new Set(),
    synced: new Set(),
    failure: new Set(),
  };
  const stats: WatchCacheStats = { lists: 0, relists: 0, watches: 0, bookmarks: 0, events: 0 };
  const key = cacheKey(kind.group, kind.kind, namespace, kind.labelSelector);
  const selector =
    kind.labelSelector !== undefined && kind.labelSelector !== '' ? { labelSelector: kind.labelSelector } : {};
  const timeoutSeconds = options.timeoutSeconds ?? 300;
  let resolved: ResolvedKind | undefined;
  let resourceVersion = '';
  let synced = false;
  let stopped = true;
  let failures = 0;
  let abortWatch: (() => void) | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retry: (() => void) | undefined;
  let firstSync: ((error?: KubeError) => void) | undefined;
  let forHealth: boolean | undefined;

  // Custom health checks read the whole object on every tick: in the clear. Inventory objects are
  // parsed once per version: packed like status views.
  const compact = (object: KubeObject): CachedObject => {
    forHealth ??= options.wholeObjects?.(String(object.apiVersion ?? ''), String(object.kind ?? '')) ?? false;
    const whole = forHealth || kind.whole === true;
    return compactObject(object, {
      whole,
      ...(whole ? { clear: forHealth } : {}),
      ...(kind.viewOnly === true ? { viewOnly: true } : {}),
      ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
    });
  };

  const emit = <E extends keyof WatchCacheEvents>(event: E, ...args: Parameters<WatchCacheEvents[E]>): void => {
    for (const listener of listeners[event]) (listener as (...a: Parameters<WatchCacheEvents[E]>) => void)(...args);
  };

  function fail(error: KubeError): void {
    synced = error.kind === 'TIMEOUT' || error.kind === 'UNREACHABLE' ? false : synced;
    emit('failure', error);
    firstSync?.(error);
    firstSync = undefined;
    failures += 1;
    const base = options.initialBackoffMs ?? 250;
    const wait = Math.min(options.maxBackoffMs ?? 5_000, base * 2 ** Math.min(failures - 1, 16));
    // Jitter spreads the reconnects of many caches after a shared outage.
    const delay = Math.max(wait * (0.8 + Math.random() * 0.4), error.retryAfterMs ?? 0);
    const again = (): void => {
      clearTimeout(retryTimer);
      retryTimer = undefined;
      retry = undefined;
      void (resourceVersion === '' || !synced ? relist() : watch());
    };
    // A server that asked for a wait (Retry-After) is not hurried by another cache's success.
    retry = error.retryAfterMs === undefined ? again : undefined;
    clearTimeout(retryTimer);
    retryTimer = setTimeout(again, delay);
  }

  async function relist(): Promise<void> {
    if (stopped) return;
    if (resolved === undefined) {
      const found = await cluster.discovery.resolve(kind.group, kind.kind);
      if (stopped) return;
      if (isKubeError(found)) return fail(found);
      resolved = found;
    }
    const fresh: ObjectMap = new Map();
    const apiVersion = resolved.group === '' ? resolved.version : `${resolved.group}/${resolved.version}`;
    const listOptions = {
      apiVersion,
      kind: resolved.kind,
      ...selector,
      ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
    };
    const outcome = await listCollection(
      cluster.transport,
      collectionPath(resolved, namespace),
      listOptions,
      (item) => {
        setObject(fresh, item, compact(slimObject(item)));
      },
      () => fresh.clear(),
    );
    if (stopped) return;
    if (!outcome.ok) return fail(outcome.error);
    if (stats.lists > 0) stats.relists += 1;
    stats.lists += 1;
    const previous = objects;
    objects = fresh;
    resourceVersion = outcome.resourceVersion;
    synced = true;
    failures = 0;
    if (stats.lists > 1) diffAndEmit(previous, fresh);
    else for (const [namespace, name] of entries(fresh)) emitChange('ADDED', namespace, name);
    emit('synced');
    firstSync?.();
    firstSync = undefined;
    watch();
  }

  function diffAndEmit(previous: ObjectMap, fresh: ObjectMap): void {
    for (const [namespace, name, obj] of entries(fresh)) {
      const old = previous.get(namespace)?.get(name);
      if (old === undefined) emitChange('ADDED', namespace, name);
      else if (old.resourceVersion !== obj.resourceVersion) emitChange('MODIFIED', namespace, name);
    }
    for (const [namespace, name] of entries(previous))
      if (fresh.get(namespace)?.has(name) !== true) emitChange('DELETED', namespace, name);
  }

  function emitChange(type: WatchChange['type'], namespace: string, name: string): void {
    stats.events += 1;
    if (listeners.change.size === 0) return;
    emit('change', {
      type,
      ref: { group: resolved?.group ?? kind.group, kind: resolved?.kind ?? kind.kind, namespace, name },
    });
  }

  function watch(): void {
    if (stopped || resolved === undefined) return;
    stats.watches += 1;
    let gone = false;
    const query = {
      watch: true,
      ...selector,
      resourceVersion,
      allowWatchBookmarks: options.bookmarks ?? true,
      timeoutSeconds,
    };
    abortWatch = cluster.transport.openStream(
      collectionPath(resolved, namespace),
      query,
      {
        onLine(line) {
          const event = parseEvent(line);
          if (event === undefined) return;
          if (event.type === 'ERROR') {
            gone = (event.object as { code?: unknown }).code === 410;
            if (!gone)
              fail(
                classifyKubeError(
                  new KubeRequestError(readMessage(event.object), {
                    statusCode: Number((event.object as { code?: unknown }).code) || 500,
                  }),
                ),
              );
            abortWatch?.();
            if (gone) void relist();
            return;
          }
          const rv = readRv(event.object);
          if (rv !== '') resourceVersion = rv;
          if (event.type === 'BOOKMARK') {
            stats.bookmarks += 1;
            return;
          }
          failures = 0;
          if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') return;
          const [namespace, name] = objectName(event.object);
          if (event.type === 'DELETED') deleteObject(objects, namespace, name);
          else setObject(objects, event.object, compact(slimObject(withKind(event.object, resolved))));
          emitChange(event.type, namespace, name);
        },
        onClose(error) {
          abortWatch = undefined;
          if (stopped) return;
          if (error === undefined) return watch();
          const classified = classifyKubeError(error);
          if (classified.statusCode === 410) return void relist();
          fail(classified);
        },
      },
      {
        idleTimeoutMs: options.idleTimeoutMs ?? (timeoutSeconds + 30) * 1000,
        ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
      },
    );
  }

  return {
    get synced() {
      return synced && !stopped;
    },
    whole: kind.whole === true,
    get resourceVersion() {
      return resourceVersion;
    },
    stats,
    list: () => [...entries(objects)].map(([, , record]) => readView(record)),
    *records() {
      for (const [namespace, name, record] of entries(objects)) yield [`${namespace}/${name}`, record];
    },
    record: (ns, name) => objects.get(ns)?.get(name),
    get(ns, name) {
      const record = objects.get(ns)?.get(name);
      return record === undefined ? undefined : readView(record);
    },
    on(event, listener) {
      (listeners[event] as Set<typeof listener>).add(listener);
      return () => (listeners[event] as Set<typeof listener>).delete(listener);
    },
    start() {
      if (!stopped) return Promise.resolve(undefined);
      stopped = false;
      cluster.caches.set(key, cacheViewOf(this));
      return new Promise((resolve) => {
        firstSync = resolve;
        void relist();
      });
    },
    retryNow() {
      if (!stopped) retry?.();
    },
    stop() {
      stopped = true;
      synced = false;
      retry = undefined;
      clearTimeout(retryTimer);
      abortWatch?.();
      abortWatch = undefined;
      if (cluster.caches.get(key) !== undefined) cluster.caches.delete(key);
      firstSync?.();
      firstSync = undefined;
    },
  };
}

function cacheViewOf(cache: WatchCache): CacheView {
  return {
    get synced() {
      return cache.synced;
    },
    whole: cache.whole,
    records: () => cache.records(),
    record: (ns, name) => cache.record(ns, name),
  };
}

interface WatchEvent {
  type: string;
  object: KubeObject;
}

function parseEvent(line: string): WatchEvent | undefined {
  try {
    const parsed = JSON.parse(line) as { type?: unknown; object?: unknown };
    if (typeof parsed.type !== 'string' || typeof parsed.object !== 'object' || parsed.object === null)
      return undefined;
    return { type: parsed.type, object: parsed.object as KubeObject };
  } catch {
    return undefined;
  }
}

function readRv(obj: KubeObject): string {
  const rv = (obj.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  return typeof rv === 'string' ? rv : '';
}

function readMessage(obj: KubeObject): string {
  return typeof obj.message === 'string' ? obj.message : 'watch error';
}

/**
 * Cached objects by namespace (`''` when cluster-scoped), then name: a tick looks every phase member
 * up by the namespace and name strings its ref already holds (their hashes cached in them), where
 * a `namespace/name` key would be a new string to build and hash per lookup, and kept per object.
 */
type ObjectMap = Map<string, Map<string, CachedObject>>;

function objectName(obj: KubeObject): [string, string] {
  const meta = (obj.metadata ?? {}) as { namespace?: unknown; name?: unknown };
  return [typeof meta.namespace === 'string' ? meta.namespace : '', typeof meta.name === 'string' ? meta.name : ''];
}

function setObject(map: ObjectMap, obj: KubeObject, record: CachedObject): void {
  const [namespace, name] = objectName(obj);
  let names = map.get(namespace);
  if (names === undefined) map.set(namespace, (names = new Map()));
  names.set(name, record);
}

function deleteObject(map: ObjectMap, namespace: string, name: string): void {
  const names = map.get(namespace);
  if (names?.delete(name) === true && names.size === 0) map.delete(namespace);
}

function* entries(map: ObjectMap): Generator<[string, string, CachedObject]> {
  for (const [namespace, names] of map) for (const [name, record] of names) yield [namespace, name, record];
}

function withKind(obj: KubeObject, resolved: ResolvedKind | undefined): KubeObject {
  if (resolved === undefined || (obj.apiVersion !== undefined && obj.kind !== undefined)) return obj;
  const apiVersion = resolved.group === '' ? resolved.version : `${resolved.group}/${resolved.version}`;
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersion, kind: obj.kind ?? resolved.kind };
}
