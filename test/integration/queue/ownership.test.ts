import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assignClusters,
  newInstance,
  readClusterOwners,
  startOwnership,
  type Ownership,
  type OwnershipOptions,
} from '../../../src/queue/ownership.ts';
import { startPrivateRedis, type PrivateRedis } from '../../helpers/private-redis.ts';
import { REDIS_URL, uniqueId, waitUntil } from '../snapshot/helpers.ts';

const CLUSTERS = Array.from({ length: 40 }, (_, i) => `cluster-${i}`);
const TIMING = { heartbeatMs: 100, leaseMs: 600 };

interface Member {
  ownership: Ownership;
  /** Clusters this member is reading now, by its acquire and release calls. */
  reading: Set<string>;
  log: string[];
}

describe('cluster ownership', () => {
  let redis: Redis;
  const members: Member[] = [];
  const children: ChildProcess[] = [];
  // Across all members: a cluster read by two at once is the one thing that must never happen.
  const overlaps: string[] = [];
  const readers = new Map<string, number>();

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterEach(async () => {
    for (const m of members.splice(0)) await m.ownership.close();
    for (const c of children.splice(0)) c.kill('SIGKILL');
    readers.clear();
  });
  afterAll(() => redis.disconnect());

  async function join(
    prefix: string,
    workerId: string,
    clusters: readonly string[] = CLUSTERS,
    extra: Partial<OwnershipOptions> = {},
  ): Promise<Member> {
    const reading = new Set<string>();
    const log: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void log.push(line) });
    const ownership = await startOwnership({
      redis: extra.redis ?? redis,
      prefix,
      instance: newInstance(workerId),
      clusters,
      ...TIMING,
      log: logger,
      acquire: (cluster) => {
        const n = (readers.get(cluster) ?? 0) + 1;
        readers.set(cluster, n);
        if (n > 1) overlaps.push(cluster);
        reading.add(cluster);
      },
      release: async (cluster) => {
        // Stopping takes a moment (watches closing, a snapshot finishing): the next owner must wait for it.
        await new Promise((resolve) => setTimeout(resolve, 30));
        readers.set(cluster, (readers.get(cluster) ?? 1) - 1);
        reading.delete(cluster);
      },
      ...extra,
    });
    const member = { ownership, reading, log };
    members.push(member);
    return member;
  }

  /**
   * Waits until the clusters are owned exactly as rendezvous hashing over `among` says (each by one
   * member), and returns each cluster's owner by index.
   */
  async function settled(
    among: Member[],
    clusters: readonly string[] = CLUSTERS,
    timeoutMs = 10_000,
  ): Promise<Map<string, number>> {
    const expected = assignClusters(
      clusters,
      new Map(
        among.map((m, i) => [
          m.ownership.instance,
          { info: { worker: m.ownership.workerId, host: 'h', pid: i, startedAt: i }, clusters: new Set(clusters) },
        ]),
      ),
    );
    let owners = new Map<string, number>();
    await waitUntil(
      () => {
        owners = new Map();
        for (const [i, m] of among.entries())
          for (const c of m.ownership.owned()) owners.set(c, owners.has(c) ? -1 : i);
        return clusters.every(
          (c) => owners.get(c) === among.findIndex((m) => m.ownership.instance === expected.get(c)),
        );
      },
      'every cluster to be owned by the one member rendezvous hashing picks',
      timeoutMs,
    );
    return owners;
  }

  it('gives each cluster to exactly one live worker, spread over the workers, with the lease naming it', async () => {
    const prefix = uniqueId('own');
    const a = await join(prefix, 'worker-a');
    const b = await join(prefix, 'worker-b');
    const c = await join(prefix, 'worker-c');
    const owners = await settled([a, b, c]);
    const shares = [0, 1, 2].map((i) => [...owners.values()].filter((o) => o === i).length);
    // Rendezvous hashing spreads 40 clusters over 3 workers; none is left idle or takes nearly all.
    for (const share of shares) expect(share).toBeGreaterThan(4);
    const stored = await readClusterOwners(redis, prefix, CLUSTERS);
    for (const cluster of CLUSTERS)
      expect(stored.get(cluster)?.worker).toBe(['worker-a', 'worker-b', 'worker-c'][owners.get(cluster) ?? -1]);
    expect(overlaps).toEqual([]);
    // The members agree on one assignment, the one the pure function gives.
    for (const m of [a, b, c]) expect([...m.reading].sort()).toEqual(m.ownership.owned());
  });

  it("moves only the new worker's share when a worker joins, and everything back when it leaves", async () => {
    const prefix = uniqueId('own');
    const a = await join(prefix, 'worker-a');
    const b = await join(prefix, 'worker-b');
    const before = await settled([a, b]);
    const c = await join(prefix, 'worker-c');
    const after = await settled([a, b, c]);
    const moved = CLUSTERS.filter((cluster) => before.get(cluster) !== after.get(cluster));
    // Bounded movement: only clusters the newcomer won moved, none between the old members.
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length).toBeLessThan(CLUSTERS.length / 2);
    for (const cluster of moved) expect(after.get(cluster)).toBe(2);
    members.splice(members.indexOf(c), 1);
    await c.ownership.close();
    const back = await settled([a, b]);
    expect(back).toEqual(before);
    expect(overlaps).toEqual([]);
  });

  it("takes a SIGKILLed worker's clusters over within a lease and a heartbeat", async () => {
    const prefix = uniqueId('own');
    const a = await join(prefix, 'worker-a');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/integration/queue/ownership-child.ts'], {
      env: {
        ...process.env,
        OWNERSHIP_TEST: JSON.stringify({
          redisUrl: REDIS_URL,
          prefix,
          workerId: 'worker-k',
          clusters: CLUSTERS,
          ...TIMING,
        }),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitUntil(
      () =>
        /owned [1-9]/.test(output) &&
        a.ownership.owned().length + Number(/owned (\d+)\n$/.exec(output)?.[1] ?? -1) === CLUSTERS.length,
      'the child to own its share',
      20_000,
    );
    const childShare = CLUSTERS.filter((cluster) => !a.ownership.owns(cluster));
    expect(childShare.length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    const killedAt = Date.now();
    await settled([a], CLUSTERS, 5_000);
    const tookMs = Date.now() - killedAt;
    // The bound the ownership promises: the lease runs out, then the next round takes it.
    expect(tookMs).toBeLessThanOrEqual(TIMING.leaseMs + 3 * TIMING.heartbeatMs + 500);
    const stored = await readClusterOwners(redis, prefix, childShare);
    expect(new Set([...stored.values()].map((o) => o.worker))).toEqual(new Set(['worker-a']));
  });

  it('stops owning anything once its Redis is gone for a lease, and owns again when it is back', async () => {
    const own: PrivateRedis = await startPrivateRedis();
    const connection = new Redis(own.url, { maxRetriesPerRequest: 1 });
    connection.on('error', () => {});
    try {
      const a = await join(uniqueId('own'), 'worker-a', CLUSTERS, { redis: connection });
      await settled([a]);
      await own.kill();
      const killedAt = Date.now();
      // Another worker could take the clusters once the leases ran out in Redis: by then this one must have stopped.
      await waitUntil(
        () => a.ownership.owned().length === 0 && a.reading.size === 0,
        'the worker to stop reading',
        5_000,
      );
      expect(Date.now() - killedAt).toBeLessThanOrEqual(TIMING.leaseMs);
      expect(a.log.join('')).toContain('could not be renewed in time');
      await own.start();
      await settled([a], CLUSTERS, 10_000);
      expect(a.reading.size).toBe(CLUSTERS.length);
    } finally {
      connection.disconnect();
      await own.close();
    }
  });

  it('lets only one of two processes given the same worker id own clusters, and says so', async () => {
    const prefix = uniqueId('own');
    const first = await join(prefix, 'same');
    const second = await join(prefix, 'same');
    await settled([first, second]);
    await first.ownership.round();
    await second.ownership.round();
    expect(first.ownership.owned()).toEqual([...CLUSTERS].sort());
    expect(second.ownership.owned()).toEqual([]);
    expect(second.log.join('')).toContain('another live process uses this worker id');
  });

  it('gives a cluster only to a worker that can read it', async () => {
    const prefix = uniqueId('own');
    const a = await join(prefix, 'worker-a', ['only-a', 'both']);
    const b = await join(prefix, 'worker-b', ['only-b', 'both']);
    await waitUntil(
      () =>
        a.ownership.owns('only-a') &&
        b.ownership.owns('only-b') &&
        a.ownership.owns('both') !== b.ownership.owns('both'),
      'each cluster to be owned once',
      10_000,
    );
    await a.ownership.round();
    await b.ownership.round();
    expect(a.ownership.owns('only-a')).toBe(true);
    expect(b.ownership.owns('only-b')).toBe(true);
    expect(a.ownership.owns('only-b') || b.ownership.owns('only-a')).toBe(false);
  });

  it('ignores hostile membership records: unknown members, malformed or huge info, garbage leases', async () => {
    const prefix = uniqueId('own');
    const far = Date.now() + 3_600_000;
    await redis
      .multi()
      .zadd(`${prefix}:members`, far, 'ghost#1', far, 'bad-json#2', far, 'huge#3', far, 'wrong-types#4')
      .hset(
        `${prefix}:info`,
        'bad-json#2',
        '{not json',
        'huge#3',
        'x'.repeat(200_000),
        'wrong-types#4',
        JSON.stringify({ worker: 42, host: [], pid: 'x', startedAt: null }),
      )
      .set(`${prefix}:clusters:wrong-types#4`, JSON.stringify(CLUSTERS))
      .set(`${prefix}:clusters:bad-json#2`, '[[[')
      .set(`${prefix}:lease:not-a-cluster`, 'x', 'PX', 60_000)
      .exec();
    const a = await join(prefix, 'worker-a');
    await settled([a]);
    expect(a.ownership.owned()).toEqual([...CLUSTERS].sort());
    const owners = await readClusterOwners(redis, prefix, ['not-a-cluster', 'cluster-0']);
    expect(owners.get('cluster-0')?.worker).toBe('worker-a');
    expect(owners.get('not-a-cluster')?.host).toBeNull();
  });

  it('assigns the same way whatever order the members are listed in', () => {
    const info = (worker: string, startedAt: number) => ({
      info: { worker, host: 'h', pid: 1, startedAt },
      clusters: new Set(CLUSTERS),
    });
    const one = assignClusters(
      CLUSTERS,
      new Map([
        ['a#1', info('a', 1)],
        ['b#1', info('b', 2)],
      ]),
    );
    const two = assignClusters(
      CLUSTERS,
      new Map([
        ['b#1', info('b', 2)],
        ['a#1', info('a', 1)],
      ]),
    );
    expect(two).toEqual(one);
    expect(new Set(one.values())).toEqual(new Set(['a#1', 'b#1']));
  });
});
