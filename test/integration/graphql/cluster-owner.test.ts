/**
 * Cluster.owner: which worker reads a cluster now, from the ownership leases in Redis. A cluster no
 * live worker holds has none, and an API whose Redis is away answers null rather than failing.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newInstance, ownershipPrefix, startOwnership, type Ownership } from '../../../src/queue/ownership.ts';
import { SNAPSHOT_QUEUE } from '../../../src/queue/snapshot-jobs.ts';
import { createClusterStore } from '../../../src/store/cluster-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { startPrivateRedis } from '../../helpers/private-redis.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { gqlData, startTestApi, type TestApi } from './helpers.ts';

const QUERY = '{ clusters { name owner { worker host since } } }';
type Answer = { clusters: { name: string; owner: { worker: string; host: string | null; since: string } | null }[] };

describe('Cluster.owner', () => {
  let database: TestDatabase;
  let db: Db;
  let api: TestApi;
  let redis: Redis;
  let ownership: Ownership;
  const prefix = uniquePrefix('owner');

  beforeAll(async () => {
    database = await createTestDatabase('gql_owner');
    db = createDb(database.url, { poolSize: 2 });
    await createClusterStore(db).registerClusters({ configured: ['east', 'west'], snapshotIntervalMs: 30_000 });
    redis = new Redis(testRedisUrl());
    // A worker that can read east only: west has no owner.
    ownership = await startOwnership({
      redis,
      prefix: ownershipPrefix(prefix, SNAPSHOT_QUEUE),
      instance: newInstance('worker-east'),
      clusters: ['east'],
      heartbeatMs: 100,
      leaseMs: 1000,
      log: pino({ level: 'silent' }),
      acquire: () => {},
      release: () => {},
    });
    api = await startTestApi({
      db,
      anonymousRead: true,
      redisUrl: testRedisUrl(),
      channelPrefix: prefix,
      snapshotQueue: { name: SNAPSHOT_QUEUE, prefix },
    });
  });
  afterAll(async () => {
    await api?.close();
    await ownership?.close();
    redis?.disconnect();
    await db?.$disconnect();
    await database?.drop();
  });

  it('names the worker holding the lease, its host and since when; null for a cluster no worker can read', async () => {
    const before = Date.now();
    await ownership.round();
    await ownership.round();
    const { clusters } = await gqlData<Answer>(api.url, QUERY);
    const east = clusters.find((c) => c.name === 'east');
    expect(east?.owner).toMatchObject({ worker: 'worker-east', host: expect.any(String) as string });
    expect(Date.parse(east?.owner?.since ?? '')).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(east?.owner?.since ?? '')).toBeGreaterThan(before - 5000);
    expect(clusters.find((c) => c.name === 'west')?.owner).toBeNull();
  });

  it('is null once the owner left', async () => {
    await ownership.close();
    const { clusters } = await gqlData<Answer>(api.url, QUERY);
    expect(clusters.map((c) => c.owner)).toEqual([null, null]);
  });

  it("is null, and the rest of the answer intact, when the API's Redis has gone away", async () => {
    const own = await startPrivateRedis();
    const cut = await startTestApi({
      db,
      anonymousRead: true,
      redisUrl: own.url,
      channelPrefix: prefix,
      snapshotQueue: { name: SNAPSHOT_QUEUE, prefix },
    });
    try {
      await own.kill();
      const { clusters } = await gqlData<Answer>(cut.url, QUERY);
      expect(clusters).toEqual([
        { name: 'east', owner: null },
        { name: 'west', owner: null },
      ]);
    } finally {
      await cut.close();
      await own.close();
    }
  });
});
