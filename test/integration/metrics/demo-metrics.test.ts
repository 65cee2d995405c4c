/**
 * `/metrics` while the demo's scenario runs (at 4x speed), as a new user's Prometheus would see it:
 * staging's `worker` phase goes Failed when its pod crash-loops, with the failing resource counted
 * and the time it turned Failed, and comes back Current once the pod recovers; every other phase
 * keeps its one status series throughout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, type Demo } from '../../../src/demo/index.ts';
import { createHttpServer, type HttpServer } from '../../../src/http/server.ts';
import { registerFleetMetrics } from '../../../src/metrics/fleet-metrics.ts';
import { createMetricsHandler } from '../../../src/metrics/handler.ts';
import { createMetrics } from '../../../src/metrics/registry.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createFleetStateReader } from '../../../src/store/read-fleet-state.ts';
import { startWorkers, type RunningWorkers } from '../../../workers/start-workers.ts';
import { testRedisUrl, uniquePrefix } from '../../helpers/services.ts';
import { createTestDatabase, testLogger, waitUntil, type TestDatabase } from '../snapshot/helpers.ts';

const queue = uniquePrefix('demo-metrics');
const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-demo-metrics-'));
let database: TestDatabase;
let db: Db;
let demo: Demo;
let workers: RunningWorkers;
let server: HttpServer;

/** `name`'s samples as `labels -> value`, label values without escapes (the demo's names have none). */
function samples(body: string, name: string): { labels: Record<string, string>; value: number }[] {
  return body
    .split('\n')
    .map((line) => /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line))
    .filter((m): m is RegExpExecArray => m?.[1] === name)
    .map((m) => ({
      labels: Object.fromEntries(
        [...(m[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map(([, k, v]) => [k as string, v as string]),
      ),
      value: Number(m[3]),
    }));
}

const worker = (body: string, name: string) =>
  samples(body, name).filter((s) => s.labels['cluster'] === 'demo-staging' && s.labels['phase'] === 'worker');
const scrape = async (): Promise<string> => (await fetch(`${server.url}/metrics`)).text();

beforeAll(async () => {
  database = await createTestDatabase('demo_metrics');
  db = createDb(database.url, { poolSize: 4 });
  demo = await startDemo({ log: testLogger(), stateDir, speed: 4, cycleGapMs: 600_000 });
  const metrics = createMetrics();
  registerFleetMetrics(metrics, createFleetStateReader(db));
  workers = await startWorkers({
    config: { snapshot: { interval: 250, jitter: 0 }, health: undefined, baseDir: process.cwd() },
    db,
    redisUrl: testRedisUrl(),
    log: testLogger(),
    clusters: demo.clusters,
    observe: { owners: demo.owners },
    queueName: queue,
    prefix: queue,
    channelPrefix: queue,
    metrics,
  });
  server = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    log: testLogger(),
    readiness: {},
    metrics: createMetricsHandler({ metrics, log: testLogger() }),
  });
  await server.listen();
}, 60_000);

afterAll(async () => {
  await server?.close(1000);
  await workers?.close();
  await demo?.close();
  await db?.$disconnect();
  await database?.drop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe('/metrics over the demo', () => {
  it("shows staging's worker phase Failed while its pod crash-loops, then Current again", async () => {
    let body = '';
    await waitUntil(
      async () => worker((body = await scrape()), 'phaselog_phase_status').some((s) => s.labels['status'] === 'Failed'),
      'the worker phase Failed',
      45_000,
    );
    const failedAt = Date.now() / 1000;
    expect(worker(body, 'phaselog_phase_status')).toEqual([
      {
        labels: {
          cluster: 'demo-staging',
          namespace: 'flux-system',
          phase: 'worker',
          source: 'flux',
          status: 'Failed',
        },
        value: 1,
      },
    ]);
    // Its failing pod counted, and when it turned Failed.
    expect(worker(body, 'phaselog_phase_resources').find((s) => s.labels['status'] === 'Failed')?.value).toBe(1);
    const [changed] = worker(body, 'phaselog_phase_status_changed_timestamp_seconds');
    expect(changed?.value).toBeGreaterThan(failedAt - 30);
    expect(changed?.value).toBeLessThanOrEqual(failedAt);
    // Nine phases (four per cluster, and staging's LCM owner phase), one status series each, and both clusters reachable.
    expect(samples(body, 'phaselog_phase_status')).toHaveLength(9);
    expect(
      samples(body, 'phaselog_cluster_reachable')
        .map((s) => [s.labels['cluster'], s.value])
        .sort(),
    ).toEqual([
      ['demo-prod', 1],
      ['demo-staging', 1],
    ]);

    await waitUntil(
      async () =>
        worker((body = await scrape()), 'phaselog_phase_status').some((s) => s.labels['status'] === 'Current'),
      'the worker phase Current again',
      60_000,
    );
    expect(worker(body, 'phaselog_phase_status')).toHaveLength(1);
    // A Current phase has no detail series.
    expect(worker(body, 'phaselog_phase_resources')).toEqual([]);
    expect(worker(body, 'phaselog_phase_status_changed_timestamp_seconds')).toEqual([]);
  }, 120_000);
});
