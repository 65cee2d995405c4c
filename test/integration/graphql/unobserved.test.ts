/**
 * Clusters nobody reads (issue #17, item 2): real workers read an emulated cluster into a real
 * PostgreSQL, the real API answers. When no snapshot completes within three of the cluster's
 * snapshot intervals (every worker stopped, phaselog down), its phases are stale (UNOBSERVED) and
 * gates do not pass; the tick that ends the span records it, so history and statusAt show it as
 * unobserved; a worker started without the cluster in its configuration retires it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { observedForMs } from '../../../src/history/observation.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { startWorkers, type RunningWorkers, type StartWorkersOptions } from '../../../workers/start-workers.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { applyFleet } from '../snapshot/fleet.ts';
import { startEmulatedCluster, testLogger, type EmulatedCluster } from '../snapshot/helpers.ts';
import { gqlData, startTestApi, type TestApi } from './helpers.ts';

/** Snapshot interval the workers record. */
const INTERVAL_MS = 2000;
/** How long after its last tick the cluster counts as observed. */
const BOUND_MS = observedForMs(INTERVAL_MS);

let database: TestDatabase;
let db: Db;
let api: TestApi;
let east: EmulatedCluster;
let west: EmulatedCluster;
let workers: RunningWorkers | undefined;
let admin: string;
const queue = uniquePrefix('gql-unobserved');

function start(clusters: EmulatedCluster[]): Promise<RunningWorkers> {
  const options: StartWorkersOptions = {
    config: { snapshot: { interval: INTERVAL_MS }, health: undefined, baseDir: process.cwd() },
    db,
    redisUrl: testRedisUrl(),
    log: testLogger(),
    clusters: clusters.map((c) => c.handle),
    queueName: queue,
    prefix: queue,
    channelPrefix: queue,
    // No schedule: a cluster is observed exactly when the test asks for a snapshot.
    schedule: false,
  };
  return startWorkers(options);
}

async function refresh(cluster: string): Promise<void> {
  const result = await gqlData<{ refreshCluster: { written: boolean; outcome: string } }>(
    api.url,
    `mutation { refreshCluster(cluster: "${cluster}") { written outcome } }`,
    {},
    admin,
  );
  expect(result.refreshCluster).toEqual({ written: true, outcome: 'ok' });
}

interface Gate {
  passed: boolean;
  reason: string;
  staleReason: string | null;
  message: string;
}
const GATE =
  'query($phase: PhaseRef!) { gate(phase: $phase, status: Current, for: "1ms") { passed reason staleReason message } }';
const gate = async (cluster: string): Promise<Gate> =>
  (await gqlData<{ gate: Gate }>(api.url, GATE, { phase: { cluster, namespace: 'team-0', name: 'phase-0' } }, admin))
    .gate;

interface PhaseState {
  status: string;
  stale: boolean;
  staleReason: string | null;
}
const PHASE =
  'query($cluster: String!) { phase(cluster: $cluster, namespace: "team-0", name: "phase-0") { id status stale staleReason } }';
const phase = async (cluster: string): Promise<PhaseState & { id: string }> =>
  (await gqlData<{ phase: PhaseState & { id: string } }>(api.url, PHASE, { cluster }, admin)).phase;

interface ClusterState {
  name: string;
  state: string;
  reachable: boolean | null;
  retired: boolean;
  lastObservedAt: string | null;
  snapshotInterval: string | null;
}
const clusters = async (): Promise<ClusterState[]> =>
  (
    await gqlData<{ clusters: ClusterState[] }>(
      api.url,
      '{ clusters { name state reachable retired lastObservedAt snapshotInterval } }',
      {},
      admin,
    )
  ).clusters;

beforeAll(async () => {
  database = await createTestDatabase('gql_unobserved');
  db = createDb(database.url, { poolSize: 4 });
  east = await startEmulatedCluster('east');
  west = await startEmulatedCluster('west');
  applyFleet(east.emulator, { phases: 1, resourcesPerPhase: 2 });
  applyFleet(west.emulator, { phases: 1, resourcesPerPhase: 2 });
  admin = (await createToken(createApiTokenStore(db), { name: 'admin', scopes: ['admin'] })).secret;
  api = await startTestApi({
    db,
    anonymousRead: false,
    redisUrl: testRedisUrl(),
    channelPrefix: queue,
    snapshotQueue: { name: queue, prefix: queue },
  });
  workers = await start([east, west]);
});

