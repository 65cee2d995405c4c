/**
 * Measures resident memory in a fresh process (run with --expose-gc by bench/worker-rss.ts):
 *
 *   node --import tsx --expose-gc bench/worker-rss-probe.ts watch '<kubeconfig yaml>'
 *   node --import tsx --expose-gc bench/worker-rss-probe.ts map <count>
 *   node --import tsx --expose-gc bench/worker-rss-probe.ts worker '<kubeconfig yaml>' <database url>
 *
 * `watch`: loads phaselog's kube layer, then starts one watch cache per kind of the typical mix
 * (Deployment, Pod, Service, ConfigMap) cluster-wide, as watch mode does, and waits until synced.
 * `worker`: what a watch-mode worker holds once it has recorded the cluster: the watch caches of
 * the phases' kinds and inventories (as src/snapshot/live.ts starts them), with the status
 * memos on their records, and the cluster state the history store keeps between snapshots, after
 * two snapshots into the (migrated, empty) database: one storing every phase, one recording a
 * change. Reported as `heapAfter`, with the caches as synced, before any snapshot (records still
 * holding their bodies) as `heapCaches`. Objects are counted once, whichever caches hold them.
 * `map`: JSON.parse of `count` typical objects kept in a Map (the stack notes' reference figure).
 * Either way it reports RSS and heap before and after, each after two full garbage collections.
 * "Before" follows a warm-up that does the same work once and drops it (a watch set synced and
 * stopped; the objects parsed and dropped): V8 grows its young generation and compiles code on the
 * first large parse, tens of MB that every worker pays once and that are not held by the caches.
 * `rssCold` is the RSS before the warm-up, for the figure without it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTypicalObject, TYPICAL_KINDS } from './lib/k8s-objects.ts';

/** What the probe reports (with `ready: true`, read by startReadyChild). */
export interface ProbeResult {
  ready: true;
  url: string;
  objects: number;
  /** RSS of the fresh process, before the warm-up. */
  rssCold: number;
  rssBefore: number;
  rssAfter: number;
  heapBefore: number;
  heapAfter: number;
  /** V8 heap committed (heapTotal) and memory outside it (external, array buffers), before and after. */
  heapTotalBefore?: number;
  heapTotalAfter?: number;
  externalBefore?: number;
  externalAfter?: number;
  /** `worker`: the heap once the caches synced, before the snapshot. */
  heapCaches?: number;
  /** `worker`: the heap with the snapshot's kept cluster state dropped (caches and memos only). */
  heapWithoutKeptState?: number;
  error?: string;
}

async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Several rounds: V8 and the C heap hand freed pages back to the system over a few hundred ms.
  for (let i = 0; i < 6; i++) {
    gc?.();
    await sleep(100);
  }
  return process.memoryUsage();
}

/**
 * Objects watched, each counted once: an inventory ConfigMap is in the labelled inventory cache and
 * in the ConfigMap cache of phase members, and is one watched resource.
 */
function distinctObjects(caches: ReadonlyMap<string, { records(): Iterable<[string, unknown]> }>): number {
  const seen = new Set<string>();
  for (const [key, cache] of caches) {
    const kind = key.split('?')[0] ?? key;
    for (const [name] of cache.records()) seen.add(`${kind} ${name}`);
  }
  return seen.size;
}

async function probeWatch(kubeconfig: string): Promise<Omit<ProbeResult, 'ready' | 'url'>> {
  const { loadKubeconfigClusters } = await import('../src/kube/clusters.ts');
  const { createClusterClient } = await import('../src/kube/cluster-client.ts');
  const { createWatchSet } = await import('../src/kube/watch-set.ts');
  const handle = loadKubeconfigClusters({ yaml: kubeconfig, name: 'rss' }).clusters[0];
  if (handle === undefined) throw new Error('kubeconfig did not load');
  const client = createClusterClient(handle, { transport: { timeoutMs: 120_000 } });
  const cold = await settle();
  const warm = createWatchSet(client, TYPICAL_KINDS, { pageSize: 500 });
  await warm.start();
  warm.stop();
  const before = await settle();
  const set = createWatchSet(client, TYPICAL_KINDS, { pageSize: 500 });
  const outcomes = await set.start();
  const errors = [...outcomes].filter(([, e]) => e !== undefined).map(([k, e]) => `${k}: ${e?.message ?? ''}`);
  const objects = distinctObjects(set.caches);
  const after = await settle();
  const result = {
    objects,
    rssCold: cold.rss,
    rssBefore: before.rss,
    rssAfter: after.rss,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    heapTotalBefore: before.heapTotal,
    heapTotalAfter: after.heapTotal,
    externalBefore: before.external,
    externalAfter: after.external,
    ...(errors.length > 0 ? { error: errors.join('; ') } : {}),
  };
  set.stop();
  client.close();
  return result;
}

async function probeMap(count: number): Promise<Omit<ProbeResult, 'ready' | 'url'>> {
  const cold = await settle();
  let warm: unknown[] | undefined = [];
  for (let i = 0; i < count; i++) warm.push(JSON.parse(JSON.stringify(buildTypicalObject(i))));
  warm = undefined;
  const before = await settle();
  const map = new Map<number, unknown>();
  for (let i = 0; i < count; i++) map.set(i, JSON.parse(JSON.stringify(buildTypicalObject(i))));
  const after = await settle();
  return {
    objects: map.size,
    rssCold: cold.rss,
    rssBefore: before.rss,
    rssAfter: after.rss,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
  };
}

