/**
 * `/metrics` end to end: a real worker records an emulated cluster into PostgreSQL, and the scrape
 * shows each phase's current status, the cluster's reachability, and the machinery counters moving.
 * With `metrics.token` set, a scrape without it gets 401 and nothing else; no scrape carries secrets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createHttpServer, type HttpServer } from '../../../src/http/server.ts';
import { registerFleetMetrics } from '../../../src/metrics/fleet-metrics.ts';
import { createMetricsHandler } from '../../../src/metrics/handler.ts';
import { createMetrics } from '../../../src/metrics/registry.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createFleetStateReader } from '../../../src/store/read-fleet-state.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { testRedisUrl, uniquePrefix } from '../../helpers/services.ts';
import { applyFleet, readyDeployment, readyStatus, rollingStatus } from '../snapshot/fleet.ts';
import {
  createTestDatabase,
  startEmulatedCluster,
  testLogger,
  waitUntil,
  type EmulatedCluster,
  type TestDatabase,
} from '../snapshot/helpers.ts';

const METRICS_TOKEN = 'scrape-token-0123456789abcdef';
const queue = uniquePrefix('metrics');
let database: TestDatabase;
let db: Db;
let cluster: EmulatedCluster;
let workers: RunningWorkers;
let open: HttpServer;
let guarded: HttpServer;
let apiSecret: string;

/** One sample: a series' labels and value. */
interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of `name` in a text-format body (label values here hold no escaped quotes). */
function samples(body: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of body.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map(([, k, v]) => [k as string, v as string]),
    );
    out.push({ labels, value: Number(match[3]) });
  }
  return out;
}

const scrape = async (server: HttpServer = open, authorization?: string): Promise<{ status: number; body: string }> => {
  const res = await fetch(`${server.url}/metrics`, authorization === undefined ? {} : { headers: { authorization } });
  return { status: res.status, body: await res.text() };
};

const phaseStatus = (body: string, phase: string): string[] =>
  samples(body, 'phaselog_phase_status')
    .filter((s) => s.labels['cluster'] === 'east' && s.labels['phase'] === phase && s.value === 1)
    .map((s) => s.labels['status'] as string);
const sum = (list: Sample[]): number => list.reduce((total, s) => total + s.value, 0);

/** Scrapes until `ok` holds on a body (generous deadline: snapshots run every 300 ms). */
async function scrapeUntil(what: string, ok: (body: string) => boolean): Promise<string> {
  let body = '';
  await waitUntil(async () => ok((body = (await scrape()).body)), what, 30_000);
  return body;
}

beforeAll(async () => {
  database = await createTestDatabase('metrics');
  db = createDb(database.url, { poolSize: 4 });
  cluster = await startEmulatedCluster('east');
  applyFleet(cluster.emulator, { phases: 2, resourcesPerPhase: 3 });
  apiSecret = (await createToken(createApiTokenStore(db), { name: 'reader', scopes: ['read'] })).secret;
  const metrics = createMetrics();
  registerFleetMetrics(metrics, createFleetStateReader(db));
  workers = await startWorkers({
    config: { snapshot: { interval: 300, jitter: 0 }, health: undefined, baseDir: process.cwd() },
    db,
    redisUrl: testRedisUrl(),
    log: testLogger(),
    clusters: [cluster.handle],
    queueName: queue,
    prefix: queue,
    channelPrefix: queue,
    metrics,
  });
  const log = testLogger();
  open = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    log,
    readiness: {},
    metrics: createMetricsHandler({ metrics, log }),
  });
  guarded = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    log,
    readiness: {},
    metrics: createMetricsHandler({ metrics, log, token: METRICS_TOKEN }),
  });
  await open.listen();
  await guarded.listen();
}, 60_000);

