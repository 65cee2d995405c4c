/**
 * Live snapshots: watch caches over every kind a cluster's phases use (and the inventory kinds),
 * and a debounced snapshot job on any change, so a change is recorded and published about
 * `debounceMs` after it happens instead of at the next scheduled tick (a steady stream of changes
 * snapshots at least every `maxWaitMs`). While a cache is synced, snapshots read that kind from
 * memory instead of listing it.
 *
 * The job names the objects the burst changed (by identity), and the snapshot observes and records
 * only the phases they affect, so one change in a large cluster costs about one phase, not the
 * cluster. A burst of more than {@link MAX_CHANGED_OBJECTS} objects (the first list, a relist)
 * snapshots the whole cluster.
 *
 * A worker watches only the clusters it owns (src/queue/ownership.ts): clusters are added as they
 * are acquired and removed, their watches stopped, as they are given up. Should two processes ever
 * watch one cluster (a handover), the job id (the cluster, the debounce slot the burst ended in and
 * a digest of the changes) still makes processes that saw the same changes queue one job.
 */
import type { Logger } from 'pino';
import type { RedactionOptions } from '../history/redact.ts';
import type { ChangedObjects } from '../inventory/affected-phases.ts';
import { refKey } from '../inventory/ref-key.ts';
import type { GroupKind, ObjectRef } from '../inventory/types.ts';
import type { OwnerKindSpec } from '../inventory/owner-phase.ts';
import { MAX_CHANGED_OBJECTS } from '../queue/snapshot-jobs.ts';
import type { ClusterClient } from '../kube/cluster-client.ts';
import { discoverPhases, INVENTORY_WATCHES } from '../kube/discover-phases.ts';
import type { WatchCache, WatchedKind } from '../kube/watch-cache.ts';
import { createWatchSet, type WatchSet } from '../kube/watch-set.ts';
import {
  buildChildTree,
  CHILD_KINDS,
  indexOwners,
  OWNER_KINDS,
  type ChildTree,
  type TreeLimits,
} from '../status/children.ts';

/** Options of {@link startLiveSnapshots}. */
export interface LiveSnapshotOptions {
  /**
   * A snapshot is queued once no change has come for this long; changes within it become one
   * snapshot. @default 25
   */
  debounceMs?: number;
  /** Longest wait from the first change of a burst, so a steady stream still snapshots. @default 250 */
  maxWaitMs?: number;
  /** How often the watched kinds are re-derived from the phases. @default 60000 */
  resyncKindsMs?: number;
  /** Kinds whose whole objects the caches keep (those a custom health check covers). @default none */
  wholeObjects?: (apiVersion: string, kind: string) => boolean;
  /** The snapshots' redaction, so revisions computed by the caches are reused as they are. */
  redaction?: RedactionOptions;
  /** Longest wait between a failed watch's reconnects (`snapshot.watchBackoffMax`). @default 5000 */
  watchBackoffMaxMs?: number;
  /** Owner kinds (`phases.owners`): their kinds and owned kinds are watched, so a new Job snapshots its phase. @default none */
  owners?: readonly OwnerKindSpec[];
  /**
   * Resource trees: when set, ReplicaSets and Pods are watched too (in the namespaces of phase
   * members that own objects; their changes rebuild trees and never queue snapshots), and each
   * owning member's tree is handed to `publish` after changes (at most once per `minIntervalMs`)
   * and every `intervalMs`. @default off
   */
  trees?: LiveTreeOptions;
}

/**
 * Beyond this many namespaces with owning members, the child kinds are watched cluster-wide: one
 * watch per kind instead of one per namespace.
 */
const MAX_TREE_NAMESPACES = 10;

/** Options of the live snapshots' resource trees. */
export interface LiveTreeOptions {
  publish(cluster: string, trees: ReadonlyMap<string, ChildTree>): Promise<void>;
  /** Called when this process stops building `cluster`'s trees (see TreePublisher.forget). */
  forget?(cluster: string): void;
  /** Republish every tree this often, so its TTL does not run out. @default 10000 */
  intervalMs?: number;
  /** Least time between two builds of a cluster's trees (a build reads every cached Pod). @default 1000 */
  minIntervalMs?: number;
  limits?: TreeLimits;
}

