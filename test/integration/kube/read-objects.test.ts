import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatObjMetadata } from '../../../src/inventory/obj-metadata.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';
import { discoverPhases } from '../../../src/kube/discover-phases.ts';
import type { ObjectRef } from '../../../src/inventory/types.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { indexOutcomes } from '../../../src/kube/ref-outcome.ts';
import type { KubeTransport } from '../../../src/kube/transport.ts';
import { makeObject, refOf, startTestCluster, type TestCluster } from './helpers.ts';

const KINDS = ['Deployment', 'StatefulSet', 'Service', 'ConfigMap', 'Job', 'ServiceAccount'];

/** 5 phases × 40 resources, spread over 6 kinds, all in namespace `shop`. */
function makePhases(): { objects: Record<string, unknown>[]; phases: ObjectRef[][] } {
  const objects: Record<string, unknown>[] = [];
  const phases: ObjectRef[][] = [];
  for (let p = 0; p < 5; p += 1) {
    const refs: ObjectRef[] = [];
    for (let i = 0; i < 40; i += 1) {
      const kind = KINDS[i % KINDS.length] ?? 'ConfigMap';
      const name = `p${p}-r${i}`;
      objects.push(makeObject(kind, 'shop', name));
      refs.push(refOf(kind, 'shop', name));
    }
    phases.push(refs);
  }
  return { objects, phases };
}

describe('batched reads over real HTTP', () => {
  let cluster: TestCluster;
  const { objects, phases } = makePhases();
  const allRefs = phases.flat();

  beforeAll(async () => {
    cluster = await startTestCluster();
    cluster.emulator.apply(objects);
  });
  afterAll(async () => cluster.close());

  it('reads 5 phases of 40 resources over 6 kinds in one namespace with at most 6 LISTs, then only cached discovery', async () => {
    // The phases are real cli-utils inventories in the cluster, found the way the service finds them.
    cluster.emulator.apply(
      phases.map((refs, p) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: `inventory-0000000${p}`,
          namespace: 'shop',
          labels: { 'cli-utils.sigs.k8s.io/inventory-id': `phase-${p}` },
        },
        data: Object.fromEntries(refs.map((ref) => [formatObjMetadata(ref), ''])),
      })),
    );
    const found = await discoverPhases(cluster.client, {
      sources: { cliUtils: true, resourceGroup: false, flux: false, argocd: false },
    });
    expect(found.phases.map((d) => [d.phase.name, d.phase.entries.length])).toEqual(
      [0, 1, 2, 3, 4].map((p) => [`phase-${p}`, 40]),
    );
    const tickRefs = found.phases.flatMap((d) => d.phase.entries);

    cluster.emulator.resetRequests();
    const first = await readObjects(cluster.client, tickRefs);
    expect(first.objects.size).toBe(200);
    expect(first.missing).toEqual([]);
    expect(first.errors).toEqual([]);
    expect(cluster.emulator.requestCount({ verb: 'list' })).toBeLessThanOrEqual(6);
    expect(cluster.emulator.requestCount({ verb: 'get' })).toBe(0);

    cluster.emulator.resetRequests();
    const second = await readObjects(cluster.client, tickRefs);
    expect(second.objects.size).toBe(200);
    expect(cluster.emulator.requestCount({ verb: 'list' })).toBeLessThanOrEqual(6);
    expect(cluster.emulator.requestCount({ verb: 'discovery' })).toBe(0);
    expect(cluster.emulator.requestCount({ verb: 'get' })).toBe(0);
  });

  it('fills in apiVersion and kind on listed items, which a LIST leaves out for built-in kinds', async () => {
    const result = await readObjects(cluster.client, [
      refOf('Deployment', 'shop', 'p0-r0'),
      refOf('Service', 'shop', 'p0-r2'),
    ]);
    expect(result.objects.get(refKey(refOf('Deployment', 'shop', 'p0-r0')))).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
    });
    expect(result.objects.get(refKey(refOf('Service', 'shop', 'p0-r2')))).toMatchObject({
      apiVersion: 'v1',
      kind: 'Service',
    });
  });

  it('walks every page when the page size is small', async () => {
    cluster.emulator.resetRequests();
    const result = await readObjects(cluster.client, allRefs, { pageSize: 7 });
    expect(result.objects.size).toBe(200);
    // 34 objects per kind (ConfigMaps and Deployments) in pages of 7 need 5 pages each.
    expect(cluster.emulator.requestCount({ verb: 'list' })).toBeGreaterThan(6);
    expect(result.stats.listRequests).toBe(cluster.emulator.requestCount({ verb: 'list' }));
  });

  it('reports refs that do not exist as missing, and only those', async () => {
    const ghosts = [refOf('Deployment', 'shop', 'ghost'), refOf('ConfigMap', 'elsewhere', 'ghost')];
    const result = await readObjects(cluster.client, [...(phases[0] ?? []), ...ghosts]);
    expect(result.objects.size).toBe(40);
    expect(result.missing.map(refKey).sort()).toEqual(ghosts.map(refKey).sort());
    const outcomeOf = indexOutcomes(result);
    expect(outcomeOf(refOf('Deployment', 'shop', 'ghost'))).toEqual({ kind: 'missing' });
    expect(outcomeOf(refOf('Job', 'shop', 'never-asked')).kind).toBe('unknown');
  });

  it('restarts a list whose continue token expired (410 Gone) and still returns every object', async () => {
    // The emulator expires continue tokens older than its compacted revision: write, then compact,
    // right after the first page.
    let pages = 0;
    const real = cluster.client.transport;
    const compacting: KubeTransport = {
      ...real,
      server: real.server,
      requestCount: real.requestCount,
      async getJson(path, query, options) {
        const page = await real.getJson(path, query, options);
        pages += 1;
        if (pages === 1) {
          cluster.emulator.apply(makeObject('ServiceAccount', 'other', 'bump'));
          cluster.emulator.compact();
        }
        return page;
      },
    };
    const result = await readObjects(
      { ...cluster.client, transport: compacting },
      phases[0]?.filter((r) => r.kind === 'ConfigMap') ?? [],
      { pageSize: 2 },
    );
    expect(result.errors).toEqual([]);
    expect(result.objects.size).toBe(7);
    expect(cluster.emulator.requests().some((r) => r.status === 410)).toBe(true);
  });
});

