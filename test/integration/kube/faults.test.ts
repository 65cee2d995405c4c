import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FaultRule } from '../../../src/emulator/index.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';
import type { KubeErrorKind } from '../../../src/kube/errors.ts';
import { readClusters } from '../../../src/kube/read-clusters.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { indexOutcomes } from '../../../src/kube/ref-outcome.ts';
import { connect, makeObject, refOf, startTestCluster, type TestCluster } from './helpers.ts';

const refs = [refOf('Deployment', 'shop', 'web'), refOf('ConfigMap', 'shop', 'web'), refOf('Service', 'shop', 'web')];
const deploymentKey = refKey(refOf('Deployment', 'shop', 'web'));

describe('faults arrive as data', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
    cluster.emulator.apply([
      makeObject('Deployment', 'shop', 'web'),
      makeObject('ConfigMap', 'shop', 'web'),
      makeObject('Service', 'shop', 'web'),
    ]);
  });
  afterEach(() => cluster.emulator.clearFaults());
  afterAll(async () => cluster.close());

  it.each<[string, FaultRule, KubeErrorKind]>([
    ['a reset connection makes the cluster UNREACHABLE', { effect: 'reset' }, 'UNREACHABLE'],
    ['a server that never answers is a TIMEOUT', { effect: 'hang' }, 'TIMEOUT'],
    ['a rejected token is UNAUTHORIZED', { effect: 'status', statusCode: 401 }, 'UNAUTHORIZED'],
  ])('%s, and no resource is reported missing', async (_label, fault, kind) => {
    cluster.emulator.injectFault(fault);
    const client = connect(cluster.emulator, { transport: { timeoutMs: 300 } });
    try {
      const result = await readObjects(client, refs);
      expect(result.clusterError?.kind).toBe(kind);
      expect(result.missing).toEqual([]);
      expect(result.objects.size).toBe(0);
      expect(
        result.errors
          .flatMap((e) => e.refs)
          .map(refKey)
          .sort(),
      ).toEqual(refs.map(refKey).sort());
      const outcomeOf = indexOutcomes(result);
      expect(refs.map((ref) => outcomeOf(ref))).toEqual(
        refs.map(() => expect.objectContaining({ kind: 'unknown', reason: kind })),
      );
    } finally {
      client.close();
    }
  });

  it('a cluster whose LISTs all fail after discovery was cached is still a cluster-level error', async () => {
    const client = connect(cluster.emulator);
    try {
      await readObjects(client, refs);
      cluster.emulator.injectFault({ match: { verb: 'list' }, effect: 'reset' });
      const result = await readObjects(client, refs);
      expect(result.clusterError?.kind).toBe('UNREACHABLE');
      expect(result.missing).toEqual([]);
    } finally {
      client.close();
    }
  });

  it.each<[string, FaultRule, KubeErrorKind]>([
    ['forbidden', { match: { verb: 'list', resource: 'deployments' }, effect: 'status', statusCode: 403 }, 'FORBIDDEN'],
    [
      'no longer served',
      { match: { verb: 'list', resource: 'deployments' }, effect: 'status', statusCode: 404 },
      'KIND_NOT_FOUND',
    ],
    [
      'failing with 500',
      { match: { verb: 'list', resource: 'deployments' }, effect: 'status', statusCode: 500 },
      'SERVER_ERROR',
    ],
    [
      'unavailable (503)',
      { match: { verb: 'list', resource: 'deployments' }, effect: 'status', statusCode: 503 },
      'SERVER_ERROR',
    ],
    [
      'throttled for a minute',
      { match: { verb: 'list', resource: 'deployments' }, effect: 'status', statusCode: 429, retryAfterSeconds: 60 },
      'THROTTLED',
    ],
  ])('a kind that is %s makes only its own resources Unknown', async (_label, fault, kind) => {
    cluster.emulator.injectFault(fault);
    const client = connect(cluster.emulator);
    try {
      const result = await readObjects(client, refs);
      expect(result.clusterError).toBeUndefined();
      expect(result.errors).toHaveLength(1);
      expect(result.errors[0]).toMatchObject({ group: 'apps', kind: 'Deployment', namespace: 'shop', error: { kind } });
      expect(result.errors[0]?.refs.map(refKey)).toEqual([deploymentKey]);
      expect(result.objects.has(deploymentKey)).toBe(false);
      expect(result.objects.size).toBe(2);
      expect(result.missing).toEqual([]);
      const outcomeOf = indexOutcomes(result);
      expect(outcomeOf(refOf('Deployment', 'shop', 'web'))).toMatchObject({ kind: 'unknown', reason: kind });
      expect(outcomeOf(refOf('ConfigMap', 'shop', 'web')).kind).toBe('found');
    } finally {
      client.close();
    }
  });

  it('a long Retry-After is returned for the scheduler to honour', async () => {
    cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'deployments' },
      effect: 'status',
      statusCode: 429,
      retryAfterSeconds: 60,
    });
    const client = connect(cluster.emulator);
    try {
      const result = await readObjects(client, refs);
      expect(result.errors[0]?.error.retryAfterMs).toBe(60_000);
    } finally {
      client.close();
    }
  });

  it('a short Retry-After is waited out and the read succeeds', async () => {
    cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'deployments' },
      effect: 'status',
      statusCode: 429,
      retryAfterSeconds: 1,
      times: 1,
    });
    const client = connect(cluster.emulator);
    try {
      cluster.emulator.resetRequests();
      const result = await readObjects(client, refs);
      expect(result.errors).toEqual([]);
      expect(result.objects.has(deploymentKey)).toBe(true);
      expect(cluster.emulator.requestCount({ verb: 'list', resource: 'deployments' })).toBe(2);
    } finally {
      client.close();
    }
  });

  it('a kind the cluster does not serve is KIND_NOT_FOUND, not NotFound', async () => {
    const widget = { group: 'example.com', kind: 'Widget', namespace: 'shop', name: 'w' };
    const result = await readObjects(cluster.client, [...refs, widget]);
    expect(result.missing).toEqual([]);
    expect(result.errors).toEqual([
      expect.objectContaining({
        group: 'example.com',
        kind: 'Widget',
        error: expect.objectContaining({ kind: 'KIND_NOT_FOUND' }),
        refs: [widget],
      }),
    ]);
    expect(result.objects.size).toBe(3);
  });
});

describe('one failing cluster leaves the others alone', () => {
  it('reads a healthy cluster fully while another is unreachable or down', async () => {
    const healthy = await startTestCluster('healthy');
    const broken = await startTestCluster('broken');
    const down = await startTestCluster('down');
    try {
      for (const c of [healthy, broken, down])
        c.emulator.apply([
          makeObject('Deployment', 'shop', 'web'),
          makeObject('ConfigMap', 'shop', 'web'),
          makeObject('Service', 'shop', 'web'),
        ]);
      broken.emulator.injectFault({ effect: 'reset' });
      await down.emulator.close();
      const results = await readClusters([healthy, broken, down].map((c) => ({ cluster: c.client, refs })));
      const [ok, bad, gone] = ['healthy', 'broken', 'down'].map((name) => results.get(name));
      expect(ok?.objects.size).toBe(3);
      expect(ok?.errors).toEqual([]);
      expect(bad?.clusterError?.kind).toBe('UNREACHABLE');
      expect(gone?.clusterError?.kind).toBe('UNREACHABLE');
      expect(gone?.missing).toEqual([]);
    } finally {
      healthy.client.close();
      broken.client.close();
      down.client.close();
      await Promise.all([healthy.emulator.close(), broken.emulator.close()]);
    }
  });
});