/** A cluster's watch counts since the start (they only grow, so they read as counters). */
export interface WatchCounts {
  cluster: string;
  events: number;
  relists: number;
}

/** Running watches. */
export interface LiveSnapshots {
  /** Watch events and relists per cluster so far (of the clusters watched now). */
  counts(): WatchCounts[];
  close(): void;
}

/** Watches that clusters join and leave as the worker acquires and gives them up. */
export interface LiveClusters extends LiveSnapshots {
  /** Starts watching a cluster (resolves once its first watches synced or failed); a second call is a no-op. */
  add(client: ClusterClient): Promise<void>;
  /** Stops watching a cluster: its watches are closed and no snapshot is queued for it any more. */
  remove(cluster: string): void;
  /** Names of the clusters watched now. */
  clusters(): string[];
}

/**
 * Queues a live snapshot of `cluster` for `tickAt`, of the phases `changed` affects (the whole
 * cluster when `changed` is undefined).
 */
export type EnqueueLiveSnapshot = (
  cluster: string,
  tickAt: number,
  changed: ChangedObjects | undefined,
) => Promise<unknown>;

/** Watches every cluster and calls `enqueue` once per debounce window with changes. */
export async function startLiveSnapshots(
  clients: Iterable<ClusterClient>,
  enqueue: EnqueueLiveSnapshot,
  log: Logger,
  options: LiveSnapshotOptions = {},
): Promise<LiveClusters> {
  const live = createLiveClusters(enqueue, log, options);
  await Promise.all([...clients].map((client) => live.add(client)));
  return live;
}

/** An empty set of watched clusters; see {@link LiveClusters}. */
export function createLiveClusters(
  enqueue: EnqueueLiveSnapshot,
  log: Logger,
  options: LiveSnapshotOptions = {},
): LiveClusters {
  const watched = new Map<string, Promise<LiveSnapshots>>();
  // The started ones, for the synchronous counts.
  const running = new Map<string, LiveSnapshots>();
  let closed = false;
  return {
    add(client) {
      if (closed || watched.has(client.name))
        return watched.get(client.name)?.then(() => undefined) ?? Promise.resolve();
      const started = watchCluster(client, enqueue, log.child({ cluster: client.name }), options);
      watched.set(client.name, started);
      void started.then(
        (w) => {
          if (watched.get(client.name) === started) running.set(client.name, w);
        },
        () => {},
      );
      return started.then(
        () => undefined,
        (error: unknown) => {
          watched.delete(client.name);
          throw error;
        },
      );
    },
    remove(cluster) {
      const entry = watched.get(cluster);
      watched.delete(cluster);
      running.delete(cluster);
      void entry?.then(
        (w) => w.close(),
        () => {},
      );
    },
    clusters: () => [...watched.keys()].sort(),
    counts: () => [...running.values()].flatMap((w) => w.counts()),
    close() {
      closed = true;
      for (const entry of watched.values())
        void entry.then(
          (w) => w.close(),
          () => {},
        );
      watched.clear();
      running.clear();
    },
  };
}

