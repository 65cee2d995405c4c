/**
 * The GraphQL API over a seeded history store: throughput and latency of a phase list page (with
 * summaries, since and worst resources), a history page, statusAt (with resources) and a gate, each
 * under the closed-loop load generator. Compare with the `http-apollo` baseline (bare Apollo
 * `{ __typename }`); this server runs in the load generator's process (the baseline's runs in a
 * child), so the ratio is a lower bound.
 *
 *   node --import tsx bench/graphql-api.ts [--phases 1000] [--resources 10] [--intervals 100] [--requests 3000] [--concurrency 8]
 */
import pg from 'pg';
import { pino } from 'pino';
import { createApiWiring } from '../src/graphql/api-wiring.ts';
import { createSchema } from '../src/graphql/schema.ts';
import { createGraphqlServer } from '../src/graphql/server.ts';
import { createHttpServer } from '../src/http/server.ts';
import { createClusterStore } from '../src/store/cluster-store.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { createDb } from '../src/store/prisma.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { runHttpLoad } from './lib/http-load.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import type { Figures } from './lib/types.ts';

/** Options of {@link run}. */
export interface GraphqlApiBenchOptions {
  /** @default 1000 */
  phases?: number;
  /** Resources per phase. @default 10 */
  resources?: number;
  /** Status intervals per phase and per resource (10 minutes each, ending now). @default 100 */
  intervals?: number;
  /** Timed requests per query. @default 3000 */
  requests?: number;
  /** @default 8 */
  concurrency?: number;
}

/** Seeds phases whose status alternates Current/InProgress every 10 minutes up to now, resources likewise. */
export async function seed(url: string, phases: number, resources: number, intervals: number): Promise<Date> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const now = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const start = new Date(now.getTime() - intervals * 600_000);
  try {
    await client.query(`INSERT INTO "Cluster" ("name", "reachable", "lastGoodReadAt") VALUES ('bench-a', true, $1), ('bench-b', true, $1)`, [now]);
    await client.query(
      `INSERT INTO "Phase" ("clusterId", "sourceKind", "namespace", "name", "firstSeenAt", "lastSeenAt")
       SELECT (SELECT min("id") FROM "Cluster") + (g % 2), 'cli-utils', 'team-' || (g / 50), 'phase-' || lpad(g::text, 5, '0'), $1, $1 FROM generate_series(0, $2 - 1) g`,
      [start, phases],
    );
    await client.query(
      `INSERT INTO "PhaseStatusInterval" ("phaseId", "status", "message", "summary", "worstResource", "from", "to")
       SELECT p."id", CASE WHEN i % 2 = 0 THEN 'InProgress' ELSE 'Current' END, 'bench',
              CASE WHEN i % 2 = 0 THEN jsonb_build_object('InProgress', 1, 'Current', $3::int - 1) ELSE jsonb_build_object('Current', $3::int) END,
              CASE WHEN i % 2 = 0 THEN 'apps/Deployment/' || p."namespace" || '/' || p."name" || '-0' END,
              $1::timestamptz + i * interval '10 minutes', CASE WHEN i = $2 - 1 THEN NULL ELSE $1::timestamptz + (i + 1) * interval '10 minutes' END
       FROM "Phase" p, generate_series(0, $2 - 1) i`,
      [start, intervals, resources],
    );
    await client.query(
      `INSERT INTO "ResourceStatusInterval" ("phaseId", "resourceKey", "status", "presence", "from", "to")
       SELECT p."id", 'apps/Deployment/' || p."namespace" || '/' || p."name" || '-' || r, CASE WHEN r = 0 AND i % 2 = 0 THEN 'InProgress' ELSE 'Current' END, 'Present',
              $1::timestamptz + i * interval '10 minutes', CASE WHEN i = $2 - 1 THEN NULL ELSE $1::timestamptz + (i + 1) * interval '10 minutes' END
       FROM "Phase" p, generate_series(0, $3 - 1) r, generate_series(0, $2 - 1) i`,
      [start, intervals, resources],
    );
    await client.query(
      `INSERT INTO "StatusChange" ("at", "clusterId", "phaseId", "scope", "fromStatus", "toStatus")
       SELECT $1::timestamptz + i * interval '10 minutes', p."clusterId", p."id", 'phase', 'Current', 'InProgress' FROM "Phase" p, generate_series(0, $2 - 1) i ORDER BY 1`,
      [start, intervals],
    );
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
  return start;
}

