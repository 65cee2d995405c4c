/**
 * End to end, live: a Deployment changes in an emulated cluster, a real worker's *scheduled* tick
 * (BullMQ job scheduler, no refresh, no watch) records it, and GraphQL subscribers over graphql-ws
 * receive exactly that change, with the seq the change log gives it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { applyFleet, readyDeployment, readyStatus, rollingStatus } from '../snapshot/fleet.ts';
import { startEmulatedCluster, testLogger, type EmulatedCluster } from '../snapshot/helpers.ts';
import { gqlData, startTestApi, wsClient, type TestApi } from './helpers.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let cluster: EmulatedCluster;
let workers: RunningWorkers;
let reader: string;
const queue = uniquePrefix('gql-live');

interface Change {
  seq: string;
  scope: string;
  cluster: string;
  resourceKey: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  phase: { namespace: string; name: string } | null;
}

const FIELDS = 'seq scope cluster resourceKey fromStatus toStatus phase { namespace name }';

/** A subscription whose events are collected as they arrive. */
function collect(
  field: 'phaseStatusChanged' | 'resourceStatusChanged' | 'clusterStatusChanged',
  filter: Record<string, unknown>,
  after: string,
  token = reader,
) {
  const client = wsClient(api.wsUrl, token);
  const events: Change[] = [];
  let failure: unknown;
  const done = new Promise<void>((resolve) => {
    client.subscribe<Record<string, Change>>(
      {
        query: `subscription($filter: StatusChangeFilter, $after: String) { ${field}(filter: $filter, after: $after) { ${FIELDS} } }`,
        variables: { filter, after },
      },
      {
        next: (result) => {
          if (result.errors) failure = result.errors;
          const event = result.data?.[field];
          if (event) events.push(event);
        },
        error: (err) => {
          failure = err;
          resolve();
        },
        complete: resolve,
      },
    );
  });
  return {
    events,
    async until(count: number, timeoutMs = 15_000): Promise<Change[]> {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count && failure === undefined && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 25));
      if (failure !== undefined) throw new Error(`subscription failed: ${JSON.stringify(failure)}`);
      return events;
    },
    async close() {
      await client.dispose();
      await done;
    },
  };
}

async function waitFor<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

type PhaseList = { phases: { edges: { node: { name: string; status: string } }[] } };
const phaseStatuses = async () =>
  (
    await gqlData<PhaseList>(
      api.url,
      '{ phases(filter: { cluster: "east" }) { edges { node { name status } } } }',
      {},
      reader,
    )
  ).phases.edges.map((e) => `${e.node.name}=${e.node.status}`);

beforeAll(async () => {
  database = await createTestDatabase('gql_live');
  db = createDb(database.url, { poolSize: 4 });
  cluster = await startEmulatedCluster('east');
  applyFleet(cluster.emulator, { phases: 2, resourcesPerPhase: 3 });
  reader = (await createToken(createApiTokenStore(db), { name: 'reader', scopes: ['read'] })).secret;
  api = await startTestApi({ db, anonymousRead: false, redisUrl: testRedisUrl(), channelPrefix: queue });
  // Scheduled ticks only: a job scheduler every 300 ms, no watches, nobody asks for a refresh.
  workers = await startWorkers({
    config: { snapshot: { interval: 300, jitter: 0 }, health: undefined, baseDir: process.cwd() },
    db,
    redisUrl: testRedisUrl(),
    log: testLogger(),
    clusters: [cluster.handle],
    queueName: queue,
    prefix: queue,
    channelPrefix: queue,
  });
  expect(await waitFor(phaseStatuses, (s) => s.length === 2)).toEqual(['phase-0=Current', 'phase-1=Current']);
});

