/**
 * `/metrics` over HTTP when its database read fails: Prometheus records a failed scrape (503), and
 * the answer carries no error text (a driver's message names hosts and users).
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createRequestGuard } from '../../../src/http/origin.ts';
import { createHttpServer, type HttpServer } from '../../../src/http/server.ts';
import { registerFleetMetrics } from '../../../src/metrics/fleet-metrics.ts';
import { createMetricsHandler } from '../../../src/metrics/handler.ts';
import { createMetrics } from '../../../src/metrics/registry.ts';

const log = pino({ level: 'silent' });
let server: HttpServer | undefined;
afterEach(async () => server?.close(100));

async function serve(read: () => Promise<never[]>): Promise<string> {
  const metrics = createMetrics();
  registerFleetMetrics(metrics, read);
  server = createHttpServer({ host: '127.0.0.1', port: 0, log, readiness: {}, metrics: createMetricsHandler({ metrics, log }), guard: createRequestGuard({ loopbackBind: true, allowedHosts: [], allowedOrigins: [] }) });
  await server.listen();
  return `${server.url}/metrics`;
}

describe('/metrics over HTTP', () => {
  it('answers 503 with no error text when the fleet cannot be read', async () => {
    const url = await serve(async () => {
      throw new Error('connect ECONNREFUSED db.internal:5432 user=phaselog password=hunter2');
    });
    const res = await fetch(url);
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(body).toBe('metrics unavailable\n');
  });

  it('is exempt from the Host/Origin guard, as the probes are; other methods than GET and HEAD are refused', async () => {
    const url = await serve(async () => []);
    const res = await fetch(url, { headers: { host: 'evil.example' } });
    expect(res.status).toBe(200);
    // The same Host elsewhere on the server is refused.
    expect((await fetch(url.replace('/metrics', '/graphql'), { headers: { host: 'evil.example' } })).status).toBeGreaterThanOrEqual(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('# TYPE phaselog_phase_status gauge');
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
  });
});
