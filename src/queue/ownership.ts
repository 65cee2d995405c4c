/**
 * Cluster ownership: each cluster is read by exactly one live worker process at a time, so N workers
 * divide the watches, cluster state and API-server load instead of multiplying them.
 *
 * How:
 * - **Membership** is a Redis sorted set of worker instances scored by when their heartbeat expires;
 *   each instance renews it every `heartbeatMs` and publishes which clusters it can read. An
 *   instance is `<worker id>#<random>`: a restarted process is a new instance, and two processes
 *   given the same worker id never share leases.
 * - **Who should own a cluster** is rendezvous (highest-random-weight) hashing of the cluster name
 *   with each live worker id that can read it. Every member computes the same answer from the same
 *   membership, and a worker joining or leaving moves only the clusters it wins or held (about 1/N).
 * - **Leases** make that answer safe while views differ during a change: a cluster is owned only
 *   under a Redis lease (`SET NX PX`) naming the instance, renewed every heartbeat. A worker gives
 *   a cluster up (stopping its watches and waiting for its running snapshot first) before it
 *   deletes the lease; the next owner takes it only once the lease is gone. A killed worker's
 *   leases run out after `leaseMs`, and by then its heartbeat has run out too, so the survivors
 *   take its clusters over within about `leaseMs + heartbeatMs`.
 * - **Fencing on the worker side**: a worker that cannot renew (Redis away) stops treating its
 *   clusters as owned `safetyMs` before its leases could have run out in Redis, counted from when it
 *   sent the last renewal that succeeded; writes stay safe regardless (the snapshot transaction
 *   locks the cluster row and skips ticks already written).
 *
 * Hand-written because no maintained library does sharding over BullMQ: Redlock-style libraries
 * give mutual exclusion on a key, not balanced assignment with bounded movement.
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** A worker instance as published in the membership. */
export interface MemberInfo {
  /** The worker id (`worker.id`, PHASELOG_WORKER_ID; else host and pid). */
  worker: string;
  host: string;
  pid: number;
  /** Epoch ms the instance joined. */
  startedAt: number;
}

/** A cluster's current owner, as the API shows it. */
export interface ClusterOwner {
  worker: string;
  instance: string;
  host: string | null;
  /** When this owner took the cluster. */
  since: Date;
}

/** Options of {@link startOwnership}. */
export interface OwnershipOptions {
  /** A connection for commands (not a blocking one); the caller owns it. */
  redis: Redis;
  /** Key prefix of this fleet's ownership keys, see {@link ownershipPrefix}. */
  prefix: string;
  /** This process's instance, from {@link newInstance} (so its queue can be named before the first round). */
  instance: string;
  /** The clusters this worker can read. */
  clusters: readonly string[];
  /** How often membership and leases are renewed and the assignment recomputed. @default 2000 */
  heartbeatMs?: number;
  /** Lease and heartbeat lifetime: a killed worker's clusters are free after this long. @default 10000 */
  leaseMs?: number;
  /** A cluster is taken. Called once per acquisition, in order with {@link OwnershipOptions.release}. */
  acquire(cluster: string): void | Promise<void>;
  /**
   * A cluster is given up: stop reading it. Resolving lets the lease go, so the next owner starts
   * only after this finished.
   */
  release(cluster: string): void | Promise<void>;
  log: Logger;
  /** A member whose heartbeat ran out was removed by this process (exactly one survivor is told). */
  onGone?: (instance: string) => void;
  /** Called after each round with the members seen (tests, metrics). */
  onRound?: (members: readonly string[]) => void;
}

/** A running membership. */
export interface Ownership {
  /** This instance (`<worker id>#<random>`). */
  readonly instance: string;
  readonly workerId: string;
  /** Whether this worker owns `cluster` now (holds its lease, and has renewed it recently enough). */
  owns(cluster: string): boolean;
  /** Clusters owned now. */
  owned(): string[];
  /** The instance holding `cluster`'s lease, if any. */
  holder(cluster: string): Promise<string | undefined>;
  /** Whether `instance` is a live member (as of the last round). */
  isLive(instance: string): boolean;
  /** Runs one round now (joins on the first); rounds never overlap. */
  round(): Promise<void>;
  /** Releases every cluster, leaves the membership and stops. */
  close(): Promise<void>;
}

/** The ownership keys' prefix of a snapshot queue. */
export function ownershipPrefix(bullPrefix: string, queueName: string): string {
  return `${bullPrefix}:${queueName}:owners`;
}

