import { AppsV1Api, CoreV1Api, KubernetesObjectApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configMap, deployment, rawRequest, readApiError, startHarness, type Harness } from './helpers.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.em.close();
});

describe('discovery', () => {
  it('lists the core version and every served group', async () => {
    const api = await rawRequest(h.em, '/api');
    expect(api.json['versions']).toEqual(['v1']);
    const apis = await rawRequest(h.em, '/apis');
    const names = (apis.json['groups'] as { name: string }[]).map((g) => g.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'apps',
        'batch',
        'policy',
        'rbac.authorization.k8s.io',
        'networking.k8s.io',
        'apiextensions.k8s.io',
        'kpt.dev',
        'kustomize.toolkit.fluxcd.io',
        'helm.toolkit.fluxcd.io',
        'argoproj.io',
      ]),
    );
  });

  it.each([
    ['/api/v1', 'pods', true],
    ['/api/v1', 'namespaces', false],
    ['/apis/apps/v1', 'deployments', true],
    ['/apis/rbac.authorization.k8s.io/v1', 'clusterroles', false],
    ['/apis/rbac.authorization.k8s.io/v1', 'rolebindings', true],
    ['/apis/kpt.dev/v1alpha1', 'resourcegroups', true],
    ['/apis/argoproj.io/v1alpha1', 'applications', true],
    ['/apis/apiextensions.k8s.io/v1', 'customresourcedefinitions', false],
  ])('%s serves %s with namespaced=%s and the watch verb', async (path, plural, namespaced) => {
    const list = await rawRequest(h.em, path);
    const entry = (list.json['resources'] as { name: string; namespaced: boolean; verbs: string[] }[]).find(
      (r) => r.name === plural,
    );
    expect(entry?.namespaced).toBe(namespaced);
    expect(entry?.verbs).toContain('watch');
  });

  it('answers aggregated discovery when the Accept header asks for it', async () => {
    const res = await rawRequest(h.em, '/apis', {
      headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' },
    });
    expect(res.headers.get('content-type')).toContain('as=APIGroupDiscoveryList');
    expect(res.json['kind']).toBe('APIGroupDiscoveryList');
  });

  it('gives 404 for a group that is not served', async () => {
    expect((await rawRequest(h.em, '/apis/example.com/v1')).status).toBe(404);
  });
});

describe('get and list through client-node', () => {
  beforeAll(() => {
    const objs = [];
    for (let i = 0; i < 5; i++)
      objs.push(configMap(`cm-${i}`, 'team-a', { tier: i % 2 === 0 ? 'web' : 'db', index: String(i) }));
    objs.push(configMap('cm-x', 'team-b', { tier: 'web' }));
    objs.push(configMap('unlabelled', 'team-b'));
    h.em.apply(objs);
    h.em.apply(deployment('web', 'team-a'));
  });

  it('reads one object with CoreV1Api', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const cm = await core.readNamespacedConfigMap({ name: 'cm-1', namespace: 'team-a' });
    expect(cm.metadata?.labels?.['tier']).toBe('db');
    expect(Number(cm.metadata?.resourceVersion)).toBeGreaterThan(0);
  });

  it('answers 404 with a NotFound Status for a missing object', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const err = await core.readNamespacedConfigMap({ name: 'nope', namespace: 'team-a' }).catch((e: unknown) => e);
    const { code, status } = readApiError(err);
    expect(code).toBe(404);
    expect(status).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it.each([
    ['tier=web', ['cm-0', 'cm-2', 'cm-4', 'cm-x']],
    ['tier==db', ['cm-1', 'cm-3']],
    ['tier!=web', ['cm-1', 'cm-3', 'unlabelled']],
    ['tier in (db,cache)', ['cm-1', 'cm-3']],
    ['tier notin (web)', ['cm-1', 'cm-3', 'unlabelled']],
    ['index', ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4']],
    ['!tier', ['unlabelled']],
    ['tier=web,index in (0,4)', ['cm-0', 'cm-4']],
  ])('cluster-wide list with labelSelector "%s"', async (selector, expected) => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const list = await core.listConfigMapForAllNamespaces({ labelSelector: selector });
    expect(list.items.map((c) => c.metadata?.name).sort()).toEqual(expected);
  });

  it('filters by metadata.name and metadata.namespace field selectors', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const byName = await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.name=cm-x' });
    expect(byName.items.map((c) => c.metadata?.namespace)).toEqual(['team-b']);
    const notA = await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace!=team-a' });
    expect(notA.items.map((c) => c.metadata?.name).sort()).toEqual(['cm-x', 'unlabelled']);
  });

  it('rejects an unsupported field selector with 400', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const err = await core
      .listNamespacedConfigMap({ namespace: 'team-a', fieldSelector: 'spec.color=red' })
      .catch((e: unknown) => e);
    expect(readApiError(err)).toMatchObject({ code: 400, status: { reason: 'BadRequest' } });
  });

  it('lists only the namespace asked for', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedConfigMap({ namespace: 'team-b' });
    expect(list.items.map((c) => c.metadata?.name)).toEqual(['cm-x', 'unlabelled']);
  });

  it('lists Deployments with AppsV1Api', async () => {
    const apps = h.kc.makeApiClient(AppsV1Api);
    const list = await apps.listNamespacedDeployment({ namespace: 'team-a' });
    expect(list.items.map((d) => d.metadata?.name)).toEqual(['web']);
    expect(list.items[0]?.spec?.replicas).toBe(2);
  });

  it('lists a custom resource kind with KubernetesObjectApi (which runs discovery first)', async () => {
    h.em.apply({
      apiVersion: 'kpt.dev/v1alpha1',
      kind: 'ResourceGroup',
      metadata: { name: 'inventory', namespace: 'team-a' },
      spec: { resources: [] },
    });
    const objects = KubernetesObjectApi.makeApiClient(h.kc);
    const list = await objects.list('kpt.dev/v1alpha1', 'ResourceGroup', 'team-a');
    expect(list.items.map((o) => o.metadata?.name)).toEqual(['inventory']);
    expect(h.em.requestCount({ verb: 'discovery', path: '/apis/kpt.dev/v1alpha1' })).toBeGreaterThanOrEqual(1);
  });
});

describe('pagination', () => {
  it('pages 250 objects with limit and continue, each once, in name order', async () => {
    const objs = [];
    for (let i = 0; i < 250; i++) objs.push(configMap(`page-${String(i).padStart(3, '0')}`, 'paging'));
    h.em.apply(objs);
    const core = h.kc.makeApiClient(CoreV1Api);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await core.listNamespacedConfigMap({
        namespace: 'paging',
        limit: 40,
        ...(token ? { _continue: token } : {}),
      });
      seen.push(...page.items.map((c) => c.metadata?.name ?? ''));
      if (page.metadata?._continue) expect(page.metadata.remainingItemCount).toBe(250 - seen.length);
      token = page.metadata?._continue || undefined;
      pages++;
    } while (token);
    expect(pages).toBe(7);
    expect(seen).toEqual(objs.map((o) => (o['metadata'] as { name: string }).name));
  });

  it('answers 410 Expired for a continue token from before compact()', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const first = await core.listNamespacedConfigMap({ namespace: 'paging', limit: 10 });
    h.em.apply(configMap('page-new', 'paging'));
    h.em.compact();
    const err = await core
      .listNamespacedConfigMap({ namespace: 'paging', limit: 10, _continue: first.metadata?._continue ?? '' })
      .catch((e: unknown) => e);
    expect(readApiError(err)).toMatchObject({ code: 410, status: { reason: 'Expired' } });
  });
});
