/**
 * WebSocket limits (issue #17 item 11): a huge message is refused while it streams in (close
 * 1009), one address or one token cannot hold more than its share of connections, and one
 * connection cannot run more than its share of operations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { startTestApi, type TestApi } from './helpers.ts';
import { seedHistory } from './seed.ts';
import { closeAll, initConnection, openSocket } from './ws-raw.ts';

let database: TestDatabase;
let db: Db;
/** Default limits but three connections per address. */
let perIp: TestApi;
/** Default limits but two connections per token and two operations per connection. */
let perToken: TestApi;
let ciToken: string;

beforeAll(async () => {
  database = await createTestDatabase('gql_ws_limits');
  await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  ciToken = (await createToken(createApiTokenStore(db), { name: 'ci', scopes: ['read'] })).secret;
  perIp = await startTestApi({ db, anonymousRead: true, webSocket: { maxConnectionsPerIp: 3 } });
  perToken = await startTestApi({
    db,
    anonymousRead: true,
    redisUrl: testRedisUrl(),
    channelPrefix: uniquePrefix('gql-ws-limits'),
    webSocket: { maxConnectionsPerToken: 2, maxOperationsPerConnection: 2 },
  });
});

afterAll(async () => {
  await perIp?.close();
  await perToken?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('message size', () => {
  it('refuses an 80 MB connection_init with 1009 while it streams in, without reading it all', async () => {
    const { socket, closed, next } = await openSocket(perIp.wsUrl);
    const outcome = Promise.race([closed, next((m) => m.type === 'connection_ack').then(() => 'ack' as const)]);
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const send = (data: string | Buffer, fin: boolean) =>
      new Promise<boolean>((resolve) => {
        if (socket.readyState !== WebSocket.OPEN) return resolve(false);
        socket.send(data, { fin, binary: false }, (error) => resolve(error === undefined || error === null));
      });
    let sent = 0;
    if (await send('{"type":"connection_init","payload":{"pad":"', false)) {
      for (let i = 0; i < 80; i++) {
        if (!(await send(chunk, false))) break;
        sent += chunk.length;
      }
      await send('"}}', true);
    }
    expect(await outcome).toBe(1009);
    // The server refused at its 1 MiB limit and sent its close frame while the rest was still streaming.
    expect(sent).toBeLessThan(40 * 1024 * 1024);

    // The server is fine and still takes messages under the limit.
    const after = await initConnection(perIp.wsUrl);
    expect(after.outcome).toBe('ack');
    await closeAll([after.socket]);
  });
});

describe('connections per address', () => {
  it('refuses one more than the limit with HTTP 429 at upgrade, and takes one again once a connection closes', async () => {
    const open = await Promise.all([1, 2, 3].map(() => openSocket(perIp.wsUrl)));
    const refused = await openSocket(perIp.wsUrl).then(
      (extra) => ({ status: 101, socket: extra.socket }),
      (error: { status?: number }) => ({ status: error.status, socket: undefined }),
    );
    expect(refused.status).toBe(429);
    await closeAll([open[0]!.socket, ...(refused.socket ? [refused.socket] : [])]);

    // The server counts the closed one down when its side of the socket closes: retry until then.
    let again: Awaited<ReturnType<typeof openSocket>> | undefined;
    const deadline = Date.now() + 5000;
    while (again === undefined && Date.now() < deadline) {
      again = await openSocket(perIp.wsUrl).catch((error: { status?: number }) => {
        if (error.status !== 429) throw error as Error;
        return undefined;
      });
      if (again === undefined) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(again).toBeDefined();
    await closeAll([...open.slice(1).map((o) => o.socket), ...(again ? [again.socket] : [])]);
  });
});

describe('connections per token', () => {
  it('closes one more than the limit with 4429 at connection_init; anonymous readers are bound by address only', async () => {
    const first = await initConnection(perToken.wsUrl, ciToken);
    const second = await initConnection(perToken.wsUrl, ciToken);
    expect([first.outcome, second.outcome]).toEqual(['ack', 'ack']);
    const third = await initConnection(perToken.wsUrl, ciToken);
    expect(third.outcome).toBe(4429);

    const anonymous = await Promise.all([1, 2, 3].map(() => initConnection(perToken.wsUrl)));
    expect(anonymous.map((a) => a.outcome)).toEqual(['ack', 'ack', 'ack']);
    await closeAll([first, second, third, ...anonymous].map((c) => c.socket));
  });
});

describe('operations per connection', () => {
  const subscription = (id: string) =>
    JSON.stringify({
      id,
      type: 'subscribe',
      payload: { query: 'subscription { phaseStatusChanged(after: "0") { seq } }' },
    });

  it('refuses one more than the limit with TOO_MANY_OPERATIONS and takes one again after a complete', async () => {
    const connection = await initConnection(perToken.wsUrl);
    expect(connection.outcome).toBe('ack');
    connection.socket.send(subscription('1'));
    connection.socket.send(subscription('2'));
    // Both run: each replays the change log from the start.
    await connection.next((m) => m.id === '1' && m.type === 'next');
    await connection.next((m) => m.id === '2' && m.type === 'next');

    connection.socket.send(subscription('3'));
    const refused = await connection.next((m) => m.id === '3');
    expect(refused.type).toBe('error');
    expect(refused.payload).toMatchObject([{ extensions: { code: 'TOO_MANY_OPERATIONS' } }]);

    connection.socket.send(JSON.stringify({ id: '1', type: 'complete' }));
    connection.socket.send(JSON.stringify({ id: '4', type: 'subscribe', payload: { query: '{ about { version } }' } }));
    const answered = await connection.next((m) => m.id === '4');
    expect(answered).toMatchObject({ type: 'next', payload: { data: { about: { version: 'test' } } } });
    await closeAll([connection.socket]);
  });
});
