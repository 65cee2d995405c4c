/**
 * The GraphQL API (HTTP, the same pieces and limits app.ts wires) for the `graphql-api` benchmark, in
 * its own process so that the load generator does not share its event loop. Started by
 * bench/graphql-api.ts, which passes `cpuProfile` when PHASELOG_BENCH_CPU_PROF names a file, to see
 * where a request's time goes (the inspector profiles only the serving, not the start-up):
 *
 *   node --import tsx bench/graphql-api-server.ts '{"databaseUrl":"..."}'
 *
 * Sends `{ ready, url }` (the http:// URL of /graphql) once listening; closes on SIGTERM or when the
 * parent goes.
 */
// First, as in `phaselog start`: NODE_ENV=production unless set, before graphql-js loads.
import '../src/cli/node-env.ts';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { pino } from 'pino';
import { createApiWiring } from '../src/graphql/api-wiring.ts';
import { createSchema } from '../src/graphql/schema.ts';
import { createGraphqlServer } from '../src/graphql/server.ts';
import { createHttpServer } from '../src/http/server.ts';
import { createClusterStore } from '../src/store/cluster-store.ts';
import { createDb } from '../src/store/prisma.ts';
import { ensureUiBundle } from '../src/ui/bundle.ts';
import { createUiHandler } from '../src/ui/serve.ts';

/** What the coordinator passes. */
export interface GraphqlApiServerOptions {
  databaseUrl: string;
  /** Log level of the server (production default is info). @default 'info' */
  logLevel?: string;
  /** Write a CPU profile of the serving (not the start-up) to this file on shutdown. */
  cpuProfile?: string;
  /** Serve `phaseStatusChanged` from the changes published on this Redis (the ui-board benchmark's live board). */
  redisUrl?: string;
  /** The channel prefix those changes are published under. */
  channelPrefix?: string;
}

const options = JSON.parse(process.argv[2] ?? '{}') as GraphqlApiServerOptions;
// Logs go to /dev/null-like sink at the production level, so per-request logging costs what it costs.
const log = pino({ level: options.logLevel ?? 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
const db = createDb(options.databaseUrl, { poolSize: 10 });
const live = {
  ...(options.redisUrl === undefined ? {} : { redisUrl: options.redisUrl }),
  ...(options.channelPrefix === undefined ? {} : { channelPrefix: options.channelPrefix }),
};
const wiring = await createApiWiring({
  db,
  config: { server: { host: '127.0.0.1' }, api: { anonymousRead: false } },
  log,
  ...live,
});
const http = createHttpServer({ host: '127.0.0.1', port: 0, log, readiness: {} });
const clusters = createClusterStore(db);
const graphql = await createGraphqlServer({
  schema: createSchema(),
  httpServer: http.server,
  path: '/graphql',
  log,
  authenticate: (header) => wiring.authenticator.authenticate(header),
  introspection: true,
  limits: { maxDepth: 12, maxCost: 50_000 },
  context: () => ({
    about: { version: 'bench', role: 'api', startedAt: new Date() },
    clusters,
    read: wiring.read,
    loaders: wiring.newLoaders(),
  }),
});
http.mount('/graphql', graphql.handle);
// The web UI as `phaselog start` serves it, for the ui-board benchmark (bundled once when stale).
await ensureUiBundle();
http.fallback(createUiHandler());
await http.listen();
const profiler = options.cpuProfile === undefined ? undefined : new Session();
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
let closing = false;
const shutdown = () => {
  if (closing) return;
  closing = true;
  void (async () => {
    if (profiler && options.cpuProfile)
      writeFileSync(options.cpuProfile, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    await graphql.closeWebSockets();
    await http.close(1000);
    await graphql.stop();
    await wiring.close();
    await db.$disconnect();
  })().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
process.send?.({ ready: true, url: `${http.url}/graphql` });
