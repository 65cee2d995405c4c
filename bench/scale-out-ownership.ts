/**
 * The cluster-ownership side of the scale-out benchmark: waiting for the workers' shares to settle,
 * counting the watches open on the emulators by worker, and the kill -9 scenario (a worker dies,
 * its clusters change while nobody owns them, the survivors take them over and must record what
 * changed).
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { assignClusters, readClusterOwners, workerOf, type MemberInfo } from '../src/queue/ownership.ts';
import { deploymentRef } from '../test/integration/snapshot/fleet.ts';
import type { FleetShape } from '../test/integration/snapshot/fleet.ts';
import type { ClusterWatches, FlipRequest } from './scale-out-clusters.ts';
import { nowMs } from './lib/stats.ts';

/** Sends `message` to a child and resolves with the first answer `pick` accepts. */
export function request<T>(
  child: ChildProcess,
  message: object,
  pick: (m: unknown) => T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no answer to ${JSON.stringify(message).slice(0, 200)} within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: unknown) => {
      const value = pick(m);
      if (value === undefined) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(value);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until every cluster's lease is held by the instance rendezvous hashing gives it among
 * `instances` (the workers' first rounds race, so one may hold everything for a heartbeat or two);
 * resolves with how long that took.
 */
export async function waitForAssignment(
  redis: Redis,
  prefix: string,
  clusters: readonly string[],
  instances: readonly string[],
  timeoutMs: number,
): Promise<number> {
  const info = (instance: string): MemberInfo => ({ worker: workerOf(instance), host: '', pid: 0, startedAt: 0 });
  const all = new Set(clusters);
  const expected = assignClusters(clusters, new Map(instances.map((i) => [i, { info: info(i), clusters: all }])));
  const started = nowMs();
  for (;;) {
    const owners = await readClusterOwners(redis, prefix, clusters);
    const wrong = clusters.filter((c) => owners.get(c)?.instance !== expected.get(c));
    if (wrong.length === 0) return nowMs() - started;
    if (nowMs() - started > timeoutMs)
      throw new Error(
        `cluster ownership not settled within ${timeoutMs} ms: ${wrong.length} of ${clusters.length} clusters not held by their rendezvous owner`,
      );
    await sleep(100);
  }
}

/** Open watches on the emulators, counted from their request logs. */
export interface WatchCount {
  total: number;
  /** Clusters with open watches from more than one User-Agent (worker instance). */
  multiple: number;
  /** Clusters with no open watch. */
  unwatched: number;
}

let watchQuery = 0;

async function countOnce(clustersChild: ChildProcess, only?: ReadonlySet<string>): Promise<WatchCount> {
  const id = ++watchQuery;
  const clusters = await request(
    clustersChild,
    { watches: id },
    (m) =>
      (m as { watchCounts?: number }).watchCounts === id ? (m as { clusters: ClusterWatches[] }).clusters : undefined,
    60_000,
  );
  const counted = only === undefined ? clusters : clusters.filter((c) => only.has(c.cluster));
  return {
    total: counted.reduce((sum, c) => sum + c.open, 0),
    multiple: counted.filter((c) => Object.keys(c.byAgent).length > 1).length,
    unwatched: counted.filter((c) => c.open === 0).length,
  };
}

/**
 * Counts open watches once they stopped moving: in watch mode, new owners open theirs shortly after
 * acquiring, so the count is read until two reads a second apart agree and (`live`) every cluster
 * is watched, or `timeoutMs` passed.
 */
export async function countOpenWatches(
  clustersChild: ChildProcess,
  live: boolean,
  timeoutMs = 30_000,
): Promise<WatchCount> {
  const started = nowMs();
  let last = await countOnce(clustersChild);
  if (!live) return last;
  for (;;) {
    await sleep(1_000);
    const next = await countOnce(clustersChild);
    const stable = next.total === last.total && next.multiple === last.multiple && next.unwatched === 0;
    last = next;
    if (stable || nowMs() - started > timeoutMs) return last;
  }
}

/** What the kill -9 scenario measured. */
export interface KillResult {
  /** Clusters the killed worker owned. */
  clusters: number;
  /** From SIGKILL until every one of them was held by a surviving worker. */
  takeoverMs: number;
  /** Clusters whose change made after the kill is not in StatusChange after the next fleet tick. */
  missing: number;
  /** Clusters whose change the new owner's first snapshot recorded, before any tick asked for it. */
  recordedByNewOwner: number;
  /** Watches once the survivors took over (watch mode). */
  watches: WatchCount;
}

/** Options of {@link killOneWorker}. */
export interface KillOptions {
  redis: Redis;
  /** The ownership keys' prefix ({@link ownershipPrefix}). */
  ownershipPrefix: string;
  connectionString: string;
  clustersChild: ChildProcess;
  shape: FleetShape;
  /** Cluster names, `cluster-<index>` as the emulators child names them. */
  clusters: readonly string[];
  victim: { child: ChildProcess; instance: string };
  survivors: readonly string[];
  /** The last `mutate` tick sent to the emulators: the Deployments it touched are left alone. */
  lastMutation: number;
  /** The Deployment flips rotate over one in `share`. */
  share: number;
  live: boolean;
  /** The ownership lease (also how long the new owners' first snapshots are waited for). */
  leaseMs: number;
  timeoutMs: number;
  /** Runs one fleet tick (every cluster, through the shared queue) and waits for it. */
  fleetTick(): Promise<unknown>;
}

let flipId = 2_000_000;

/**
 * SIGKILLs the victim, at once turns one Deployment of each cluster it owned Failed, waits until
 * its clusters are held by survivors, runs a fleet tick and checks StatusChange for each change;
 * then turns them back to Current and ticks again so the next measurement starts clean.
 */
export async function killOneWorker(options: KillOptions): Promise<KillResult> {
  const { redis, clusters, victim } = options;
  const owners = await readClusterOwners(redis, options.ownershipPrefix, clusters);
  const victimClusters = clusters.filter((c) => owners.get(c)?.instance === victim.instance);
  // A Deployment the flip rotation did not touch in its last two ticks: Current now, and left alone.
  const total = options.shape.phases * options.shape.resourcesPerPhase;
  const busy = new Set([
    options.lastMutation % options.share,
    (options.lastMutation + options.share - 1) % options.share,
  ]);
  const index = [0, 1, 2].find((i) => i < total && !busy.has(i % options.share)) ?? 0;
  const phase = Math.floor(index / options.shape.resourcesPerPhase);
  const resource = index % options.shape.resourcesPerPhase;
  const ref = deploymentRef(phase, resource, options.shape);
  const setStatus = (to: FlipRequest['to']) => {
    const id = ++flipId;
    const list = victimClusters.map((c) => ({ cluster: Number(c.slice('cluster-'.length)), phase, resource, to }));
    return request(options.clustersChild, { flips: { id, list } }, (m) =>
      (m as { flipped?: number }).flipped === id ? true : undefined,
    );
  };
  const seqBefore = await maxSeq(options.connectionString);

  const exited = once(victim.child, 'exit');
  const killedAt = nowMs();
  victim.child.kill('SIGKILL');
  await exited;
  await setStatus('failed');
  const survivors = new Set(options.survivors);
  for (;;) {
    const now = await readClusterOwners(redis, options.ownershipPrefix, victimClusters);
    if (victimClusters.every((c) => survivors.has(now.get(c)?.instance ?? ''))) break;
    if (nowMs() - killedAt > options.timeoutMs)
      throw new Error(`the killed worker's clusters were not taken over within ${options.timeoutMs} ms`);
    await sleep(50);
  }
  const takeoverMs = nowMs() - killedAt;
  const suffix = `/${ref.namespace}/${ref.name}`;
  // A new owner snapshots at once: give those snapshots a while to land before a tick would record the changes anyway.
  let early = new Set<string>();
  for (const until = nowMs() + options.leaseMs; nowMs() < until; await sleep(200)) {
    early = await clustersWithFailed(options.connectionString, seqBefore, suffix);
    if (victimClusters.every((c) => early.has(c))) break;
  }
  await options.fleetTick();
  const recorded = await clustersWithFailed(options.connectionString, seqBefore, suffix);
  const missing = victimClusters.filter((c) => !recorded.has(c)).length;
  const watches = options.live
    ? await countOpenWatches(options.clustersChild, true)
    : await countOnce(options.clustersChild);
  await setStatus('ready');
  await options.fleetTick();
  return {
    clusters: victimClusters.length,
    takeoverMs,
    missing,
    recordedByNewOwner: victimClusters.filter((c) => early.has(c)).length,
    watches,
  };
}

async function maxSeq(connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const max = await client.query<{ seq: string | null }>('SELECT max("seq")::text AS seq FROM "StatusChange"');
    return max.rows[0]?.seq ?? '0';
  } finally {
    await client.end();
  }
}

/** Clusters with a change of the Deployment whose key ends with `keySuffix` to Failed after `afterSeq`. */
async function clustersWithFailed(connectionString: string, afterSeq: string, keySuffix: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const rows = await client.query<{ name: string }>(
      `SELECT DISTINCT c.name FROM "StatusChange" sc JOIN "Cluster" c ON c.id = sc."clusterId" JOIN "Resource" r ON r.id = sc."resourceId"
       WHERE sc.seq > $1 AND sc.scope = 'resource' AND sc."toStatus" = 'Failed' AND right(r.key, $2) = $3`,
      [afterSeq, keySuffix.length, keySuffix],
    );
    return new Set(rows.rows.map((r) => r.name));
  } finally {
    await client.end();
  }
}
