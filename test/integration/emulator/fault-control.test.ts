/**
 * The emulator's fault-control endpoint over real HTTP: two emulated clusters, one control
 * listener, faults given from outside the emulators' own API.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFaultControl, type FaultControl } from '../../../src/emulator/control.ts';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { waitFor } from './helpers.ts';

let staging: Emulator;
let prod: Emulator;
let control: FaultControl;

interface Answer {
  status: number;
  json: Record<string, unknown>;
}

async function call(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const token = opts.token === undefined ? control.token : opts.token;
  const res = await fetch(control.url + path, {
    method,
    headers: {
      ...(token !== null ? { Authorization: `Bearer ${token}` } : {}),
      ...(opts.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...opts.headers,
    },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** HTTP status of a namespace list on a cluster, or the connection error code. */
async function probe(em: Emulator): Promise<number | string> {
  try {
    const res = await fetch(`${em.url}/api/v1/namespaces`, { signal: AbortSignal.timeout(5000) });
    await res.text();
    return res.status;
  } catch (e) {
    return (e as { cause?: { code?: string } }).cause?.code ?? String(e);
  }
}

beforeAll(async () => {
  staging = await startEmulator({ clusterName: 'staging' });
  prod = await startEmulator({ clusterName: 'prod' });
  control = await startFaultControl({ clusters: { staging, prod } });
});

afterEach(async () => {
  await call('DELETE', '/v1/clusters/prod/faults');
  await call('DELETE', '/v1/clusters/staging/faults');
});

afterAll(async () => {
  await control?.close();
  await staging?.close();
  await prod?.close();
});

describe('authentication', () => {
  it.each([
    ['no token', (): string | null => null],
    ['a wrong token', (): string | null => 'x'.repeat(43)],
    [
      'the token with its last character changed',
      (): string | null => `${control.token.slice(0, -1)}${control.token.endsWith('a') ? 'b' : 'a'}`,
    ],
    ['the token with a suffix', (): string | null => `${control.token}x`],
  ])('refuses a request with %s (401) and applies no fault', async (_label, tokenOf) => {
    const wrong = tokenOf();
    const answer = await call('POST', '/v1/clusters/prod/faults', {
      token: wrong,
      body: { effect: 'status', statusCode: 500 },
    });
    expect(answer.status).toBe(401);
    expect(prod.faults()).toEqual([]);
    expect(await probe(prod)).toBe(200);
    expect((await call('GET', '/v1/faults', { token: wrong })).status).toBe(401);
  });

  it('refuses requests from a browser page (Origin header) even with the token', async () => {
    const answer = await call('POST', '/v1/clusters/prod/faults', {
      body: { effect: 'hang' },
      headers: { Origin: 'https://evil.example' },
    });
    expect(answer.status).toBe(403);
    expect(prod.faults()).toEqual([]);
  });

  it('refuses a body that is not declared as JSON (a form post)', async () => {
    const res = await fetch(`${control.url}/v1/clusters/prod/faults`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${control.token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'effect=hang',
    });
    expect(res.status).toBe(415);
    expect(prod.faults()).toEqual([]);
  });
});