/** Runs the benchmark and returns its figures. */
export async function run(options: GraphqlApiBenchOptions = {}): Promise<Figures> {
  const phases = options.phases ?? 1000;
  const resources = options.resources ?? 10;
  const intervals = options.intervals ?? 100;
  const scratch = await createScratchDatabase('graphql_api');
  const log = pino({ level: 'silent' });
  const db = createDb(scratch.connectionString, { poolSize: 10 });
  try {
    await migrateDatabase(scratch.connectionString);
    const seedStarted = Date.now();
    const start = await seed(scratch.connectionString, phases, resources, intervals);
    const seedMs = Date.now() - seedStarted;
    const wiring = await createApiWiring({ db, config: { server: { host: '127.0.0.1' }, api: { anonymousRead: true } }, log });
    const http = createHttpServer({ host: '127.0.0.1', port: 0, log, readiness: {} });
    const clusters = createClusterStore(db);
    const graphql = await createGraphqlServer({
      schema: createSchema(), httpServer: http.server, path: '/graphql', log,
      authenticate: (header) => wiring.authenticator.authenticate(header),
      context: () => ({ about: { version: 'bench', role: 'api', startedAt: new Date() }, clusters, read: wiring.read, loaders: wiring.newLoaders() }),
    });
    http.mount('/graphql', graphql.handle);
    await http.listen();
    const url = `${http.url}/graphql`;
    const mid = new Date(start.getTime() + Math.floor(intervals / 2) * 600_000 + 1).toISOString();
    const queries: Record<string, string> = {
      'phase list (50, summary + since + worst)': '{ phases(first: 50) { edges { node { name status since summary { current total } worstResource { key status since } } } } }',
      'history page (100 intervals)': `{ phase(cluster: "bench-a", namespace: "team-0", name: "phase-00000") { history(from: "${start.toISOString()}", first: 100) { edges { node { status from to } } } } }`,
      [`statusAt (${resources} resources)`]: `{ phase(cluster: "bench-a", namespace: "team-0", name: "phase-00000") { statusAt(at: "${mid}") { status resources { edges { node { key status since } } } } } }`,
      'gate (10m)': '{ gate(phase: { cluster: "bench-a", namespace: "team-0", name: "phase-00000" }, for: "10m") { passed reason heldSince } }',
    };
    const figures: Figures = { phases, 'resources per phase': resources, 'intervals per phase': intervals, 'resource intervals': phases * resources * intervals, 'seed s': Math.round(seedMs / 100) / 10 };
    for (const [name, query] of Object.entries(queries)) {
      const result = await runHttpLoad({ url, method: 'POST', body: JSON.stringify({ query }), concurrency: options.concurrency ?? 8, requests: options.requests ?? 3000, warmup: 100, maxMs: 60_000 });
      figures[`${name} requests/s`] = result.requestsPerSecond;
      figures[`${name} p50 ms`] = result.p50Ms;
      figures[`${name} p95 ms`] = result.p95Ms;
      figures[`${name} errors`] = result.errors;
      if (name.startsWith('phase list')) figures['requests/s'] = result.requestsPerSecond;
    }
    await graphql.closeWebSockets();
    await http.close(1000);
    await graphql.stop();
    await wiring.close();
    return figures;
  } finally {
    await db.$disconnect();
    await scratch.drop();
  }
}

if (isMain(import.meta.url)) {
  printFigures('GraphQL API over a seeded history', await run({
    phases: readNumberFlag('phases'), resources: readNumberFlag('resources'), intervals: readNumberFlag('intervals'),
    requests: readNumberFlag('requests'), concurrency: readNumberFlag('concurrency'),
  }));
}
