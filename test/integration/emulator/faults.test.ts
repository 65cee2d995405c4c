import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configMap, deployment, rawRequest, readApiError, startHarness, type Harness } from './helpers.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  h.em.apply([configMap('cm'), deployment('web')]);
});
afterEach(() => {
  h.em.clearFaults();
});
afterAll(async () => {
  await h.em.close();
});

describe('status faults', () => {
  it.each([
    [401, 'Unauthorized'],
    [403, 'Forbidden'],
    [404, 'NotFound'],
    [410, 'Expired'],
    [429, 'TooManyRequests'],
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
  ])('answers %i with a Status body whose reason is %s', async (code, reason) => {
    h.em.injectFault({ match: { verb: 'get', resource: 'configmaps' }, effect: 'status', statusCode: code });
    const raw = await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm');
    expect(raw.status).toBe(code);
    expect(raw.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
    const core = h.kc.makeApiClient(CoreV1Api);
    const err = await core.readNamespacedConfigMap({ name: 'cm', namespace: 'default' }).catch((e: unknown) => e);
    expect(readApiError(err).code).toBe(code);
  });

  it('sends Retry-After with 429', async () => {
    h.em.injectFault({ effect: 'status', statusCode: 429, retryAfterSeconds: 7, match: { resource: 'configmaps' } });
    const res = await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.json['details']).toEqual({ retryAfterSeconds: 7 });
  });

  it('forbids one kind while others keep working', async () => {
    h.em.injectFault({ match: { kind: 'Deployment' }, effect: 'status', statusCode: 403 });
    const apps = h.kc.makeApiClient(AppsV1Api);
    const core = h.kc.makeApiClient(CoreV1Api);
    const err = await apps.listNamespacedDeployment({ namespace: 'default' }).catch((e: unknown) => e);
    expect(readApiError(err).code).toBe(403);
    expect((await core.listNamespacedConfigMap({ namespace: 'default' })).items.length).toBe(1);
  });

  it('stops after `times` matching requests', async () => {
    h.em.injectFault({ match: { resource: 'configmaps' }, effect: 'status', statusCode: 500, times: 2 });
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm')).status);
    expect(codes).toEqual([500, 500, 200]);
  });

  it('stops when its remover is called', async () => {
    const remove = h.em.injectFault({ effect: 'status', statusCode: 503 });
    expect((await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm')).status).toBe(503);
    remove();
    expect((await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm')).status).toBe(200);
  });

  it('can fail discovery alone', async () => {
    h.em.injectFault({ match: { verb: 'discovery' }, effect: 'status', statusCode: 503 });
    expect((await rawRequest(h.em, '/apis/apps/v1')).status).toBe(503);
    expect((await rawRequest(h.em, '/apis/apps/v1/namespaces/default/deployments')).status).toBe(200);
  });

  it('rejects a malformed rule with a clear error', () => {
    expect(() => h.em.injectFault({ effect: 'status', statusCode: 200 })).toThrow(
      /statusCode must be an HTTP error code/,
    );
    expect(() => h.em.injectFault({ effect: 'explode' as never })).toThrow(/effect must be one of/);
  });
});

describe('transport faults', () => {
  it('resets the connection', async () => {
    h.em.injectFault({ match: { resource: 'configmaps' }, effect: 'reset' });
    const core = h.kc.makeApiClient(CoreV1Api);
    const err = (await core
      .readNamespacedConfigMap({ name: 'cm', namespace: 'default' })
      .catch((e: unknown) => e)) as Error & { code?: string };
    expect(err).toBeInstanceOf(Error);
    expect(JSON.stringify({ code: err.code, message: err.message })).toMatch(/ECONNRESET|socket hang up/);
    expect(h.em.requestCount({ resource: 'configmaps', status: 0 })).toBeGreaterThanOrEqual(1);
  });

  it('hangs until the client gives up', async () => {
    h.em.injectFault({ match: { resource: 'configmaps' }, effect: 'hang' });
    const err = await fetch(`${h.em.url}/api/v1/namespaces/default/configmaps/cm`, {
      signal: AbortSignal.timeout(200),
    }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('TimeoutError');
  });

  it('delays answers by latencyMs without changing them', async () => {
    h.em.injectFault({ match: { resource: 'configmaps' }, effect: 'latency', latencyMs: 150 });
    const started = performance.now();
    const res = await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm');
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe('malformed requests', () => {
  it('answers a badly encoded path with 400 and keeps serving', async () => {
    const res = await rawRequest(h.em, '/api/v1/namespaces/%E0%A4%A/configmaps');
    expect(res.status).toBe(400);
    expect(res.json['kind']).toBe('Status');
    expect((await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm')).status).toBe(200);
  });

  it('answers an unknown resource with 404 and an unsupported patch type with 415', async () => {
    expect((await rawRequest(h.em, '/api/v1/namespaces/default/widgets')).status).toBe(404);
    const res = await rawRequest(h.em, '/api/v1/namespaces/default/configmaps/cm', {
      method: 'PATCH',
      headers: { 'Content-Type': 'text/plain' },
      body: '{}',
    });
    expect(res.status).toBe(415);
  });
});

describe('authentication', () => {
  it('requires the bearer token when one is configured', async () => {
    const secured = await startHarness({ token: 's3cret' });
    try {
      const core = secured.kc.makeApiClient(CoreV1Api);
      expect((await core.listNamespace()).items.map((n) => n.metadata?.name)).toContain('default');
      const anonymous = await rawRequest(secured.em, '/api/v1/namespaces');
      expect(anonymous.status).toBe(401);
      expect(anonymous.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    } finally {
      await secured.em.close();
    }
  });
});

describe('request counters', () => {
  it('counts requests by verb, resource and status, and resets', async () => {
    h.em.resetRequests();
    const core = h.kc.makeApiClient(CoreV1Api);
    await core.listNamespacedConfigMap({ namespace: 'default' });
    await core.readNamespacedConfigMap({ name: 'cm', namespace: 'default' });
    await core.readNamespacedConfigMap({ name: 'missing', namespace: 'default' }).catch(() => undefined);
    expect(h.em.requestCount()).toBe(3);
    expect(h.em.requestCount({ verb: 'get', resource: 'configmaps' })).toBe(2);
    expect(h.em.requestCount({ verb: 'get', status: 404 })).toBe(1);
    const [first] = h.em.requests();
    expect(first).toEqual({
      verb: 'list',
      method: 'GET',
      path: '/api/v1/namespaces/default/configmaps',
      group: '',
      resource: 'configmaps',
      namespace: 'default',
      status: 200,
      // Who asked, and when the request came and ended (tests check that two workers never read one cluster at once).
      userAgent: expect.any(String) as string,
      at: expect.any(Number) as number,
      endedAt: expect.any(Number) as number,
    });
    expect(first?.endedAt).toBeGreaterThanOrEqual(first?.at ?? Infinity);
    h.em.resetRequests();
    expect(h.em.requestCount()).toBe(0);
  });
});