afterAll(async () => {
  await open?.close(1000);
  await guarded?.close(1000);
  await workers?.close();
  await cluster?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('GET /metrics', () => {
  it("shows each phase's current status, and a Deployment rolling out turns its phase InProgress", async () => {
    // A snapshot is counted just after its transaction commits, so a scrape can see the state first.
    let body = await scrapeUntil(
      'both phases Current and a snapshot counted',
      (b) =>
        phaseStatus(b, 'phase-0').join() === 'Current' &&
        phaseStatus(b, 'phase-1').join() === 'Current' &&
        sum(samples(b, 'phaselog_snapshot_duration_seconds_count')) > 0,
    );
    expect(samples(body, 'phaselog_cluster_reachable')).toEqual([{ labels: { cluster: 'east' }, value: 1 }]);
    expect(samples(body, 'phaselog_phase_stale')).toEqual([]);
    const changesBefore = sum(samples(body, 'phaselog_status_changes_total'));
    const snapshotsBefore = sum(samples(body, 'phaselog_snapshot_duration_seconds_count'));

    cluster.emulator.apply([readyDeployment('team-0', 'app-1-2', { status: rollingStatus() })]);
    body = await scrapeUntil(
      'phase-1 InProgress and its change counted',
      (b) =>
        phaseStatus(b, 'phase-1').join() === 'InProgress' &&
        sum(samples(b, 'phaselog_status_changes_total')) > changesBefore,
    );
    // One series per phase, for its current status only: no Current series for phase-1 any more.
    expect(phaseStatus(body, 'phase-0')).toEqual(['Current']);
    expect(samples(body, 'phaselog_phase_status').filter((s) => s.labels['phase'] === 'phase-1')).toEqual([
      {
        labels: {
          cluster: 'east',
          namespace: 'team-0',
          phase: 'phase-1',
          source: expect.any(String),
          status: 'InProgress',
        },
        value: 1,
      },
    ]);
    const resources = samples(body, 'phaselog_phase_resources').filter((s) => s.labels['phase'] === 'phase-1');
    expect(Object.fromEntries(resources.map((s) => [s.labels['status'], s.value]))).toEqual({
      Current: 2,
      InProgress: 1,
    });
    const [changed] = samples(body, 'phaselog_phase_status_changed_timestamp_seconds').filter(
      (s) => s.labels['phase'] === 'phase-1',
    );
    expect(changed?.value).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(changed?.value).toBeLessThanOrEqual(Date.now() / 1000);
    // Snapshots go on being timed, by cluster and kind.
    expect(sum(samples(body, 'phaselog_snapshot_duration_seconds_count'))).toBeGreaterThan(snapshotsBefore);
    expect(
      samples(body, 'phaselog_snapshot_duration_seconds_count').every(
        (s) => s.labels['cluster'] === 'east' && ['scheduled', 'live'].includes(s.labels['kind'] ?? ''),
      ),
    ).toBe(true);
    // The shared queue and this worker's own queue, where the snapshots of the clusters it owns run.
    const queues = samples(body, 'phaselog_queue_jobs');
    expect(new Set(queues.map((s) => s.labels['queue'])).size).toBe(2);
    for (const name of new Set(queues.map((s) => s.labels['queue'])))
      expect(
        queues
          .filter((s) => s.labels['queue'] === name)
          .map((s) => s.labels['state'])
          .sort(),
      ).toEqual(['active', 'delayed', 'failed', 'waiting']);
    expect(queues.some((s) => s.labels['queue']?.endsWith('.owner'))).toBe(true);
    expect(samples(body, 'phaselog_worker_owned_clusters')).toEqual([{ labels: {}, value: 1 }]);
    expect(samples(body, 'phaselog_process_resident_memory_bytes')[0]?.value).toBeGreaterThan(0);
    expect(
      sum(
        samples(body, 'phaselog_kube_requests_total').filter(
          (s) => s.labels['cluster'] === 'east' && s.labels['code'] === '200',
        ),
      ),
    ).toBeGreaterThan(0);

    cluster.emulator.apply([readyDeployment('team-0', 'app-1-2', { status: readyStatus() })]);
    await scrapeUntil('phase-1 Current again', (b) => phaseStatus(b, 'phase-1').join() === 'Current');
  }, 60_000);

  it('shows the cluster unreachable and its phases stale while its API resets connections, and reachable again after', async () => {
    const remove = cluster.emulator.injectFault({ effect: 'reset' });
    try {
      const body = await scrapeUntil(
        'east unreachable and an unreachable snapshot counted',
        (b) =>
          samples(b, 'phaselog_cluster_reachable').some((s) => s.value === 0) &&
          samples(b, 'phaselog_snapshot_duration_seconds_count').some(
            (s) => s.labels['outcome'] === 'unreachable' && s.value > 0,
          ),
      );
      // Requests that got no answer are counted under code "error".
      expect(
        samples(body, 'phaselog_kube_requests_total').find((s) => s.labels['code'] === 'error')?.value,
      ).toBeGreaterThan(0);
      expect(samples(body, 'phaselog_cluster_reachable')).toEqual([{ labels: { cluster: 'east' }, value: 0 }]);
      // The last known status is still shown, marked stale.
      expect(phaseStatus(body, 'phase-0')).toEqual(['Current']);
      expect(
        samples(body, 'phaselog_phase_stale')
          .map((s) => s.labels['phase'])
          .sort(),
      ).toEqual(['phase-0', 'phase-1']);
    } finally {
      remove();
    }
    const body = await scrapeUntil(
      'east reachable again, its phases fresh',
      (b) =>
        samples(b, 'phaselog_cluster_reachable').some((s) => s.value === 1) &&
        samples(b, 'phaselog_phase_stale').length === 0,
    );
    expect(phaseStatus(body, 'phase-0')).toEqual(['Current']);
  }, 60_000);

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer not-the-metrics-token'],
    ['the token with a suffix', `Bearer ${METRICS_TOKEN}x`],
    ['the token as Basic credentials', `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}`],
    ['an API token instead of the metrics token', 'API'],
  ])('with metrics.token set, refuses a scrape with %s: 401 and no body', async (_case, authorization) => {
    const { status, body } = await scrape(guarded, authorization === 'API' ? `Bearer ${apiSecret}` : authorization);
    expect(status).toBe(401);
    expect(body).toBe('');
  });

  it('with metrics.token set, answers a scrape bearing it; no scrape carries the database URL, API tokens or the metrics token', async () => {
    const { status, body } = await scrape(guarded, `Bearer ${METRICS_TOKEN}`);
    expect(status).toBe(200);
    expect(samples(body, 'phaselog_cluster_reachable')).toHaveLength(1);
    const { password } = new URL(database.url);
    for (const secret of [database.url, apiSecret, METRICS_TOKEN, testRedisUrl(), ...(password ? [password] : [])]) {
      expect(body).not.toContain(secret);
      expect((await scrape()).body).not.toContain(secret);
    }
    expect(body).not.toMatch(/postgres(ql)?:\/\//);
  });
});