/** A new instance of `workerId` (`<worker id>#<random>`): each process start is a member of its own. */
export function newInstance(workerId: string = defaultWorkerId()): string {
  return `${workerId}#${randomBytes(4).toString('hex')}`;
}

/** A default worker id: host and process id, which tell processes apart within a machine and across. */
export function defaultWorkerId(): string {
  return `${os.hostname()}-${process.pid}`.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
}

const keys = (prefix: string) => ({
  members: `${prefix}:members`,
  info: `${prefix}:info`,
  clusters: (instance: string) => `${prefix}:clusters:${instance}`,
  lease: (cluster: string) => `${prefix}:lease:${cluster}`,
  cleanup: (instance: string) => `${prefix}:cleanup:${instance}`,
});

// KEYS: lease keys; ARGV[1]: ttl ms, ARGV[2..]: this instance's value per key. A lease that vanished
// (Redis restarted empty, FLUSHALL) is claimed again; one another instance holds is reported lost.
const RENEW = `
local kept = {}
for i, key in ipairs(KEYS) do
  local value = redis.call('get', key)
  if value == ARGV[i + 1] then
    redis.call('pexpire', key, ARGV[1])
    kept[i] = 1
  elseif not value then
    redis.call('set', key, ARGV[i + 1], 'PX', ARGV[1])
    kept[i] = 1
  else
    kept[i] = 0
  end
end
return kept`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/** The instance named by a lease value (`<instance> <acquired at ms>`). */
function leaseInstance(value: string | null): string | undefined {
  if (value === null) return undefined;
  const space = value.lastIndexOf(' ');
  return space > 0 ? value.slice(0, space) : value;
}

/** The worker id of an instance (`<worker id>#<random>`). */
export function workerOf(instance: string): string {
  const hash = instance.lastIndexOf('#');
  return hash > 0 ? instance.slice(0, hash) : instance;
}

/** Rendezvous weight of a worker for a cluster: every member computes the same. */
function weight(cluster: string, worker: string): bigint {
  return createHash('sha256').update(cluster).update('\0').update(worker).digest().readBigUInt64BE(0);
}

/** Parses a member's published info; anything malformed reads as undefined (never trusted further). */
function parseInfo(text: string | null | undefined): MemberInfo | undefined {
  if (typeof text !== 'string' || text.length > 10_000) return undefined;
  try {
    const value = JSON.parse(text) as Partial<MemberInfo>;
    if (
      typeof value.worker !== 'string' ||
      typeof value.host !== 'string' ||
      typeof value.pid !== 'number' ||
      typeof value.startedAt !== 'number'
    )
      return undefined;
    return { worker: value.worker, host: value.host, pid: value.pid, startedAt: value.startedAt };
  } catch {
    return undefined;
  }
}

function parseClusterList(text: string | null): Set<string> | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? new Set(value.filter((v): v is string => typeof v === 'string')) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Picks, for each cluster, the instance that should own it: the live worker id with the highest
 * rendezvous weight among those that can read it; of several instances of one worker id, the one
 * that joined first (the others stand by).
 */
export function assignClusters(
  clusters: readonly string[],
  members: ReadonlyMap<string, { info: MemberInfo; clusters: ReadonlySet<string> }>,
): Map<string, string> {
  // One instance per worker id: the earliest joined, ties by instance name.
  const byWorker = new Map<string, { instance: string; info: MemberInfo; clusters: ReadonlySet<string> }>();
  for (const [instance, member] of [...members].sort(([a], [b]) => a.localeCompare(b))) {
    const current = byWorker.get(member.info.worker);
    if (current === undefined || member.info.startedAt < current.info.startedAt)
      byWorker.set(member.info.worker, { instance, ...member });
  }
  const assignment = new Map<string, string>();
  for (const cluster of clusters) {
    let best: { instance: string; weight: bigint } | undefined;
    for (const [worker, member] of byWorker) {
      if (!member.clusters.has(cluster)) continue;
      const w = weight(cluster, worker);
      if (best === undefined || w > best.weight) best = { instance: member.instance, weight: w };
    }
    if (best !== undefined) assignment.set(cluster, best.instance);
  }
  return assignment;
}