async function watchCluster(
  client: ClusterClient,
  enqueue: EnqueueLiveSnapshot,
  log: Logger,
  options: LiveSnapshotOptions,
): Promise<LiveSnapshots> {
  const debounceMs = Math.max(1, options.debounceMs ?? 25);
  const maxWaitMs = Math.max(debounceMs, options.maxWaitMs ?? 250);
  const resyncMs = options.resyncKindsMs ?? 60_000;
  let set: WatchSet | undefined;
  let kindsKey = '';
  let timer: NodeJS.Timeout | undefined;
  let burstStart = 0;
  let closed = false;
  let burst = createBurst();
  // Members that own objects (Deployments, StatefulSets, ...), by ref key: the roots of the trees.
  let owners = new Map<string, ObjectRef>();
  // Caches of the child kinds watched for trees only, one set per owners' namespace (or one
  // cluster-wide set beyond MAX_TREE_NAMESPACES); their changes rebuild trees, never snapshot.
  let treeSets: WatchSet[] = [];
  let treeKey = '';
  const childCaches = (): (WatchCache | undefined)[] =>
    CHILD_KINDS.flatMap((k) => {
      const member = set?.caches.get(`${k.group}/${k.kind}`);
      return member !== undefined
        ? [member]
        : treeSets.length === 0
          ? [undefined]
          : treeSets.map((s) => s.caches.get(`${k.group}/${k.kind}`));
    });
  const trees =
    options.trees !== undefined
      ? createTreeTimer(options.trees, childCaches, () => owners, client.name, log)
      : undefined;
  // Counts of the watch sets replaced when the watched kinds changed, so the totals never go down.
  const retired = { events: 0, relists: 0 };
  const counts = (): WatchCounts => {
    let { events, relists } = retired;
    for (const cache of set?.caches.values() ?? []) {
      events += cache.stats.events;
      relists += cache.stats.relists;
    }
    return { cluster: client.name, events, relists };
  };
  const fire = (): void => {
    timer = undefined;
    // The slot the burst ended in names the job, so processes that saw the same changes queue one job.
    const tickAt = Math.ceil(Date.now() / debounceMs) * debounceMs;
    const changed = burst.changed();
    burst = createBurst();
    trees?.changed();
    enqueue(client.name, tickAt, changed).catch((error: unknown) =>
      log.error({ err: error }, 'queueing a live snapshot failed'),
    );
  };
  const onChange = (ref: ObjectRef, inventory: boolean): void => {
    if (closed) return;
    burst.add(ref, inventory);
    const now = Date.now();
    if (timer === undefined) burstStart = now;
    else clearTimeout(timer);
    timer = setTimeout(fire, Math.min(debounceMs, burstStart + maxWaitMs - now));
  };
  const sync = async (): Promise<void> => {
    const discovered = await discoverPhases(client);
    // Inventory kinds are watched whole (so discovery reads them from memory), inventory ConfigMaps
    // by their label; a member kind that is also an inventory kind uses the whole-object cache.
    const kinds = new Map<string, GroupKind | WatchedKind>(
      INVENTORY_WATCHES.map((k) => [
        `${k.group}/${k.kind}${k.labelSelector === undefined ? '' : `?${k.labelSelector}`}`,
        k,
      ]),
    );
    for (const { phase } of discovered.phases)
      for (const ref of phase.entries)
        if (!kinds.has(`${ref.group}/${ref.kind}`))
          kinds.set(`${ref.group}/${ref.kind}`, { group: ref.group, kind: ref.kind });
    for (const owner of options.owners ?? [])
      for (const gk of [owner.kind, ...owner.ownedKinds])
        if (!kinds.has(`${gk.group}/${gk.kind}`)) kinds.set(`${gk.group}/${gk.kind}`, gk);
    const nextOwners = new Map<string, ObjectRef>();
    if (options.trees !== undefined) {
      for (const { phase } of discovered.phases)
        for (const ref of phase.entries)
          if (OWNER_KINDS.has(`${ref.group}/${ref.kind}`)) nextOwners.set(refKey(ref), ref);
    }
    owners = nextOwners;
    await syncTreeWatches(kinds);
    const key = [...kinds.keys()].sort().join(',');
    if (key === kindsKey || closed) return;
    kindsKey = key;
    const before = counts();
    retired.events = before.events;
    retired.relists = before.relists;
    set?.stop();
    set = createWatchSet(client, [...kinds.values()], {
      ...(options.wholeObjects !== undefined ? { wholeObjects: options.wholeObjects } : {}),
      ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
      ...(options.watchBackoffMaxMs !== undefined ? { maxBackoffMs: options.watchBackoffMaxMs } : {}),
    });
    set.onChange((change, _cluster, watched) =>
      onChange(change.ref, INVENTORY_WATCHES.includes(watched as WatchedKind)),
    );
    const outcomes = await set.start();
    for (const [kind, error] of outcomes)
      if (error !== undefined) log.warn({ kind, error }, 'watch not synced; that kind is listed on each snapshot');
    trees?.changed();
  };
  // Child kinds that are not phase members are watched for trees only: views without revisions
  // (nothing records them), in the namespaces of the owning members.
  const syncTreeWatches = async (memberKinds: ReadonlyMap<string, unknown>): Promise<void> => {
    const kindsWanted = owners.size === 0 ? [] : CHILD_KINDS.filter((k) => !memberKinds.has(`${k.group}/${k.kind}`));
    const namespaces = [...new Set([...owners.values()].map((r) => r.namespace))].sort();
    const scopes =
      kindsWanted.length === 0
        ? []
        : namespaces.length > MAX_TREE_NAMESPACES || namespaces.includes('')
          ? ['*']
          : namespaces;
    const key = `${kindsWanted.map((k) => `${k.group}/${k.kind}`).join(',')}@${scopes.join(',')}`;
    if (key === treeKey || closed) return;
    treeKey = key;
    for (const old of treeSets) old.stop();
    treeSets = scopes.map((ns) =>
      createWatchSet(
        client,
        kindsWanted.map((k) => ({ group: k.group, kind: k.kind, viewOnly: true })),
        {
          ...(ns === '*' ? {} : { namespace: ns }),
          ...(options.watchBackoffMaxMs !== undefined ? { maxBackoffMs: options.watchBackoffMaxMs } : {}),
        },
      ),
    );
    for (const treeSet of treeSets) treeSet.onChange(() => trees?.changed());
    const outcomes = await Promise.all(treeSets.map((s) => s.start()));
    for (const [kind, error] of outcomes.flatMap((o) => [...o]))
      if (error !== undefined) log.warn({ kind, error }, 'tree watch not synced; trees wait for it');
    trees?.changed();
  };
  await sync();
  const resync = setInterval(
    () => void sync().catch((error: unknown) => log.error({ err: error }, 'resyncing watched kinds failed')),
    resyncMs,
  );
  resync.unref();
  return {
    counts: () => [counts()],
    close() {
      closed = true;
      clearInterval(resync);
      if (timer !== undefined) clearTimeout(timer);
      trees?.close();
      for (const treeSet of treeSets) treeSet.stop();
      set?.stop();
    },
  };
}