describe('malformed faults', () => {
  it.each([
    ['a negative latency', { effect: 'latency', latencyMs: -5 }, 'latencyMs'],
    ['a latency fault without latency', { effect: 'latency' }, 'needs latencyMs'],
    ['an unknown effect', { effect: 'sneeze' }, 'effect'],
    ['status 99', { effect: 'status', statusCode: 99 }, '400-599'],
    ['status 600', { effect: 'status', statusCode: 600 }, '400-599'],
    ['a status fault without a code', { effect: 'status' }, 'needs statusCode'],
    ['a zero --for', { effect: 'hang', forMs: 0 }, 'forMs'],
    ['an unknown field', { effect: 'hang', colour: 'red' }, 'colour'],
    ['an unknown verb in match', { effect: 'hang', match: { verb: 'explode' } }, 'verb'],
    ['refuse limited to one resource', { effect: 'refuse', match: { resource: 'pods' } }, 'refuse'],
  ])('answers 400 for %s and changes nothing', async (_label, body, mentions) => {
    const answer = await call('POST', '/v1/clusters/prod/faults', { body });
    expect(answer.status).toBe(400);
    expect(String(answer.json['error'])).toContain(mentions);
    expect(prod.faults()).toEqual([]);
    expect(prod.refusing).toBe(false);
    expect(await probe(prod)).toBe(200);
  });

  it('answers 400 naming the served clusters for an unknown cluster', async () => {
    const answer = await call('POST', '/v1/clusters/qa/faults', { body: { effect: 'hang' } });
    expect(answer.status).toBe(400);
    expect(answer.json['error']).toBe('unknown cluster "qa"; this emulator serves: staging, prod');
    expect((await call('DELETE', '/v1/clusters/qa/faults')).status).toBe(400);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await fetch(`${control.url}/v1/clusters/prod/faults`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${control.token}`, 'Content-Type': 'application/json' },
      body: '{effect',
    });
    expect(res.status).toBe(400);
    expect(prod.faults()).toEqual([]);
  });
});

describe('faults', () => {
  it('fails only the named cluster with the given status, and lists the fault', async () => {
    const added = await call('POST', '/v1/clusters/prod/faults', { body: { effect: 'status', statusCode: 503 } });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ cluster: 'prod', effect: 'status', statusCode: 503 });
    const res = await fetch(`${prod.url}/api/v1/namespaces`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
    expect(await probe(staging)).toBe(200);
    const listed = await call('GET', '/v1/faults');
    expect(listed.json['faults']).toEqual([added.json]);
  });

  it('removes a fault given forMs once that time has passed', async () => {
    const added = await call('POST', '/v1/clusters/prod/faults', {
      body: { effect: 'status', statusCode: 500, forMs: 300 },
    });
    expect(added.json['expiresAt']).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await probe(prod)).toBe(500);
    await waitFor('the fault to expire', () => (prod.faults().length === 0 ? true : undefined), 5000);
    expect(await probe(prod)).toBe(200);
    expect((await call('GET', '/v1/faults')).json['faults']).toEqual([]);
  });

  it('refuses connections to the named cluster until cleared, and the cluster serves again on the same URL', async () => {
    expect((await call('POST', '/v1/clusters/prod/faults', { body: { effect: 'refuse' } })).status).toBe(201);
    expect(await probe(prod)).toBe('ECONNREFUSED');
    expect(await probe(staging)).toBe(200);
    const cleared = await call('DELETE', '/v1/clusters/prod/faults');
    expect(cleared.json).toEqual({ cluster: 'prod', cleared: 1 });
    expect(await probe(prod)).toBe(200);
  });

  it('ends a refusal given forMs on its own', async () => {
    await call('POST', '/v1/clusters/staging/faults', { body: { effect: 'refuse', forMs: 300 } });
    expect(await probe(staging)).toBe('ECONNREFUSED');
    await waitFor('staging to listen again', () => (staging.refusing ? undefined : true), 5000);
    expect(await probe(staging)).toBe(200);
  });

  it('keeps refusing while a second refusal is in force after the first one expires', async () => {
    const first = await call('POST', '/v1/clusters/prod/faults', { body: { effect: 'refuse', forMs: 200 } });
    await call('POST', '/v1/clusters/prod/faults', { body: { effect: 'refuse' } });
    const listed = async (): Promise<unknown[]> =>
      (await call('GET', '/v1/clusters/prod/faults')).json['faults'] as unknown[];
    for (const deadline = Date.now() + 5000; (await listed()).length > 1 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    expect((await listed()).map((f) => (f as { id: string }).id)).not.toContain(first.json['id']);
    expect(await probe(prod)).toBe('ECONNREFUSED');
  });

  it('hits only matching requests and counts down times', async () => {
    await call('POST', '/v1/clusters/prod/faults', {
      body: { effect: 'status', statusCode: 429, times: 2, match: { resource: 'configmaps' } },
    });
    expect(await probe(prod)).toBe(200);
    const cm = async (): Promise<number> => (await fetch(`${prod.url}/api/v1/namespaces/default/configmaps`)).status;
    expect(await cm()).toBe(429);
    expect((await call('GET', '/v1/clusters/prod/faults')).json['faults']).toMatchObject([{ remaining: 1 }]);
    expect(await cm()).toBe(429);
    expect(await cm()).toBe(200);
    expect((await call('GET', '/v1/faults')).json['faults']).toEqual([]);
  });

  it('adds latency to requests and lets them through', async () => {
    await call('POST', '/v1/clusters/prod/faults', { body: { effect: 'latency', latencyMs: 200 } });
    const before = prod.requestCount({ resource: 'namespaces', status: 200 });
    expect(await probe(prod)).toBe(200);
    expect(prod.requestCount({ resource: 'namespaces', status: 200 })).toBe(before + 1);
    expect(prod.faults()).toMatchObject([{ rule: { effect: 'latency', latencyMs: 200 } }]);
  });

  it('stays reachable while its cluster hangs, so the hang can be cleared', async () => {
    await call('POST', '/v1/clusters/prod/faults', { body: { effect: 'hang' } });
    const abort = new AbortController();
    const hung = fetch(`${prod.url}/api/v1/namespaces`, { signal: abort.signal }).then(
      () => 'answered',
      () => 'aborted',
    );
    await waitFor('the request to be held', () =>
      prod.requests().some((r) => r.resource === 'namespaces' && r.status === 0) ? true : undefined,
    );
    expect((await call('DELETE', '/v1/clusters/prod/faults')).status).toBe(200);
    expect(await probe(prod)).toBe(200);
    abort.abort();
    expect(await hung).toBe('aborted');
  });
});
