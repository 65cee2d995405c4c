import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscovery, isKubeError } from '../../../src/kube/discovery.ts';
import { createKubeTransport } from '../../../src/kube/transport.ts';
import { loadKubeconfigClusters } from '../../../src/kube/clusters.ts';
import { startTestCluster, type TestCluster } from './helpers.ts';

const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('discovery', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  });
  afterAll(async () => cluster.close());

  function freshDiscovery(clock: { now: number }) {
    const handle = loadKubeconfigClusters({ yaml: cluster.emulator.kubeconfig() }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    const transport = createKubeTransport(handle.kubeConfig);
    return {
      transport,
      discovery: createDiscovery(transport, { ttlMs: 60_000, missRefreshMs: 10_000, now: () => clock.now }),
    };
  }

  it.each([
    ['core namespaced kind', '', 'ConfigMap', { resource: 'configmaps', version: 'v1', namespaced: true }],
    ['core cluster-scoped kind', '', 'Namespace', { resource: 'namespaces', namespaced: false }],
    ['named group', 'apps', 'Deployment', { resource: 'deployments', version: 'v1', namespaced: true }],
    [
      'RBAC cluster-scoped kind',
      'rbac.authorization.k8s.io',
      'ClusterRole',
      { resource: 'clusterroles', namespaced: false },
    ],
    ['inventory CRD', 'kustomize.toolkit.fluxcd.io', 'Kustomization', { resource: 'kustomizations', namespaced: true }],
  ])('resolves a %s', async (_label, group, kind, expected) => {
    const { discovery, transport } = freshDiscovery({ now: 0 });
    expect(await discovery.resolve(group, kind)).toMatchObject({ group, kind, ...expected });
    transport.close();
  });

  it('answers from its cache until the TTL passes', async () => {
    const clock = { now: 0 };
    const { discovery, transport } = freshDiscovery(clock);
    await discovery.resolve('apps', 'Deployment');
    const afterFirst = discovery.requestCount;
    await discovery.resolve('apps', 'StatefulSet');
    await discovery.resolve('apps', 'Deployment');
    expect(discovery.requestCount).toBe(afterFirst);
    clock.now = 61_000;
    await discovery.resolve('apps', 'Deployment');
    expect(discovery.requestCount).toBeGreaterThan(afterFirst);
    transport.close();
  });

  it('an unknown kind is KIND_NOT_FOUND and refreshes discovery at most once per interval', async () => {
    const clock = { now: 0 };
    const { discovery, transport } = freshDiscovery(clock);
    const first = await discovery.resolve('example.com', 'Widget');
    expect(isKubeError(first) && first.kind).toBe('KIND_NOT_FOUND');
    const afterMiss = discovery.requestCount;
    for (let i = 0; i < 5; i += 1) await discovery.resolve('example.com', 'Widget');
    expect(discovery.requestCount).toBe(afterMiss);

    cluster.emulator.apply(widgetCrd);
    clock.now = 5_000;
    expect(isKubeError(await discovery.resolve('example.com', 'Widget'))).toBe(true);
    clock.now = 11_000;
    expect(await discovery.resolve('example.com', 'Widget')).toMatchObject({ resource: 'widgets', version: 'v1' });
    transport.close();
  });

  it('turns an unreachable server into data', async () => {
    const other = await startTestCluster('gone');
    const { discovery, transport } = (() => {
      const handle = loadKubeconfigClusters({ yaml: other.emulator.kubeconfig() }).clusters[0];
      if (handle === undefined) throw new Error('no cluster');
      const t = createKubeTransport(handle.kubeConfig, { timeoutMs: 500 });
      return { transport: t, discovery: createDiscovery(t) };
    })();
    await other.close();
    const result = await discovery.resolve('apps', 'Deployment');
    expect(isKubeError(result) && result.kind).toBe('UNREACHABLE');
    transport.close();
  });
});
