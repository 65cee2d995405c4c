/**
 * The servers the HTTP baselines measure, run as a child process by `startChildServer`:
 *
 *   node --import tsx bench/baselines/http-servers.ts node-http|apollo
 *
 * `node-http` answers every request with a fixed JSON body (the ceiling of node:http here);
 * `apollo` is a bare Apollo Server 5 with `startStandaloneServer` (its own node:http handler),
 * a one-field schema, no plugins beyond Apollo's defaults, landing page off.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';

type Stop = () => Promise<void>;

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function startNodeHttp(): Promise<{ url: string; stop: Stop }> {
  const body = JSON.stringify({ data: { __typename: 'Query' } });
  const server = createServer((_req, res) => {
    _req.resume();
    _req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, stop: () => closeServer(server) };
}

async function startApollo(): Promise<{ url: string; stop: Stop }> {
  const server = new ApolloServer({
    typeDefs: 'type Query { hello: String }',
    resolvers: { Query: { hello: () => 'world' } },
    introspection: false,
  });
  const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
  return { url, stop: () => server.stop() };
}

const kind = process.argv[2];
const started = kind === 'apollo' ? await startApollo() : kind === 'node-http' ? await startNodeHttp() : undefined;
if (started === undefined) {
  console.error(`unknown server kind ${String(kind)}; use node-http or apollo`);
  process.exit(2);
}
const shutdown = () => {
  void started.stop().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
process.send?.({ ready: true, url: started.url });