afterAll(async () => {
  await api?.close();
  await workers?.close();
  await east?.close();
  await west?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('a cluster nobody reads', () => {
  let lastObservedAt: Date;
  /** The unobserved span the tick after it recorded. */
  let span: { from: number; to: number };

  it('is stale (UNOBSERVED) once no snapshot completed within its bound, and its gate does not pass', async () => {
    await refresh('east');
    // Read just now: fresh, and the gate passes.
    expect(await phase('east')).toMatchObject({ status: 'Current', stale: false, staleReason: null });
    expect((await clusters()).find((c) => c.name === 'east')).toMatchObject({
      state: 'OBSERVED',
      reachable: true,
      retired: false,
      snapshotInterval: '2s',
    });

    // Every worker stops while the API runs: nothing reads the cluster any more.
    await workers?.close();
    workers = undefined;
    await vi.waitFor(async () => expect((await gate('east')).reason).toBe('STALE'), { timeout: 30_000, interval: 250 });

    const answer = await gate('east');
    expect(answer).toMatchObject({ passed: false, reason: 'STALE', staleReason: 'UNOBSERVED' });
    expect(answer.message).toMatch(/cluster east is unobserved: no snapshot of it completed since \d{4}-/);
    expect(await phase('east')).toMatchObject({ status: 'Current', stale: true, staleReason: 'UNOBSERVED' });
    const cluster = (await clusters()).find((c) => c.name === 'east') as ClusterState;
    expect(cluster).toMatchObject({ state: 'UNOBSERVED', reachable: null, retired: false });
    lastObservedAt = new Date(cluster.lastObservedAt as string);
  });

  it('statusAt inside the span is not Current-and-fresh, before and after the next tick records it', async () => {
    const { id } = await phase('east');
    const inSpan = new Date(lastObservedAt.getTime() + BOUND_MS + 1);
    const statusAt = async (at: Date) =>
      (
        await gqlData<{ phase: { statusAt: { status: string; stale: boolean; staleReason: string | null } | null } }>(
          api.url,
          'query($id: ID!, $at: DateTime!) { phase(id: $id) { statusAt(at: $at) { status stale staleReason } } }',
          { id, at: at.toISOString() },
          admin,
        )
      ).phase.statusAt;
    // Still unobserved: the open interval is vouched for only until the bound passed.
    expect(await statusAt(inSpan)).toEqual({ status: 'Current', stale: true, staleReason: 'UNOBSERVED' });
    expect(await statusAt(new Date(lastObservedAt.getTime() + 1))).toEqual({
      status: 'Current',
      stale: false,
      staleReason: null,
    });

    // phaselog comes back: the first tick records the span it missed.
    workers = await start([east, west]);
    await refresh('east');
    expect(await phase('east')).toMatchObject({ status: 'Current', stale: false, staleReason: null });
    expect(await statusAt(inSpan)).toEqual({ status: 'Current', stale: true, staleReason: 'UNOBSERVED' });

    type Interval = { status: string; stale: boolean; staleReason: string | null; from: string; to: string | null };
    const history = await gqlData<{ phase: { history: { edges: { node: Interval }[] } } }>(
      api.url,
      'query($id: ID!, $from: DateTime!) { phase(id: $id) { history(from: $from) { edges { node { status stale staleReason from to } } } } }',
      { id, from: new Date(0).toISOString() },
      admin,
    );
    const intervals = history.phase.history.edges.map((e) => e.node);
    expect(intervals.map((i) => [i.status, i.staleReason])).toEqual([
      ['Current', null],
      ['Current', 'UNOBSERVED'],
      ['Current', null],
    ]);
    expect(intervals[1]).toMatchObject({
      stale: true,
      from: new Date(lastObservedAt.getTime() + BOUND_MS).toISOString(),
    });
    span = { from: Date.parse(intervals[1]?.from as string), to: Date.parse(intervals[1]?.to as string) };
    // The change log (and so the live feed) says so too.
    const changes = await gqlData<{
      statusChanges: { edges: { node: { fromStatus: string | null; toStatus: string; message: string } }[] };
    }>(
      api.url,
      '{ statusChanges(filter: { cluster: "east", scopes: [cluster] }) { edges { node { fromStatus toStatus message } } } }',
      {},
      admin,
    );
    expect(changes.statusChanges.edges.map((e) => e.node)).toEqual([
      { fromStatus: null, toStatus: 'Reachable', message: '' },
      {
        fromStatus: 'Unobserved',
        toStatus: 'Reachable',
        message: `not observed from ${intervals[1]?.from} until this snapshot`,
      },
    ]);
    // A gate measures fresh reads only: the run starts again after the span.
    expect(await gate('east')).toMatchObject({ passed: true, reason: 'HELD' });
  });

  it('counts the unobserved span as unobserved in audit reports, not as available', async () => {
    type Figures = {
      phases: { cluster: string; unobservedMs: number; observedMs: number; timeInStatus: { Current: number } }[];
    };
    const report = await gqlData<{ auditReport: { figures: Figures } }>(
      api.url,
      'query($from: DateTime!) { auditReport(from: $from, filter: { clusters: ["east"] }) { figures } }',
      { from: new Date(lastObservedAt.getTime() - 1).toISOString() },
      admin,
    );
    const figures = report.auditReport.figures.phases[0];
    // The span is unobserved time: neither Current nor observed (so not in the availability).
    expect(figures?.unobservedMs).toBeGreaterThanOrEqual(span.to - span.from);
    expect(figures?.timeInStatus.Current).toBe(figures?.observedMs);
  });

  it('is retired when a worker starts without it, and configured again when one starts with it', async () => {
    await workers?.close();
    workers = await start([west]);
    const listed = await clusters();
    expect(listed.find((c) => c.name === 'east')).toMatchObject({ state: 'RETIRED', retired: true, reachable: null });
    expect(listed.find((c) => c.name === 'west')).toMatchObject({ retired: false });
    expect(await phase('east')).toMatchObject({ status: 'Current', stale: true, staleReason: 'RETIRED' });
    const answer = await gate('east');
    expect(answer).toMatchObject({ passed: false, reason: 'STALE', staleReason: 'RETIRED' });
    expect(answer.message).toContain('cluster east is retired');
    // The list of phases says so too.
    const phases = await gqlData<{
      phases: { edges: { node: { cluster: string; stale: boolean; staleReason: string | null } }[] };
    }>(api.url, '{ phases(filter: { cluster: "east" }) { edges { node { cluster stale staleReason } } } }', {}, admin);
    expect(phases.phases.edges.map((e) => e.node)).toEqual([{ cluster: 'east', stale: true, staleReason: 'RETIRED' }]);

    await workers.close();
    workers = await start([east, west]);
    expect((await clusters()).find((c) => c.name === 'east')).toMatchObject({ retired: false });
    await refresh('east');
    expect(await phase('east')).toMatchObject({ stale: false, staleReason: null });
  });
});