/** Joins the membership and keeps this worker's share of `clusters` owned until closed. */
export async function startOwnership(options: OwnershipOptions): Promise<Ownership> {
  const { redis, log } = options;
  const k = keys(options.prefix);
  const heartbeatMs = Math.max(50, options.heartbeatMs ?? 2000);
  const leaseMs = Math.max(3 * heartbeatMs, options.leaseMs ?? 10_000);
  // Stop treating clusters as owned this long before the leases could run out in Redis.
  const safetyMs = heartbeatMs;
  const instance = options.instance;
  const workerId = workerOf(instance);
  const info: MemberInfo = { worker: workerId, host: os.hostname(), pid: process.pid, startedAt: Date.now() };
  const mine = [...new Set(options.clusters)].sort();

  // Leases held, with the value each was taken with; `active` is what owns() answers from (a cluster
  // being released is held, and renewed, until its release finished, but no longer active).
  const held = new Map<string, string>();
  const active = new Set<string>();
  const releasing = new Map<string, Promise<void>>();
  // Acquisitions still starting (watches syncing): a release waits for them, so the two never interleave.
  const starting = new Map<string, Promise<void>>();
  let validUntil = 0;
  let live = new Set<string>();
  const memberClusters = new Map<string, { info: MemberInfo; clusters: ReadonlySet<string> }>();
  let failing = false;
  let closed = false;
  let duplicateWarned = false;
  let running: Promise<void> | undefined;
  // The first round only joins: workers started together see each other before any takes a
  // cluster, instead of the first one taking them all and handing most back a heartbeat later.
  let joined = false;

  const release = (cluster: string): Promise<void> => {
    const pending = releasing.get(cluster);
    if (pending !== undefined) return pending;
    active.delete(cluster);
    const done = (async () => {
      try {
        await starting.get(cluster);
        await options.release(cluster);
      } catch (error) {
        log.error({ err: error, cluster }, 'giving up a cluster failed; its lease is released anyway');
      }
      const value = held.get(cluster);
      held.delete(cluster);
      if (value !== undefined) await redis.eval(RELEASE, 1, k.lease(cluster), value).catch(() => {});
      log.info({ cluster }, 'cluster released to another worker');
    })().finally(() => releasing.delete(cluster));
    releasing.set(cluster, done);
    return done;
  };

  // Without a renewal for too long (Redis away), this worker may no longer own anything.
  const dropExpired = (): void => {
    if (active.size === 0 || Date.now() < validUntil) return;
    log.warn(
      { clusters: active.size },
      'cluster leases could not be renewed in time (Redis unreachable?): stopping reading them until they are owned again',
    );
    for (const cluster of [...active]) void release(cluster);
  };

  const readMembers = async (now: number): Promise<void> => {
    const alive = await redis.zrangebyscore(k.members, now, '+inf');
    live = new Set(alive);
    for (const known of [...memberClusters.keys()]) if (!live.has(known)) memberClusters.delete(known);
    const unknown = alive.filter((m) => !memberClusters.has(m));
    if (unknown.length > 0) {
      const [infos, lists] = await Promise.all([
        redis.hmget(k.info, ...unknown),
        redis.mget(...unknown.map(k.clusters)),
      ]);
      unknown.forEach((member, i) => {
        const parsed = parseInfo(infos[i]);
        const clusters = parseClusterList(lists[i] ?? null);
        // A member whose record is missing or malformed gets nothing assigned (until it republishes).
        if (parsed !== undefined && clusters !== undefined) memberClusters.set(member, { info: parsed, clusters });
      });
    }
  };

  // Members whose heartbeat ran out: one survivor removes their records.
  const sweepDead = async (now: number): Promise<void> => {
    const dead = await redis.zrangebyscore(k.members, '-inf', `(${now}`);
    for (const member of dead.slice(0, 100)) {
      if ((await redis.set(k.cleanup(member), instance, 'PX', leaseMs, 'NX')) !== 'OK') continue;
      await redis.multi().zrem(k.members, member).hdel(k.info, member).del(k.clusters(member)).exec();
      log.info({ member }, 'worker left without saying so (heartbeat expired); its clusters are taken over');
      options.onGone?.(member);
    }
  };

  const roundOnce = async (): Promise<void> => {
    const sentAt = Date.now();
    await redis
      .multi()
      .set(k.clusters(instance), JSON.stringify(mine), 'PX', 2 * leaseMs)
      .hset(k.info, instance, JSON.stringify(info))
      .zadd(k.members, sentAt + leaseMs, instance)
      .exec();
    // Renew what is held; a lease another instance took meanwhile is lost at once.
    const heldNow = [...held];
    if (heldNow.length > 0) {
      const kept = (await redis.eval(
        RENEW,
        heldNow.length,
        ...heldNow.map(([cluster]) => k.lease(cluster)),
        String(leaseMs),
        ...heldNow.map(([, value]) => value),
      )) as number[];
      heldNow.forEach(([cluster], i) => {
        if (kept[i] === 1) return;
        log.warn({ cluster }, 'cluster lease taken by another worker; giving the cluster up');
        held.delete(cluster);
        void release(cluster);
      });
    }
    validUntil = sentAt + leaseMs - safetyMs;
    await readMembers(sentAt);
    await sweepDead(sentAt);
    if (closed) return;
    const assignment = assignClusters(mine, memberClusters);
    const sameWorker = [...memberClusters].filter(([m, v]) => m !== instance && v.info.worker === workerId);
    if (sameWorker.length > 0 && !duplicateWarned) {
      duplicateWarned = true;
      log.warn(
        { workerId, others: sameWorker.map(([m]) => m) },
        'another live process uses this worker id: only the first of them owns clusters; give each worker its own id',
      );
    }
    for (const cluster of [...active]) if (assignment.get(cluster) !== instance) void release(cluster);
    if (!joined) {
      joined = true;
      options.onRound?.([...live]);
      return;
    }
    const wanted = mine.filter((c) => assignment.get(c) === instance && !held.has(c) && !releasing.has(c));
    if (wanted.length > 0) {
      const now = Date.now();
      const pipeline = redis.pipeline();
      for (const cluster of wanted) pipeline.set(k.lease(cluster), `${instance} ${now}`, 'PX', leaseMs, 'NX');
      const results = (await pipeline.exec()) ?? [];
      const taken: string[] = [];
      wanted.forEach((cluster, i) => {
        if (results[i]?.[1] !== 'OK') return;
        held.set(cluster, `${instance} ${now}`);
        active.add(cluster);
        taken.push(cluster);
      });
      // Not awaited: starting watches on hundreds of clusters must not hold up the next heartbeat.
      for (const cluster of taken) {
        const start = Promise.resolve()
          .then(() => options.acquire(cluster))
          .catch((error: unknown) =>
            log.error(
              { err: error, cluster },
              'starting to read an acquired cluster failed; scheduled snapshots still run',
            ),
          )
          .finally(() => starting.delete(cluster));
        starting.set(cluster, start);
      }
      if (taken.length > 0)
        log.info({ clusters: taken.length, owned: active.size, members: live.size }, 'clusters acquired');
    }
    options.onRound?.([...live]);
  };

  const round = (): Promise<void> =>
    (running ??= roundOnce()
      .then(() => {
        if (failing) log.info('cluster ownership: Redis reachable again');
        failing = false;
      })
      .catch((error: unknown) => {
        if (!failing) log.warn({ err: error }, 'cluster ownership round failed; retried every heartbeat');
        failing = true;
      })
      .finally(() => {
        running = undefined;
        dropExpired();
      }));

  await round();
  const timer = setInterval(() => {
    dropExpired();
    if (!closed) void round();
  }, heartbeatMs);
  timer.unref();

  return {
    instance,
    workerId,
    owns: (cluster) => active.has(cluster) && Date.now() < validUntil,
    owned: () => [...active].filter(() => Date.now() < validUntil).sort(),
    async holder(cluster) {
      return leaseInstance(await redis.get(k.lease(cluster)));
    },
    isLive: (member) => live.has(member),
    round,
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      await Promise.all([...active].map((cluster) => release(cluster)));
      await Promise.all([...held.keys()].map((cluster) => release(cluster)));
      await Promise.all([...releasing.values()]);
      await redis
        .multi()
        .zrem(k.members, instance)
        .hdel(k.info, instance)
        .del(k.clusters(instance))
        .exec()
        .catch(() => {});
    },
  };
}

/** Reads clusters' owners (for the API): the live instance holding each lease, with its host. */
export async function readClusterOwners(
  redis: Redis,
  prefix: string,
  clusters: readonly string[],
): Promise<Map<string, ClusterOwner>> {
  const owners = new Map<string, ClusterOwner>();
  if (clusters.length === 0) return owners;
  const k = keys(prefix);
  const values = await redis.mget(...clusters.map(k.lease));
  const instances = [...new Set(values.map(leaseInstance).filter((v): v is string => v !== undefined))];
  const infos = instances.length === 0 ? [] : await redis.hmget(k.info, ...instances);
  const hostOf = new Map(instances.map((instance, i) => [instance, parseInfo(infos[i])?.host ?? null]));
  clusters.forEach((cluster, i) => {
    const value = values[i] ?? null;
    const instance = leaseInstance(value);
    if (value === null || instance === undefined) return;
    const since = Number(value.slice(instance.length + 1));
    owners.set(cluster, {
      worker: workerOf(instance),
      instance,
      host: hostOf.get(instance) ?? null,
      since: new Date(Number.isFinite(since) && since > 0 ? since : 0),
    });
  });
  return owners;
}
