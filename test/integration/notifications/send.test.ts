/**
 * The receiver adapter against hostile receivers over real HTTP: one that answers with an endless
 * body, one that redirects to another host, one that never answers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendRequest } from '../../../src/notify/send.ts';

const servers: Server[] = [];
async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    handler?.(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits: () => hits };
}
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const request = { body: '{"a":1}', headers: { 'content-type': 'application/json' } };

describe('sendRequest', () => {
  it('takes a 2xx with an endless body as delivered, reading no more than its cap', async () => {
    let written = 0;
    const endless = await serve((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = (): void => {
        while (!res.destroyed && written < 512 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (!res.destroyed && written < 512 * 1024 * 1024) res.once('drain', pump);
      };
      pump();
    });
    expect(await sendRequest(endless.url, request, 10_000)).toEqual({ ok: true, status: 200 });
    // The worker stopped reading: far less than what the receiver would have sent went out.
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('does not follow a redirect to another host', async () => {
    const elsewhere = await serve((_req, res) => res.writeHead(200).end());
    const redirecting = await serve((_req, res) => res.writeHead(307, { location: elsewhere.url }).end());
    const outcome = await sendRequest(redirecting.url, request, 5000);
    expect(outcome).toMatchObject({ ok: false, retryable: false });
    expect(elsewhere.hits()).toBe(0);
  });

  it.each([
    [503, true],
    [429, true],
    [408, true],
    [400, false],
    [404, false],
    [500, true],
  ])('classifies HTTP %i as retryable: %s', async (status, retryable) => {
    const answering = await serve((_req, res) => res.writeHead(status).end());
    expect(await sendRequest(answering.url, request, 5000)).toEqual({ ok: false, retryable, error: `HTTP ${status}` });
  });

  it('gives up on an attempt that gets no answer in time, to be retried', async () => {
    const silent = await serve(() => {});
    expect(await sendRequest(silent.url, request, 300)).toEqual({
      ok: false,
      retryable: true,
      error: 'no answer within 300 ms',
    });
  });
});
