/**
 * refreshCluster / refreshPhase: the mutation queues the shared snapshot job, a real worker (the
 * snapshot engineer's startWorkers) reads an emulated cluster, and the answer is the fresh status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { applyFleet, readyDeployment, rollingStatus } from '../snapshot/fleet.ts';
import { startEmulatedCluster, testLogger, waitUntil, type EmulatedCluster } from '../snapshot/helpers.ts';
import { gql, gqlData, startTestApi, type TestApi } from './helpers.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let cluster: EmulatedCluster;
let workers: RunningWorkers;
let admin: string;
let reader: string;
const queue = uniquePrefix('gql-refresh');

beforeAll(async () => {
  database = await createTestDatabase('gql_refresh');
  db = createDb(database.url, { poolSize: 4 });
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
  const tokens = createApiTokenStore(db);
  admin = (await createToken(tokens, { name: 'admin', scopes: ['admin'] })).secret;
  reader = (await createToken(tokens, { name: 'reader', scopes: ['read'] })).secret;
  api = await startTestApi({
    db,
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
  await database?.drop();
});

type Phases = {
  phases: {
    edges: {
      node: {
        id: string;
        namespace: string;
        name: string;
        status: string;
        summary: { current: number; total: number };
      };
    }[];
  };
};
const PHASES =
  '{ phases(filter: { cluster: "east" }) { edges { node { id namespace name status summary { current total } } } } }';

describe('refresh mutations', () => {
  it('refreshCluster runs a snapshot now and returns the cluster as recorded', async () => {
    // The worker snapshots the cluster as soon as it owns it; the refresh below is a snapshot of its own.
    // Its phases' applier conditions (kpt/Applied) are written just after it commits: wait for those too.
    const CONDITIONS =
      '{ statusChanges(filter: { cluster: "east", scopes: [condition] }, first: 100) { edges { cursor } } }';
    await waitUntil(
      async () =>
        (await gqlData<Phases>(api.url, PHASES, {}, reader)).phases.edges.length === 2 &&
        (await gqlData<{ statusChanges: { edges: unknown[] } }>(api.url, CONDITIONS, {}, reader)).statusChanges.edges
          .length === 2,
      'the first snapshot of the acquired cluster',
    );
    const CHANGES = '{ statusChanges(filter: { cluster: "east" }, first: 100) { edges { cursor } } }';
    const before = (await gqlData<{ statusChanges: { edges: unknown[] } }>(api.url, CHANGES, {}, reader)).statusChanges
      .edges.length;
    cluster.emulator.apply([readyDeployment('team-0', 'app-0-1', { status: rollingStatus() })]);
    const result = await gqlData<{ refreshCluster: Record<string, unknown> }>(
      api.url,
      'mutation { refreshCluster(cluster: "east") { cluster { name reachable } written outcome changes } }',
      {},
      admin,
    );
    expect(result.refreshCluster).toMatchObject({
      cluster: { name: 'east', reachable: true },
      written: true,
      outcome: 'ok',
    });
    // Every change the snapshot reports is in the change log: the Deployment and its phase.
    const after = (await gqlData<{ statusChanges: { edges: unknown[] } }>(api.url, CHANGES, {}, reader)).statusChanges
      .edges.length;
    expect(result.refreshCluster.changes).toBe(after - before);
    expect(result.refreshCluster.changes).toBe(2);
    const phases = await gqlData<Phases>(api.url, PHASES, {}, reader);
    expect(phases.phases.edges.map((e) => ({ ...e.node, id: undefined }))).toEqual([
      { id: undefined, namespace: 'team-0', name: 'phase-0', status: 'InProgress', summary: { current: 2, total: 3 } },
      { id: undefined, namespace: 'team-0', name: 'phase-1', status: 'Current', summary: { current: 3, total: 3 } },
    ]);
  });

  it('refreshPhase returns the phase with the status just read', async () => {
    cluster.emulator.apply([readyDeployment('team-0', 'app-1-2', { status: rollingStatus() })]);
    const result = await gqlData<{
      refreshPhase: { name: string; status: string; worstResource: { key: string; status: string } };
    }>(
      api.url,
      'mutation { refreshPhase(phase: { cluster: "east", namespace: "team-0", name: "phase-1" }) { name status worstResource { key status } } }',
      {},
      admin,
    );
    expect(result.refreshPhase).toEqual({
      name: 'phase-1',
      status: 'InProgress',
      worstResource: { key: 'apps/Deployment/team-0/app-1-2', status: 'InProgress' },
    });
  });

  it('needs the admin scope, and a cluster a worker reads', async () => {
    const forbidden = await gql(api.url, 'mutation { refreshCluster(cluster: "east") { written } }', {}, reader);
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // No worker reads "nowhere": its snapshot job fails, and the caller is told so.
    const unknown = await gql(api.url, 'mutation { refreshCluster(cluster: "nowhere") { written } }', {}, admin);
    expect(unknown.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    expect(unknown.errors?.[0]?.message).toContain('the snapshot of nowhere failed');
  });
});
