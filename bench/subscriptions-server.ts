/**
 * The GraphQL API (HTTP + graphql-ws, the same pieces app.ts wires) for the subscription fan-out
 * benchmark, in its own process so that the 1,000 clients do not share its event loop. Started by
 * bench/subscriptions.ts:
 *
 *   node --import tsx bench/subscriptions-server.ts '{"databaseUrl":"...","redisUrl":"...","channelPrefix":"..."}'
 *
 * Sends `{ ready, url }` (the ws:// URL) once listening; closes on SIGTERM or when the parent goes.
 */
import { pino } from 'pino';
import { createApiWiring } from '../src/graphql/api-wiring.ts';
import { createSchema } from '../src/graphql/schema.ts';
import { createGraphqlServer } from '../src/graphql/server.ts';
import { createHttpServer } from '../src/http/server.ts';
import { createClusterStore } from '../src/store/cluster-store.ts';
import { createDb } from '../src/store/prisma.ts';

/** What the coordinator passes. */
export interface SubscriptionsServerOptions {
  databaseUrl: string;
  redisUrl: string;
  channelPrefix: string;
}

const options = JSON.parse(process.argv[2] ?? '{}') as SubscriptionsServerOptions;
const log = pino({ level: 'error' }, pino.destination(2));
const db = createDb(options.databaseUrl, { poolSize: 10 });
const wiring = await createApiWiring({
  db,
  config: { server: { host: '127.0.0.1' }, api: { anonymousRead: true } },
  log,
  redisUrl: options.redisUrl,
  channelPrefix: options.channelPrefix,
});
const http = createHttpServer({ host: '127.0.0.1', port: 0, log, readiness: {} });
const clusters = createClusterStore(db);
const graphql = await createGraphqlServer({
  schema: createSchema(),
  httpServer: http.server,
  path: '/graphql',
  log,
  authenticate: (header) => wiring.authenticator.authenticate(header),
  // The subscribers (--clients) stand for as many machines; here they all come from 127.0.0.1.
  webSocket: { maxConnectionsPerIp: Number.MAX_SAFE_INTEGER },
  context: () => ({
    about: { version: 'bench', role: 'api', startedAt: new Date() },
    clusters,
    read: wiring.read,
    loaders: wiring.newLoaders(),
  }),
});
http.mount('/graphql', graphql.handle);
await http.listen();
let closing = false;
const shutdown = () => {
  if (closing) return;
  closing = true;
  void (async () => {
    await graphql.closeWebSockets();
    await http.close(1000);
    await graphql.stop();
    await wiring.close();
    await db.$disconnect();
  })().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
process.send?.({ ready: true, url: `${http.url.replace(/^http/, 'ws')}/graphql` });
