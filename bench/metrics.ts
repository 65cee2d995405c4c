/**
 * `/metrics` over a seeded fleet (issue #24: at 50,000 phases it should answer within 200 ms and
 * 10 MB): the phase state series written by PostgreSQL, measured over HTTP as Prometheus scrapes it
 * (asking for gzip) and as a client that does not, one scrape at a time and 4 at once (coalesced).
 *
 *   node --import tsx bench/metrics.ts --phases 50000
 */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { createHttpServer } from '../src/http/server.ts';
import { registerFleetMetrics } from '../src/metrics/fleet-metrics.ts';
import { createMetricsHandler } from '../src/metrics/handler.ts';
import { createMetrics } from '../src/metrics/registry.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { createDb } from '../src/store/prisma.ts';
import { createFleetStateReader } from '../src/store/read-fleet-state.ts';
import { seed } from './graphql-api.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, nowMs, percentile, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';

export interface MetricsBenchOptions {
  /** @default 50000 */
  phases?: number;
  /** Scrapes measured one at a time. @default 20 */
  scrapes?: number;
}

export async function run(options: MetricsBenchOptions = {}): Promise<Figures> {
  const phases = options.phases ?? 50_000;
  const scrapes = options.scrapes ?? 20;
  const scratch = await createScratchDatabase('metrics');
  const db = createDb(scratch.connectionString);
  const log = pino({ level: 'silent' });
  try {
    await migrateDatabase(scratch.connectionString);
    const seedStarted = nowMs();
    // 3 resources and 2 status intervals a phase: /metrics reads current state only, history size does not matter.
    await seed(scratch.connectionString, phases, 3, 2, { clusters: 10 });
    const seedMs = nowMs() - seedStarted;
    const metrics = createMetrics();
    registerFleetMetrics(metrics, createFleetStateReader(db));
    const http = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      log,
      readiness: {},
      metrics: createMetricsHandler({ metrics, log }),
    });
    await http.listen();
    try {
      /** One scrape, its time until the last byte, and the bytes as sent. */
      const scrape = (gzip: boolean): Promise<{ ms: number; wireBytes: number; body: string }> =>
        new Promise((resolve, reject) => {
          const started = nowMs();
          request(`${http.url}/metrics`, { headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              const ms = nowMs() - started;
              if (res.statusCode !== 200) return reject(new Error(`/metrics answered ${res.statusCode}`));
              const wire = Buffer.concat(chunks);
              resolve({
                ms,
                wireBytes: wire.length,
                body: (res.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire).toString('utf8'),
              });
            });
          })
            .on('error', reject)
            .end();
        });
      const measure = async (label: string): Promise<Figures> => {
        for (let i = 0; i < 3; i += 1) await scrape(true);
        const times: number[] = [];
        const plainTimes: number[] = [];
        let last = await scrape(true);
        let plain = await scrape(false);
        // Alternated, so both see the same load.
        for (let i = 0; i < scrapes; i += 1) {
          last = await scrape(true);
          times.push(last.ms);
          plain = await scrape(false);
          plainTimes.push(plain.ms);
        }
        // Process metrics move between two scrapes; the fleet's series must be the same.
        const fleetLines = (body: string) =>
          body.split('\n').filter((line) => line.startsWith('phaselog_phase_')).length;
        if (fleetLines(plain.body) !== fleetLines(last.body))
          throw new Error('the gzipped and plain answers hold different fleet series');
        const concurrent: number[] = [];
        for (let i = 0; i < 5; i += 1) {
          const started = nowMs();
          await Promise.all([scrape(true), scrape(true), scrape(true), scrape(true)]);
          concurrent.push(nowMs() - started);
        }
        const statusLines = last.body.split('\n').filter((line) => line.startsWith('phaselog_phase_status{')).length;
        if (statusLines !== phases)
          throw new Error(`expected ${phases} phaselog_phase_status series, got ${statusLines}`);
        return {
          [`${label}: series (lines)`]: last.body.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
            .length,
          [`${label}: body MB`]: round(Buffer.byteLength(last.body) / 1e6, 2),
          [`${label}: sent to Prometheus (gzip) MB`]: round(last.wireBytes / 1e6, 2),
          [`${label}: scrape ms median`]: round(median(times)),
          [`${label}: scrape ms p95`]: round(percentile(times, 0.95)),
          [`${label}: scrape without gzip ms median`]: round(median(plainTimes)),
          [`${label}: 4 concurrent scrapes, all answered ms median`]: round(median(concurrent)),
        };
      };
      // The seed leaves half the phases InProgress (each with its changed-time and resource series);
      // a healthy fleet is all Current, one line a phase.
      const half = await measure('half InProgress');
      await db.$executeRawUnsafe(`UPDATE "PhaseCurrentStatus" SET "status" = 'Current'`);
      const healthy = await measure('all Current');
      return { phases, 'seed s': round(seedMs / 1000), ...half, ...healthy };
    } finally {
      await http.close(1000);
    }
  } finally {
    await db.$disconnect();
    await scratch.drop();
  }
}

if (isMain(import.meta.url)) {
  printFigures(
    '/metrics over a seeded fleet',
    await run({ phases: readNumberFlag('phases'), scrapes: readNumberFlag('scrapes') }),
  );
}
