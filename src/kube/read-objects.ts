/**
 * The batched read path: all resources of all phases of one cluster in one tick, with at most one
 * paginated LIST per kind and namespace (or one cluster-wide LIST per kind), never a GET per
 * object. Results are data: found objects, refs that do not exist, and per-kind errors naming the
 * refs they affect. Statuses are computed elsewhere (src/status).
 */
import { keyOf } from './ref-keys.ts';
import type { ObjectRef } from '../inventory/types.ts';
import { isPodAwareKind } from '../status/pod-aware.ts';
import { cacheKey, type ClusterClient } from './cluster-client.ts';
import { readView, type CachedObject } from './compact.ts';
import { collectionPath, isKubeError, type ResolvedKind } from './discovery.ts';
import { CLUSTER_LEVEL_KINDS, type KubeError } from './errors.ts';
import { listCollection, type ListOptions } from './list-collection.ts';
import { slimObject, type KubeObject } from './slim.ts';

/** A kind (in one namespace, or cluster-wide) that could not be read, with the refs it leaves unknown. */
export interface KindReadError {
  group: string;
  kind: string;
  /** Set when the failed LIST was for one namespace. */
  namespace?: string;
  error: KubeError;
  refs: ObjectRef[];
}

/** What one read of a cluster found. */
export interface ReadObjectsResult {
  /** Found objects that were listed, by {@link refKey}, slimmed. */
  objects: Map<string, KubeObject>;
  /**
   * Found objects answered from watch caches, by {@link refKey}: compact records (compact.ts),
   * parsed only by whoever needs more than what the record already says.
   */
  records: Map<string, CachedObject>;
  /** Refs whose kind was listed successfully and which do not exist: NotFound. */
  missing: ObjectRef[];
  /** Kinds that could not be read; their refs are Unknown (reason = `error.kind`). */
  errors: KindReadError[];
  /** Set when the cluster as a whole could not be read (then every ref is in `errors`). */
  clusterError?: KubeError;
  /** Pods in the namespaces of StatefulSets/ReplicaSets, when `includePods` is set. */
  pods: KubeObject[];
  /** LIST requests sent and LISTs answered from watch caches. */
  stats: { listRequests: number; cacheReads: number };
}

/** Options of {@link readObjects}. */
export interface ReadObjectsOptions extends Pick<
  ListOptions,
  'pageSize' | 'maxThrottleRetries' | 'maxRetryAfterMs' | 'timeoutMs'
> {
  /**
   * A kind whose refs span at least this many namespaces is read with one cluster-wide LIST
   * instead of one LIST per namespace. One request is cheaper than N as long as the kind's
   * objects outside those namespaces are few; 3 is a conservative middle. If the cluster-wide
   * LIST is forbidden (namespace-scoped RBAC), the reader falls back to per-namespace LISTs.
   * @default 3
   */
  clusterWideThreshold?: number;
  /** Also read pods next to StatefulSets and ReplicaSets, for kstatus' pod-aware rules. @default false */
  includePods?: boolean;
  /** LISTs in flight at once for this cluster. @default 4 */
  concurrency?: number;
  /** Read from the API server even where a synced watch cache could answer. @default false */
  fromServer?: boolean;
}

interface KindGroup {
  group: string;
  kind: string;
  refs: ObjectRef[];
}

interface ListTask {
  resolved: ResolvedKind;
  /** undefined = cluster-wide. */
  namespace?: string;
  refs: ObjectRef[];
  /** Collect every item (pods) instead of matching refs. */
  collectAll?: boolean;
  /** Refs to fall back to per-namespace LISTs for when a cluster-wide LIST is forbidden. */
  fallbackNamespaces?: string[];
}

