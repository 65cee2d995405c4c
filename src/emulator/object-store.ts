/**
 * Storage of objects with etcd-like revisions: one global resourceVersion counter, objects indexed
 * by type then namespace, a bounded per-type event history for watches, and the watchers
 * themselves. Stored objects are never mutated after being stored: every write stores a new object,
 * so history entries and list results can share them safely.
 */
import type { ResourceType } from './catalog.ts';
import { typeKey } from './catalog.ts';
import type { KubeObject } from './types.ts';

/** The kind of change a watch event reports. */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, as kept in history and sent to watchers. */
export interface ChangeEvent {
  type: ChangeType;
  rv: number;
  object: KubeObject;
  /** The object before a MODIFIED change (watchers with selectors need it to see objects leave). */
  previous?: KubeObject;
}

/** A subscriber to one type's changes. */
export interface Watcher {
  namespace?: string;
  deliver(event: ChangeEvent): void;
}

interface Bucket {
  byNamespace: Map<string, Map<string, KubeObject>>;
  count: number;
  /** Cluster-wide sorted keys (`namespace\0name`), rebuilt after creations and removals. */
  sortedKeys: string[] | undefined;
  /** Per-namespace sorted keys, dropped for a namespace when it gains or loses an object. */
  sortedByNamespace: Map<string, string[]>;
  history: ChangeEvent[];
  /** Events with rv <= this are forgotten. */
  compactedRv: number;
  watchers: Set<Watcher>;
}

/** Reads metadata as a record. */
export function readMeta(obj: KubeObject): Record<string, unknown> {
  const m = obj.metadata;
  return typeof m === 'object' && m !== null ? m : {};
}

function nameOf(obj: KubeObject): string {
  const n = readMeta(obj)['name'];
  return typeof n === 'string' ? n : '';
}

function namespaceOf(obj: KubeObject): string {
  const n = readMeta(obj)['namespace'];
  return typeof n === 'string' ? n : '';
}

const KEY_SEP = '\u0000';

/** Global-revision object store. */
export class ObjectStore {
  private rv = 0;
  private globalCompactedRv = 0;
  private readonly buckets = new Map<string, Bucket>();
  private total = 0;

  constructor(private readonly historySize: number) {}

  /** Current global revision. */
  revision(): number {
    return this.rv;
  }

  /** Allocates the next revision. */
  nextRevision(): number {
    this.rv += 1;
    return this.rv;
  }

  /** Number of stored objects of every type. */
  size(): number {
    return this.total;
  }

  private bucket(type: ResourceType): Bucket {
    const key = typeKey(type.group, type.plural);
    let b = this.buckets.get(key);
    if (!b) {
      b = {
        byNamespace: new Map(),
        count: 0,
        sortedKeys: undefined,
        sortedByNamespace: new Map(),
        history: [],
        compactedRv: this.globalCompactedRv,
        watchers: new Set(),
      };
      this.buckets.set(key, b);
    }
    return b;
  }

  /** The stored object, or undefined. */
  get(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.bucket(type).byNamespace.get(namespace)?.get(name);
  }

  /** Stores (creates or replaces) an object whose metadata.resourceVersion is already `rv`, and notifies. */
  put(type: ResourceType, obj: KubeObject, rv: number): void {
    const b = this.bucket(type);
    const ns = namespaceOf(obj);
    const name = nameOf(obj);
    let names = b.byNamespace.get(ns);
    if (!names) {
      names = new Map();
      b.byNamespace.set(ns, names);
    }
    const previous = names.get(name);
    const existed = previous !== undefined;
    names.set(name, obj);
    if (!existed) {
      b.count++;
      this.total++;
      b.sortedKeys = undefined;
      b.sortedByNamespace.delete(ns);
    }
    this.record(b, existed ? { type: 'MODIFIED', rv, object: obj, previous } : { type: 'ADDED', rv, object: obj });
  }

