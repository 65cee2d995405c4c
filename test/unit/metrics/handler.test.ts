/**
 * `/metrics` over HTTP when its database read fails: Prometheus records a failed scrape (503), and
 * the answer carries no error text (a driver's message names hosts and users).
 */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequestGuard } from '../../../src/http/origin.ts';
import { createHttpServer, type HttpServer } from '../../../src/http/server.ts';
import { registerFleetMetrics } from '../../../src/metrics/fleet-metrics.ts';
import { createMetricsHandler } from '../../../src/metrics/handler.ts';
import { createMetrics } from '../../../src/metrics/registry.ts';
import type { FleetSeries, FleetStateReader } from '../../../src/store/read-fleet-state.ts';

const log = pino({ level: 'silent' });
let server: HttpServer | undefined;
afterEach(async () => server?.close(100));

const NO_SERIES: FleetSeries = { status: '', stale: '', changed: '', resources: '' };

/** A fleet of one cluster with `phases` phases, or one whose read fails with `error`. */
function fleet(phases: number, error?: Error): FleetStateReader {
  return {
    clusters: async () => {
      if (error) throw error;
      return [{ id: 1, name: 'east', reachable: true, lastObservedAt: new Date(), snapshotIntervalMs: 30_000 }];
    },
    series: async () => ({
      ...NO_SERIES,
      status: Array.from(
        { length: phases },
        (_, i) =>
          `phaselog_phase_status{cluster="east",namespace="shop",phase="p${i}",source="cli-utils",status="Current"} 1`,
      ).join('\n'),
    }),
  };
}

/** A raw GET, so the answer's bytes are seen as sent (fetch would decompress them). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

async function serve(reader: FleetStateReader): Promise<string> {
  const metrics = createMetrics();
  registerFleetMetrics(metrics, reader);
  server = createHttpServer({
    host: '127.0.0.1',
    port: 0,
    log,
    readiness: {},
    metrics: createMetricsHandler({ metrics, log }),
    guard: createRequestGuard({ loopbackBind: true, allowedHosts: [], allowedOrigins: [] }),
  });
  await server.listen();
  return `${server.url}/metrics`;
}

describe('/metrics over HTTP', () => {
  it('answers 503 with no error text when the fleet cannot be read', async () => {
    const url = await serve(
      fleet(0, new Error('connect ECONNREFUSED db.internal:5432 user=phaselog password=hunter2')),
    );
    const res = await fetch(url);
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(body).toBe('metrics unavailable\n');
  });

  it('is exempt from the Host/Origin guard, as the probes are; other methods than GET and HEAD are refused', async () => {
    const url = await serve(fleet(1));
    const res = await fetch(url, { headers: { host: 'evil.example' } });
    expect(res.status).toBe(200);
    // The same Host elsewhere on the server is refused.
    expect(
      (await fetch(url.replace('/metrics', '/graphql'), { headers: { host: 'evil.example' } })).status,
    ).toBeGreaterThanOrEqual(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('# TYPE phaselog_phase_status gauge');
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  });

  it('gzips the answer for a scraper that asks for it (Prometheus does), and only then', async () => {
    const url = await serve(fleet(2000));
    const plain = await rawGet(url, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    const text = plain.body.toString('utf8');
    expect(text.split('\n').filter((l) => l.startsWith('phaselog_phase_status{'))).toHaveLength(2000);
    const gzipped = await rawGet(url, { 'accept-encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toBe('accept-encoding');
    expect(gzipped.body.length).toBeLessThan(plain.body.length / 5);
    // Same series once decompressed (process metrics' values move between two scrapes; the fleet's do not).
    const fleetLines = (body: string) =>
      body.split('\n').filter((l) => l.startsWith('phaselog_phase_') || l.startsWith('phaselog_cluster_'));
    expect(fleetLines(gunzipSync(gzipped.body).toString('utf8'))).toEqual(fleetLines(text));
    // A refusal of gzip (q=0) or an encoding phaselog does not speak gets plain text.
    for (const refused of ['gzip;q=0', 'br', 'identity'])
      expect((await rawGet(url, { 'accept-encoding': refused })).headers['content-encoding']).toBeUndefined();
  });
});