/** Reads every ref of one cluster in as few LISTs as the heuristic allows. Never throws. */
export async function readObjects(
  cluster: ClusterClient,
  refs: readonly ObjectRef[],
  options: ReadObjectsOptions = {},
): Promise<ReadObjectsResult> {
  const result: ReadObjectsResult = {
    objects: new Map(),
    records: new Map(),
    missing: [],
    errors: [],
    pods: [],
    stats: { listRequests: 0, cacheReads: 0 },
  };
  const groups = groupByKind(refs);
  const resolutions = await Promise.all(groups.map((g) => cluster.discovery.resolve(g.group, g.kind)));
  const settled = new Set<string>();
  const tasks: ListTask[] = [];
  groups.forEach((g, index) => {
    const resolved = resolutions[index];
    if (resolved === undefined) return;
    if (isKubeError(resolved)) {
      result.errors.push({ group: g.group, kind: g.kind, error: resolved, refs: g.refs });
      g.refs.forEach((ref) => settled.add(keyOf(ref)));
      return;
    }
    tasks.push(...planTasks(resolved, g.refs, options.clusterWideThreshold ?? 3));
  });
  const clusterError = findClusterError(result.errors, groups.length);
  if (clusterError !== undefined) {
    result.clusterError = clusterError;
    return result;
  }
  if (options.includePods === true) tasks.push(...(await planPodTasks(cluster, refs, options, result)));
  await runLimited(tasks, options.concurrency ?? 4, (task) => runTask(cluster, task, options, result, settled));
  for (const g of groups) {
    for (const ref of g.refs) {
      const key = keyOf(ref);
      if (!settled.has(key) && !result.objects.has(key) && !result.records.has(key)) result.missing.push(ref);
    }
  }
  // Discovery may be cached while every LIST fails: that is still a cluster that cannot be read.
  const listFailure =
    result.objects.size === 0 && result.records.size === 0 && result.missing.length === 0
      ? findClusterError(result.errors, result.errors.length)
      : undefined;
  if (listFailure !== undefined) result.clusterError = listFailure;
  return result;
}

function groupByKind(refs: readonly ObjectRef[]): KindGroup[] {
  // By group, then kind: the ref's own strings (shared, hashes cached), no key built per ref.
  const byKind = new Map<string, Map<string, KindGroup>>();
  const groups: KindGroup[] = [];
  const seen = new Set<string>();
  for (const ref of refs) {
    const key = keyOf(ref);
    if (seen.has(key)) continue;
    seen.add(key);
    let kinds = byKind.get(ref.group);
    if (kinds === undefined) byKind.set(ref.group, (kinds = new Map()));
    let group = kinds.get(ref.kind);
    if (group === undefined) {
      kinds.set(ref.kind, (group = { group: ref.group, kind: ref.kind, refs: [] }));
      groups.push(group);
    }
    group.refs.push(ref);
  }
  return groups;
}

/** A cluster-level failure is one where every kind failed for a reason that is about the cluster. */
function findClusterError(errors: KindReadError[], kinds: number): KubeError | undefined {
  if (kinds === 0 || errors.length < kinds) return undefined;
  const clusterWide = errors.filter((e) => CLUSTER_LEVEL_KINDS.includes(e.error.kind));
  return clusterWide.length === errors.length ? clusterWide[0]?.error : undefined;
}

function planTasks(resolved: ResolvedKind, refs: ObjectRef[], threshold: number): ListTask[] {
  if (!resolved.namespaced) return [{ resolved, refs }];
  const byNamespace = new Map<string, ObjectRef[]>();
  for (const ref of refs) {
    // A namespaced object recorded without a namespace cannot exist as written: NotFound.
    if (ref.namespace === '') continue;
    const list = byNamespace.get(ref.namespace) ?? [];
    list.push(ref);
    byNamespace.set(ref.namespace, list);
  }
  if (byNamespace.size === 0) return [];
  if (byNamespace.size >= threshold) {
    return [{ resolved, refs: refs.filter((r) => r.namespace !== ''), fallbackNamespaces: [...byNamespace.keys()] }];
  }
  return [...byNamespace].map(([namespace, nsRefs]) => ({ resolved, namespace, refs: nsRefs }));
}

async function planPodTasks(
  cluster: ClusterClient,
  refs: readonly ObjectRef[],
  options: ReadObjectsOptions,
  result: ReadObjectsResult,
): Promise<ListTask[]> {
  const owners = refs.filter((r) => isPodAwareKind(r.group, r.kind) && r.namespace !== '');
  if (owners.length === 0) return [];
  const resolved = await cluster.discovery.resolve('', 'Pod');
  if (isKubeError(resolved)) {
    result.errors.push({ group: '', kind: 'Pod', error: resolved, refs: owners });
    return [];
  }
  const namespaces = [...new Set(owners.map((r) => r.namespace))];
  if (namespaces.length >= (options.clusterWideThreshold ?? 3))
    return [{ resolved, refs: owners, collectAll: true, fallbackNamespaces: namespaces }];
  return namespaces.map((namespace) => ({
    resolved,
    namespace,
    refs: owners.filter((r) => r.namespace === namespace),
    collectAll: true,
  }));
}