  /** Removes an object; `finalObj` (with its deletion revision) is what watchers receive. */
  remove(type: ResourceType, finalObj: KubeObject, rv: number): void {
    const b = this.bucket(type);
    const ns = namespaceOf(finalObj);
    const names = b.byNamespace.get(ns);
    if (!names || !names.delete(nameOf(finalObj))) return;
    if (names.size === 0) b.byNamespace.delete(ns);
    b.count--;
    this.total--;
    b.sortedKeys = undefined;
    b.sortedByNamespace.delete(ns);
    this.record(b, { type: 'DELETED', rv, object: finalObj });
  }

  private record(b: Bucket, event: ChangeEvent): void {
    b.history.push(event);
    // Trim in chunks so a steady stream of writes does not shift the array on every event.
    if (b.history.length > this.historySize + Math.max(16, this.historySize >> 3)) {
      const drop = b.history.length - this.historySize;
      const last = b.history[drop - 1];
      if (last) b.compactedRv = Math.max(b.compactedRv, last.rv);
      b.history.splice(0, drop);
    }
    for (const w of b.watchers) {
      if (w.namespace !== undefined && w.namespace !== namespaceOf(event.object)) continue;
      w.deliver(event);
    }
  }

  /**
   * Keys (`namespace\0name`) of a namespace's objects, or of all when `namespace` is undefined,
   * in etcd key order. Cached until an object is created or removed, so paging is O(page).
   */
  sortedKeys(type: ResourceType, namespace: string | undefined): readonly string[] {
    const b = this.bucket(type);
    if (namespace !== undefined) {
      let keys = b.sortedByNamespace.get(namespace);
      if (!keys) {
        const names = b.byNamespace.get(namespace);
        keys = names ? [...names.keys()].sort().map((n) => namespace + KEY_SEP + n) : [];
        b.sortedByNamespace.set(namespace, keys);
      }
      return keys;
    }
    if (!b.sortedKeys) {
      const keys: string[] = [];
      for (const [ns, names] of b.byNamespace) for (const n of names.keys()) keys.push(ns + KEY_SEP + n);
      b.sortedKeys = keys.sort();
    }
    return b.sortedKeys;
  }

  /** The object stored under a key from {@link sortedKeys}. */
  getByKey(type: ResourceType, key: string): KubeObject | undefined {
    const i = key.indexOf(KEY_SEP);
    return this.bucket(type)
      .byNamespace.get(key.slice(0, i))
      ?.get(key.slice(i + 1));
  }

  /** Objects in a namespace (or all namespaces when undefined), sorted by namespace then name as etcd keys are. */
  listSorted(type: ResourceType, namespace: string | undefined): KubeObject[] {
    const out: KubeObject[] = [];
    for (const k of this.sortedKeys(type, namespace)) {
      const obj = this.getByKey(type, k);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Number of objects of a type in a namespace (or everywhere). */
  count(type: ResourceType, namespace?: string): number {
    const b = this.bucket(type);
    return namespace === undefined ? b.count : (b.byNamespace.get(namespace)?.size ?? 0);
  }

  /** Revision at or below which this type's history is gone. */
  compactedRevision(type: ResourceType): number {
    return this.bucket(type).compactedRv;
  }

  /** Events of a type after `rv` (oldest first). Caller checks compaction first. */
  eventsSince(type: ResourceType, rv: number): ChangeEvent[] {
    const h = this.bucket(type).history;
    let lo = 0;
    let hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((h[mid] as ChangeEvent).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return h.slice(lo);
  }

  /** Registers a watcher; returns its remover. */
  addWatcher(type: ResourceType, watcher: Watcher): () => void {
    const b = this.bucket(type);
    b.watchers.add(watcher);
    return () => b.watchers.delete(watcher);
  }

  /** Forgets all history up to now. */
  compact(): void {
    this.globalCompactedRv = this.rv;
    for (const b of this.buckets.values()) {
      b.history = [];
      b.compactedRv = this.rv;
    }
  }

  /** Number of objects of the given namespaced types in a namespace. */
  countInNamespace(namespace: string, types: readonly ResourceType[]): number {
    let n = 0;
    for (const t of types) if (t.namespaced) n += this.count(t, namespace);
    return n;
  }
}