async function probeWorker(kubeconfig: string, databaseUrl: string): Promise<Omit<ProbeResult, 'ready' | 'url'>> {
  const { loadKubeconfigClusters } = await import('../src/kube/clusters.ts');
  const { createClusterClient } = await import('../src/kube/cluster-client.ts');
  const { createWatchSet } = await import('../src/kube/watch-set.ts');
  const { discoverPhases, INVENTORY_WATCHES } = await import('../src/kube/discover-phases.ts');
  const { observeWithSources } = await import('../src/snapshot/observe.ts');
  const { releaseStoredBodies } = await import('../src/snapshot/revision-bodies.ts');
  const { ObservationMemos } = await import('../src/snapshot/memos.ts');
  const { createRecorder } = await import('../src/snapshot/record.ts');
  const { createSnapshotStore } = await import('../src/store/snapshot-store.ts');
  const { createDb } = await import('../src/store/prisma.ts');
  const db = createDb(databaseUrl, { poolSize: 2 });
  // One cycle as a worker runs it, under its own cluster name (so the second one writes everything).
  const cycle = async (name: string) => {
    const handle = loadKubeconfigClusters({ yaml: kubeconfig, name }).clusters[0];
    if (handle === undefined) throw new Error('kubeconfig did not load');
    const client = createClusterClient(handle, { transport: { timeoutMs: 120_000 } });
    const discovered = await discoverPhases(client);
    const kinds = new Map(
      INVENTORY_WATCHES.map((k) => [
        `${k.group}/${k.kind}?${k.labelSelector ?? ''}`,
        k as { group: string; kind: string },
      ]),
    );
    for (const { phase } of discovered.phases)
      for (const ref of phase.entries) kinds.set(`${ref.group}/${ref.kind}`, { group: ref.group, kind: ref.kind });
    const set = createWatchSet(client, [...kinds.values()], { pageSize: 500 });
    const outcomes = await set.start();
    const errors = [...outcomes].filter(([, e]) => e !== undefined).map(([k, e]) => `${k}: ${e?.message ?? ''}`);
    const history = createRecorder(createSnapshotStore(db));
    const objects = distinctObjects(set.caches);
    // One worker's memos: the status memos they keep on the cache records are part of what is measured.
    return { client, set, errors, history, memos: new ObservationMemos(), objects, phases: discovered.phases.length };
  };
  // Two snapshots: the first stores every phase; the second, with one resource's message changed
  // in the observation, is what every later snapshot is: it reads the stored state and keeps it.
  let tick = Date.now();
  const record = async (run: Awaited<ReturnType<typeof cycle>>) => {
    for (const round of [0, 1]) {
      const observed = await observeWithSources(run.client, { memos: run.memos });
      const observation = observed.observation;
      if (observation.outcome !== 'ok') throw new Error('emulated cluster unreachable');
      const changed = observation.phases[0]?.resources[0];
      if (round === 1 && changed !== undefined) changed.message = `${changed.message} (changed)`;
      const result = await run.history.record(observation, { tickAt: new Date((tick += 1000)) });
      if (!result.written || (round === 1 && result.changes.length === 0))
        throw new Error(`snapshot ${round} not written`);
      // As snapshotCluster does after commit: the caches drop the bodies the store now holds.
      releaseStoredBodies(observed);
    }
  };
  // Prisma's client runtime keeps its last 100 debug lines whatever DEBUG says (~25 queries), and
  // a raw query's line holds its parameters: right after a snapshot of every resource, the big
  // statements' arrays. Unlike the pg adapter's history (src/store/prisma.ts forgetQueryArguments),
  // it cannot be cleared from outside; the worker's next queries push them out, and so do these.
  const flushPrismaDebugRing = async () => {
    for (let i = 0; i < 40; i += 1) await db.$queryRaw`SELECT 1`;
  };
  const cold = await settle();
  // The warm-up: the same work once, dropped (code, V8's young generation, the database pool).
  let warm: Awaited<ReturnType<typeof cycle>> | undefined = await cycle('rss-warm-up');
  await record(warm);
  warm.set.stop();
  warm.client.close();
  warm = undefined;
  await flushPrismaDebugRing();
  const before = await settle();
  let run: Awaited<ReturnType<typeof cycle>> | undefined = await cycle('rss');
  await flushPrismaDebugRing();
  const caches = await settle();
  await record(run);
  await flushPrismaDebugRing();
  const after = await settle();
  // The same heap without the kept state: a history store that keeps none (the memos stay, held by the cache records).
  run.history = createRecorder(createSnapshotStore(db), { keepState: false });
  await flushPrismaDebugRing();
  const withoutKept = await settle();
  const result = {
    objects: run.objects,
    rssCold: cold.rss,
    rssBefore: before.rss,
    rssAfter: after.rss,
    heapBefore: before.heapUsed,
    heapAfter: after.heapUsed,
    heapCaches: caches.heapUsed,
    heapWithoutKeptState: withoutKept.heapUsed,
    heapTotalBefore: before.heapTotal,
    heapTotalAfter: after.heapTotal,
    externalBefore: before.external,
    externalAfter: after.external,
    ...(run.errors.length > 0 ? { error: run.errors.join('; ') } : {}),
  };
  run.set.stop();
  run.client.close();
  run = undefined;
  await db.$disconnect();
  return result;
}

const [mode, arg, arg2] = process.argv.slice(2);
const result =
  mode === 'watch'
    ? await probeWatch(arg ?? '')
    : mode === 'worker'
      ? await probeWorker(arg ?? '', arg2 ?? '')
      : await probeMap(Number(arg ?? '10000'));
process.send?.({ ready: true, url: '', ...result } satisfies ProbeResult);
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