/**
 * Builds and publishes a cluster's trees from its caches: soon after changes (throttled, since a
 * build reads every cached ReplicaSet and Pod) and on an interval (renewing the published TTLs).
 */
function createTreeTimer(
  options: LiveTreeOptions,
  childCaches: () => (WatchCache | undefined)[],
  currentOwners: () => ReadonlyMap<string, ObjectRef>,
  cluster: string,
  log: Logger,
): { changed(): void; close(): void } {
  const minIntervalMs = options.minIntervalMs ?? 1000;
  let lastBuild = 0;
  let pending: NodeJS.Timeout | undefined;
  let closed = false;
  let running = false;
  const build = (): void => {
    pending = undefined;
    if (closed || running) return;
    const owners = currentOwners();
    lastBuild = Date.now();
    const objects: Record<string, unknown>[] = [];
    for (const cache of owners.size === 0 ? [] : childCaches()) {
      // A cache that is not synced would publish a partial tree: publish nothing, the last one stays until its TTL.
      if (cache === undefined || cache.resourceVersion === '') return;
      objects.push(...cache.list());
    }
    const index = indexOwners(objects);
    const trees = new Map<string, ChildTree>();
    for (const [key, ref] of owners) trees.set(key, buildChildTree(ref, index, lastBuild, options.limits));
    running = true;
    options
      .publish(cluster, trees)
      .catch((error: unknown) =>
        log.warn({ err: error }, 'publishing resource trees failed; retried at the next change or interval'),
      )
      .finally(() => {
        running = false;
      });
  };
  const interval = setInterval(build, options.intervalMs ?? 10_000);
  interval.unref();
  return {
    changed() {
      if (closed || pending !== undefined) return;
      pending = setTimeout(build, Math.max(0, lastBuild + minIntervalMs - Date.now()));
      pending.unref();
    },
    close() {
      closed = true;
      clearInterval(interval);
      if (pending !== undefined) clearTimeout(pending);
      options.forget?.(cluster);
    },
  };
}

/** The objects one burst of changes touched, up to {@link MAX_CHANGED_OBJECTS} of each sort. */
function createBurst(): { add(ref: ObjectRef, inventory: boolean): void; changed(): ChangedObjects | undefined } {
  const objects = new Map<string, ObjectRef>();
  const inventories = new Map<string, ObjectRef>();
  let overflow = false;
  return {
    add(ref, inventory) {
      if (overflow) return;
      const into = inventory ? inventories : objects;
      into.set(refKey(ref), ref);
      overflow = into.size > MAX_CHANGED_OBJECTS;
    },
    // Too many to name (a first list, a relist): the whole cluster.
    changed: () => (overflow ? undefined : { objects: [...objects.values()], inventories: [...inventories.values()] }),
  };
}