async function runTask(
  cluster: ClusterClient,
  task: ListTask,
  options: ReadObjectsOptions,
  result: ReadObjectsResult,
  settled: Set<string>,
): Promise<void> {
  const { resolved } = task;
  const podNamespaces = new Set(task.refs.map((r) => r.namespace));
  const cache =
    options.fromServer === true
      ? undefined
      : (cluster.caches.get(cacheKey(resolved.group, resolved.kind, task.namespace)) ??
        cluster.caches.get(cacheKey(resolved.group, resolved.kind)));
  if (cache?.synced === true) {
    result.stats.cacheReads += 1;
    if (task.collectAll === true) {
      for (const [key, record] of cache.records())
        if (podNamespaces.has(key.slice(0, key.indexOf('/')))) result.pods.push(readView(record));
      return;
    }
    // One lookup per wanted ref; records are not parsed here (see ref-outcome.ts).
    for (const ref of task.refs) {
      const record = cache.record(resolved.namespaced ? ref.namespace : '', ref.name);
      if (record !== undefined) result.records.set(keyOf(ref), record);
    }
    return;
  }
  const wanted = new Map<string, ObjectRef>();
  for (const ref of task.refs) wanted.set(resolved.namespaced ? `${ref.namespace}/${ref.name}` : ref.name, ref);
  const keep = (item: KubeObject): void => {
    const meta = (item.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    if (typeof meta.name !== 'string') return;
    const ns = typeof meta.namespace === 'string' ? meta.namespace : '';
    if (task.collectAll === true) {
      if (podNamespaces.has(ns)) result.pods.push(slimObject(item));
      return;
    }
    const ref = wanted.get(resolved.namespaced ? `${ns}/${meta.name}` : meta.name);
    if (ref !== undefined) result.objects.set(keyOf(ref), slimObject(item));
  };
  const path = collectionPath(resolved, task.namespace);
  const apiVersion = resolved.group === '' ? resolved.version : `${resolved.group}/${resolved.version}`;
  const listOptions: ListOptions = { ...pickListOptions(options), apiVersion, kind: resolved.kind };
  const outcome = await listCollection(cluster.transport, path, listOptions, keep, () => {
    for (const ref of task.refs) result.objects.delete(keyOf(ref));
    if (task.collectAll === true)
      result.pods = result.pods.filter((p) => (p.metadata as { namespace?: string }).namespace !== task.namespace);
  });
  result.stats.listRequests += outcome.requests;
  if (outcome.ok) return;
  if (outcome.error.kind === 'FORBIDDEN' && task.namespace === undefined && task.fallbackNamespaces !== undefined) {
    const perNamespace = task.fallbackNamespaces.map((namespace) => ({
      ...task,
      namespace,
      refs: task.refs.filter((r) => r.namespace === namespace),
      fallbackNamespaces: undefined,
    }));
    for (const sub of perNamespace) await runTask(cluster, sub, options, result, settled);
    return;
  }
  const failure: KindReadError = { group: resolved.group, kind: resolved.kind, error: outcome.error, refs: task.refs };
  if (task.namespace !== undefined) failure.namespace = task.namespace;
  result.errors.push(failure);
  if (task.collectAll !== true) task.refs.forEach((ref) => settled.add(keyOf(ref)));
}

function pickListOptions(options: ReadObjectsOptions): ListOptions {
  const out: ListOptions = {};
  if (options.pageSize !== undefined) out.pageSize = options.pageSize;
  if (options.maxThrottleRetries !== undefined) out.maxThrottleRetries = options.maxThrottleRetries;
  if (options.maxRetryAfterMs !== undefined) out.maxRetryAfterMs = options.maxRetryAfterMs;
  if (options.timeoutMs !== undefined) out.timeoutMs = options.timeoutMs;
  return out;
}

/** Runs `work` over `items` with at most `limit` in flight. */
export async function runLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(Math.max(1, limit), items.length) }, async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      if (item !== undefined) await work(item);
    }
  });
  await Promise.all(workers);
}
