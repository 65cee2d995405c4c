/**
 * With a read database (database.readUrl), a mutation's answer is read from the primary, nested
 * fields included: the worker has just written the snapshot there, and a replica may not have it
 * yet. The "replica" here is an empty, migrated database (one that has replicated nothing yet), so
 * any field read from it would come back empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { applyFleet, readyDeployment, rollingStatus } from '../snapshot/fleet.ts';
import { startEmulatedCluster, testLogger, type EmulatedCluster } from '../snapshot/helpers.ts';
import { gqlData, startTestApi, wsClient, type TestApi } from './helpers.ts';

let primary: TestDatabase;
let replica: TestDatabase;
let db: Db;
let readDb: Db;
let api: TestApi;
let cluster: EmulatedCluster;
let workers: RunningWorkers;
let admin: string;
const queue = uniquePrefix('gql-read-refresh');

beforeAll(async () => {
  [primary, replica] = await Promise.all([
    createTestDatabase('read_refresh_primary'),
    createTestDatabase('read_refresh_replica'),
  ]);
  db = createDb(primary.url, { poolSize: 4 });
  readDb = createDb(replica.url, { poolSize: 4 });
  cluster = await startEmulatedCluster('east');
  applyFleet(cluster.emulator, { phases: 2, resourcesPerPhase: 3 });
  workers = await startWorkers({
    config: { snapshot: { interval: 3_600_000 }, health: undefined, baseDir: process.cwd() },
    db,
    redisUrl: testRedisUrl(),
    log: testLogger(),
    clusters: [cluster.handle],
    queueName: queue,
    prefix: queue,
    channelPrefix: queue,
    schedule: false,
  });
  admin = (await createToken(createApiTokenStore(db), { name: 'admin', scopes: ['admin'] })).secret;
  api = await startTestApi({
    db,
    readDb,
    anonymousRead: false,
    redisUrl: testRedisUrl(),
    channelPrefix: queue,
    snapshotQueue: { name: queue, prefix: queue },
  });
});

afterAll(async () => {
  await api?.close();
  await workers?.close();
  await cluster?.close();
  await db?.$disconnect();
  await readDb?.$disconnect();
  await primary?.drop();
  await replica?.drop();
});

const PHASES = '{ phases(filter: { cluster: "east" }) { edges { node { name } } } }';

describe('mutations with a read database', () => {
  it('refreshCluster answers the cluster just written, which queries do not see until the replica has it', async () => {
    const result = await gqlData<{ refreshCluster: Record<string, unknown> }>(
      api.url,
      'mutation { refreshCluster(cluster: "east") { cluster { name reachable } written outcome } }',
      {},
      admin,
    );
    expect(result.refreshCluster).toMatchObject({
      cluster: { name: 'east', reachable: true },
      written: true,
      outcome: 'ok',
    });
    expect(await db.phase.count()).toBe(2);
    expect((await gqlData<{ phases: { edges: unknown[] } }>(api.url, PHASES, {}, admin)).phases.edges).toEqual([]);
    expect((await gqlData<{ clusters: unknown[] }>(api.url, '{ clusters { name } }', {}, admin)).clusters).toEqual([]);
  });

  it('refreshPhase answers from the primary, nested fields (read through loaders) included', async () => {
    cluster.emulator.apply([readyDeployment('team-0', 'app-1-2', { status: rollingStatus() })]);
    const result = await gqlData<{
      refreshPhase: {
        name: string;
        status: string;
        since: string | null;
        worstResource: { key: string; status: string } | null;
        resources: { edges: unknown[] };
      };
    }>(
      api.url,
      'mutation { refreshPhase(phase: { cluster: "east", namespace: "team-0", name: "phase-1" }) { name status since worstResource { key status } resources { edges { node { key } } } } }',
      {},
      admin,
    );
    expect(result.refreshPhase).toMatchObject({
      name: 'phase-1',
      status: 'InProgress',
      worstResource: { key: 'apps/Deployment/team-0/app-1-2', status: 'InProgress' },
    });
    expect(result.refreshPhase.since).not.toBeNull();
    expect(result.refreshPhase.resources.edges).toHaveLength(3);
  });

  it('over WebSocket too: a query reads the replica, a mutation the primary', async () => {
    const client = wsClient(api.wsUrl, admin);
    try {
      const run = <T>(query: string) =>
        new Promise<T>((resolve, reject) => {
          let data: T | undefined;
          client.subscribe<T>(
            { query },
            {
              next: (r) => (r.errors ? reject(new Error(JSON.stringify(r.errors))) : (data = r.data as T)),
              error: reject,
              complete: () => resolve(data as T),
            },
          );
        });
      expect((await run<{ clusters: unknown[] }>('{ clusters { name } }')).clusters).toEqual([]);
      const refreshed = await run<{ refreshCluster: { cluster: { name: string } } }>(
        'mutation { refreshCluster(cluster: "east") { cluster { name } } }',
      );
      expect(refreshed.refreshCluster.cluster.name).toBe('east');
    } finally {
      await client.dispose();
    }
  });
});