describe('what a read keeps', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(async () => cluster.close());

  it('drops managedFields, the last-applied annotation and Secret data', async () => {
    const deployment = makeObject('Deployment', 'shop', 'web');
    (deployment.metadata as Record<string, unknown>).annotations = {
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(deployment),
      'deployment.kubernetes.io/revision': '3',
    };
    (deployment.metadata as Record<string, unknown>).managedFields = [
      { manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} },
    ];
    cluster.emulator.apply([deployment, makeObject('Secret', 'shop', 'db')]);
    const result = await readObjects(cluster.client, [
      refOf('Deployment', 'shop', 'web'),
      refOf('Secret', 'shop', 'db'),
    ]);
    const web = result.objects.get(refKey(refOf('Deployment', 'shop', 'web')));
    const meta = web?.metadata as Record<string, unknown>;
    expect(meta.managedFields).toBeUndefined();
    expect(meta.annotations).toEqual({ 'deployment.kubernetes.io/revision': '3' });
    expect(web?.spec).toMatchObject({ replicas: 2 });
    const secret = result.objects.get(refKey(refOf('Secret', 'shop', 'db')));
    expect(secret).toBeDefined();
    expect(secret?.data).toBeUndefined();
    expect(JSON.stringify(secret)).not.toContain(Buffer.from('s3cret').toString('base64'));
  });

  it('uses one cluster-wide LIST for a kind spread over many namespaces and per-namespace LISTs for few', async () => {
    const namespaces = ['a', 'b', 'c', 'd'];
    cluster.emulator.apply(namespaces.map((ns) => makeObject('ConfigMap', ns, 'cfg')));
    cluster.emulator.resetRequests();
    const wide = await readObjects(
      cluster.client,
      namespaces.map((ns) => refOf('ConfigMap', ns, 'cfg')),
    );
    expect(wide.objects.size).toBe(4);
    expect(cluster.emulator.requestCount({ verb: 'list', resource: 'configmaps' })).toBe(1);
    expect(cluster.emulator.requests().find((r) => r.verb === 'list')?.namespace ?? '').toBe('');

    cluster.emulator.resetRequests();
    const narrow = await readObjects(
      cluster.client,
      ['a', 'b'].map((ns) => refOf('ConfigMap', ns, 'cfg')),
    );
    expect(narrow.objects.size).toBe(2);
    expect(
      cluster.emulator
        .requests()
        .filter((r) => r.verb === 'list')
        .map((r) => r.namespace)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  it('falls back to per-namespace LISTs when the cluster-wide LIST is forbidden', async () => {
    cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'configmaps', namespace: '' },
      effect: 'status',
      statusCode: 403,
    });
    try {
      const result = await readObjects(
        cluster.client,
        ['a', 'b', 'c'].map((ns) => refOf('ConfigMap', ns, 'cfg')),
      );
      expect(result.errors).toEqual([]);
      expect(result.objects.size).toBe(3);
    } finally {
      cluster.emulator.clearFaults();
    }
  });

  it('reads pods next to StatefulSets only when asked', async () => {
    cluster.emulator.apply([
      makeObject('StatefulSet', 'db', 'pg'),
      makeObject('Pod', 'db', 'pg-0'),
      makeObject('Pod', 'other', 'x'),
    ]);
    cluster.emulator.resetRequests();
    const without = await readObjects(cluster.client, [refOf('StatefulSet', 'db', 'pg')]);
    expect(without.pods).toEqual([]);
    expect(cluster.emulator.requestCount({ verb: 'list', resource: 'pods' })).toBe(0);
    const withPods = await readObjects(cluster.client, [refOf('StatefulSet', 'db', 'pg')], { includePods: true });
    expect(withPods.pods.map((p) => (p.metadata as { name: string }).name)).toEqual(['pg-0']);
    expect(withPods.pods[0]?.kind).toBe('Pod');
  });
});
