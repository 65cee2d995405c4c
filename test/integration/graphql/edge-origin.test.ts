/**
 * Who may talk to the API from a browser (issue #17 item 10): a page of another site must not
 * read the API over WebSocket (which CORS does not protect) or HTTP, and a rebound DNS name must
 * not reach a loopback API. Programs (no `Origin`), same-origin pages (GraphiQL) and listed
 * origins keep working; probes answer whatever `Host` they carry.
 */
import { request } from 'node:http';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { startTestApi, wsClient, type TestApi } from './helpers.ts';
import { seedHistory } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let origin: string;

beforeAll(async () => {
  database = await createTestDatabase('gql_edge_origin');
  await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 2 });
  // The embedded default: loopback bind, anonymous reads on.
  api = await startTestApi({
    db,
    anonymousRead: true,
    allowedOrigins: ['https://dash.example.com'],
    allowedHosts: ['phaselog.internal'],
  });
  origin = new URL(api.url).origin;
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

const PHASES = '{ phases { edges { node { name } } } }';

/** A graphql-ws client whose upgrade carries the headers a browser would add. */
function browserClient(headers: Record<string, string>) {
  class BrowserSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  return createClient({ url: api.wsUrl, webSocketImpl: BrowserSocket, retryAttempts: 0, lazy: true });
}

/** Runs one query over graphql-ws: its data, or the reason the connection failed. */
async function readOverWebSocket(
  client: ReturnType<typeof createClient>,
): Promise<{ data?: unknown; failed?: string }> {
  try {
    for await (const result of client.iterate({ query: PHASES })) return { data: result.data };
    return { failed: 'no result' };
  } catch (error) {
    return { failed: error instanceof Error ? error.message : JSON.stringify(error) };
  } finally {
    await client.dispose();
  }
}

/** Opens a raw WebSocket upgrade: the refusal's status and body, or 'open'. */
function upgrade(headers: Record<string, string>): Promise<{ status: number; body: string } | 'open'> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(api.wsUrl, 'graphql-transport-ws', { headers });
    socket.once('open', () => {
      socket.close();
      resolve('open');
    });
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    socket.once('error', (error) => reject(error));
  });
}

/** A raw HTTP request (fetch may not set Host). */
function httpRequest(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.once('error', reject);
    req.end(options.body);
  });
}

const jsonPost = (headers: Record<string, string>) =>
  httpRequest('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: PHASES }),
  });

describe('WebSocket Origin', () => {
  it('refuses a page of another site before any GraphQL message', async () => {
    const read = await readOverWebSocket(browserClient({ origin: 'http://evil.example' }));
    expect(read.data).toBeUndefined();
    expect(read.failed).toBeDefined();

    const refused = await upgrade({ origin: 'http://evil.example' });
    expect(refused).not.toBe('open');
    if (refused === 'open') return;
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ extensions: { code: 'ORIGIN_NOT_ALLOWED' } }] });
  });

  it.each([
    ['a sandboxed page (Origin: null)', 'null'],
    ['another port of the same host', 'http://127.0.0.1:1'],
    ['an allowed origin with another scheme', 'http://dash.example.com'],
  ])('refuses %s', async (_label, value) => {
    expect(await upgrade({ origin: value })).toMatchObject({ status: 403 });
  });

  it('lets programs (no Origin), same-origin pages and listed origins read', async () => {
    expect((await readOverWebSocket(wsClient(api.wsUrl))).data).toMatchObject({ phases: { edges: expect.any(Array) } });
    expect((await readOverWebSocket(browserClient({ origin }))).data).toMatchObject({
      phases: { edges: expect.any(Array) },
    });
    expect((await readOverWebSocket(browserClient({ origin: 'https://dash.example.com' }))).data).toMatchObject({
      phases: { edges: expect.any(Array) },
    });
  });

  it('refuses an upgrade whose Host is a rebound name, even when Origin matches it', async () => {
    const port = new URL(api.url).port;
    const refused = await upgrade({ host: `evil.example:${port}`, origin: `http://evil.example:${port}` });
    expect(refused).toMatchObject({ status: 421 });
    if (refused !== 'open')
      expect(JSON.parse(refused.body)).toMatchObject({ errors: [{ extensions: { code: 'HOST_NOT_ALLOWED' } }] });
  });
});

describe('HTTP Host (DNS rebinding) on a loopback bind', () => {
  it('refuses a request for a name that is not this machine with a JSON error', async () => {
    const port = new URL(api.url).port;
    const res = await jsonPost({ host: `evil.example:${port}` });
    expect(res.status).toBe(421);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const body = JSON.parse(res.body) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]?.extensions.code).toBe('HOST_NOT_ALLOWED');
    expect(body.errors[0]?.message).toMatch(/api\.allowedHosts/);
    expect(res.body).not.toMatch(/phases|edges/);
  });

  it.each(['127.0.0.1', 'localhost', '[::1]', 'LOCALHOST', 'phaselog.internal'])('answers Host %s', async (name) => {
    const res = await jsonPost({ host: `${name}:${new URL(api.url).port}` });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ data: { phases: { edges: expect.any(Array) } } });
  });

  it('answers probes whatever their Host (kubelet sends the pod address)', async () => {
    const res = await httpRequest('/healthz', { headers: { host: '10.0.0.7:4000' } });
    expect(res.status).toBe(200);
  });
});

describe('HTTP Origin', () => {
  it('refuses a cross-site JSON POST and grants no CORS', async () => {
    const res = await jsonPost({ origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ errors: [{ extensions: { code: 'ORIGIN_NOT_ALLOWED' } }] });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('grants no CORS preflight to another site', async () => {
    const res = await httpRequest('/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'http://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-headers']).toBeUndefined();
  });

  it('answers same-origin pages (GraphiQL) and programs', async () => {
    for (const headers of [{ origin }, {}] as Record<string, string>[]) {
      const res = await jsonPost(headers);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ data: { phases: { edges: expect.any(Array) } } });
    }
  });
});