afterAll(async () => {
  await workers?.close();
  await api?.close();
  await cluster?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('a status change recorded by a scheduled worker tick', () => {
  it('reaches phase and resource subscribers live, once each, with its change-log seq', async () => {
    // Subscribe from the end of the log as it is now, so a change that lands while the
    // subscriptions are being set up is replayed rather than lost (the catch-up guarantee).
    const now = await gqlData<{
      statusChanges: { edges: { node: { seq: string } }[]; pageInfo: { hasNextPage: boolean } };
    }>(
      api.url,
      '{ statusChanges(filter: { cluster: "east" }) { edges { node { seq } } pageInfo { hasNextPage } } }',
      {},
      reader,
    );
    expect(now.statusChanges.pageInfo.hasNextPage).toBe(false);
    const lastSeq = now.statusChanges.edges.at(-1)!.node.seq;
    const phases = collect('phaseStatusChanged', { cluster: 'east' }, lastSeq);
    const resources = collect('resourceStatusChanged', { cluster: 'east', namespace: 'team-0' }, lastSeq);
    try {
      // An unchanged cluster: ticks go on, nothing is published.
      await new Promise((r) => setTimeout(r, 700));
      expect(phases.events).toEqual([]);
      expect(resources.events).toEqual([]);

      cluster.emulator.apply([readyDeployment('team-0', 'app-1-2', { status: rollingStatus() })]);
      const [phaseEvent] = await phases.until(1);
      const [resourceEvent] = await resources.until(1);
      expect(phaseEvent).toMatchObject({
        scope: 'phase',
        cluster: 'east',
        resourceKey: null,
        fromStatus: 'Current',
        toStatus: 'InProgress',
        phase: { namespace: 'team-0', name: 'phase-1' },
      });
      expect(resourceEvent).toMatchObject({
        scope: 'resource',
        cluster: 'east',
        resourceKey: 'apps/Deployment/team-0/app-1-2',
        fromStatus: 'Current',
        toStatus: 'InProgress',
        phase: { namespace: 'team-0', name: 'phase-1' },
      });

      // Exactly what the change log holds from there on: the tick's two changes, nothing else.
      const first = [BigInt(phaseEvent!.seq), BigInt(resourceEvent!.seq)].sort((a, b) => (a < b ? -1 : 1));
      const log = await gqlData<{ statusChanges: { edges: { node: Change }[] } }>(
        api.url,
        `query($after: String) { statusChanges(filter: { cluster: "east" }, after: $after) { edges { node { ${FIELDS} } } } }`,
        { after: String(first[0]! - 1n) },
        reader,
      );
      expect(log.statusChanges.edges.map((e) => e.node.seq)).toEqual(first.map(String));

      // It recovers on a later tick, and that arrives too; nothing was delivered twice.
      cluster.emulator.apply([readyDeployment('team-0', 'app-1-2', { status: readyStatus() })]);
      await phases.until(2);
      await resources.until(2);
      // A few more ticks of an unchanged cluster publish nothing.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(phases.events.map((e) => [e.phase?.name, e.fromStatus, e.toStatus])).toEqual([
        ['phase-1', 'Current', 'InProgress'],
        ['phase-1', 'InProgress', 'Current'],
      ]);
      expect(resources.events.map((e) => [e.resourceKey, e.fromStatus, e.toStatus])).toEqual([
        ['apps/Deployment/team-0/app-1-2', 'Current', 'InProgress'],
        ['apps/Deployment/team-0/app-1-2', 'InProgress', 'Current'],
      ]);
      expect(new Set(phases.events.map((e) => e.seq)).size).toBe(2);
      expect(await phaseStatuses()).toEqual(['phase-0=Current', 'phase-1=Current']);
    } finally {
      await phases.close();
      await resources.close();
    }
  });

  it('reaches cluster subscribers when the cluster stops answering and when it answers again, and no phase change rides along', async () => {
    const head = (
      await gqlData<{ statusChangeHead: string }>(
        api.url,
        '{ statusChangeHead(filter: { cluster: "east" }) }',
        {},
        reader,
      )
    ).statusChangeHead;
    const clusters = collect('clusterStatusChanged', { cluster: 'east' }, head);
    // A token for another cluster subscribes too, asking for east by name: it must get nothing.
    const westOnly = (
      await createToken(createApiTokenStore(db), { name: 'west-reader', scopes: ['read'], clusters: ['west'] })
    ).secret;
    const elsewhere = collect('clusterStatusChanged', { cluster: 'east' }, '0', westOnly);
    try {
      const remove = cluster.emulator.injectFault({ effect: 'reset' });
      await clusters.until(1, 30_000);
      remove();
      await clusters.until(2, 30_000);
      expect(clusters.events.map((e) => [e.scope, e.cluster, e.phase, e.fromStatus, e.toStatus])).toEqual([
        ['cluster', 'east', null, 'Reachable', 'Unreachable'],
        ['cluster', 'east', null, 'Unreachable', 'Reachable'],
      ]);
      // Replayed from seq 0 and live since: had the scope let anything through, it would be here by now.
      expect(elsewhere.events).toEqual([]);
    } finally {
      await clusters.close();
      await elsewhere.close();
    }
  });
});
