import {
  AppsV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Deployment,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configMap, deployment, rawRequest, readApiError, startHarness, type Harness } from './helpers.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.em.close();
});

const dref = (name: string, namespace = 'default') => ({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });

async function send(method: string, path: string, body: unknown, contentType = 'application/json') {
  return rawRequest(h.em, path, {
    method,
    headers: { 'Content-Type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('create and update', () => {
  it('creates with uid, creationTimestamp, generation 1 and a fresh resourceVersion, dropping status', async () => {
    const apps = h.kc.makeApiClient(AppsV1Api);
    const before = h.em.resourceVersion();
    const body = { ...deployment('c1'), status: { readyReplicas: 5 } } as V1Deployment;
    const created = await apps.createNamespacedDeployment({ namespace: 'default', body });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.generation).toBe(1);
    expect(Number(created.metadata?.resourceVersion)).toBe(before + 1);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(created.status).toBeUndefined();
  });

  it('names an object from generateName with a random suffix', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { generateName: 'job-' }, data: {} },
    });
    expect(created.metadata?.name).toMatch(/^job-[0-9a-f]{5}$/);
  });

  it('rejects a create without a name with 422 Invalid', async () => {
    const res = await send('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {},
    });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ kind: 'Status', reason: 'Invalid' });
  });

  it('rejects a body that is not JSON with 400', async () => {
    const res = await send('POST', '/api/v1/namespaces/default/configmaps', '{not json');
    expect(res.status).toBe(400);
    expect(res.json['kind']).toBe('Status');
  });

  it('answers dry-run writes as if done while changing nothing', async () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'rehearsal' };
    const rv = h.em.resourceVersion();
    const created = await send('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', configMap('rehearsal'));
    expect(created.status).toBe(201);
    expect(h.em.get(ref)).toBeUndefined();
    h.em.apply(configMap('rehearsal', 'default', {}, { a: '1' }));
    const patched = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/rehearsal?dryRun=All',
      { data: { a: '2' } },
      'application/merge-patch+json',
    );
    expect(patched.json['data']).toEqual({ a: '2' });
    const deleted = await send('DELETE', '/api/v1/namespaces/default/configmaps/rehearsal?dryRun=All', '');
    expect(deleted.status).toBe(200);
    expect(h.em.get(ref)?.['data']).toEqual({ a: '1' });
    expect(h.em.resourceVersion()).toBe(rv + 1);
    expect((await send('POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', configMap('x'))).status).toBe(400);
  });

  it('answers 409 AlreadyExists when creating twice', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('dup') });
    const err = await core
      .createNamespacedConfigMap({ namespace: 'default', body: configMap('dup') })
      .catch((e: unknown) => e);
    expect(readApiError(err)).toMatchObject({ code: 409, status: { reason: 'AlreadyExists' } });
  });

  it('answers 409 Conflict to a replace carrying a stale resourceVersion', async () => {
    const apps = h.kc.makeApiClient(AppsV1Api);
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('c2') as V1Deployment,
    });
    const fresh = { ...created, spec: { ...created.spec, replicas: 3 } } as V1Deployment;
    await apps.replaceNamespacedDeployment({ name: 'c2', namespace: 'default', body: fresh });
    const stale = { ...created, spec: { ...created.spec, replicas: 4 } } as V1Deployment;
    const err = await apps
      .replaceNamespacedDeployment({ name: 'c2', namespace: 'default', body: stale })
      .catch((e: unknown) => e);
    expect(readApiError(err)).toMatchObject({ code: 409, status: { reason: 'Conflict' } });
    expect((h.em.get(dref('c2'))?.['spec'] as { replicas: number }).replicas).toBe(3);
  });

  it.each([
    ['a spec change', 2, (d: V1Deployment) => ({ ...d, spec: { ...d.spec, replicas: 9 } })],
    ['a label change', 1, (d: V1Deployment) => ({ ...d, metadata: { ...d.metadata, labels: { changed: 'yes' } } })],
    ['a status change on the main resource (ignored)', 1, (d: V1Deployment) => ({ ...d, status: { replicas: 7 } })],
  ])('after %s the generation is %i', async (_what, expected, change) => {
    const apps = h.kc.makeApiClient(AppsV1Api);
    const name = `gen-${expected}-${Math.random().toString(36).slice(2, 7)}`;
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment(name) as V1Deployment,
    });
    const updated = await apps.replaceNamespacedDeployment({
      name,
      namespace: 'default',
      body: change(created) as V1Deployment,
    });
    expect(updated.metadata?.generation).toBe(expected);
  });

  it('writes only status through /status, without bumping generation', async () => {
    const apps = h.kc.makeApiClient(AppsV1Api);
    const created = await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('st') as V1Deployment,
    });
    const updated = await apps.replaceNamespacedDeploymentStatus({
      name: 'st',
      namespace: 'default',
      body: {
        ...created,
        spec: { ...created.spec, replicas: 99 },
        status: { observedGeneration: 1, readyReplicas: 2 },
      } as V1Deployment,
    });
    expect(updated.status?.readyReplicas).toBe(2);
    expect(updated.spec?.replicas).toBe(2);
    expect(updated.metadata?.generation).toBe(1);
  });

  it('keeps the stored status when an in-process apply changes only the spec', () => {
    h.em.apply({ ...deployment('keep'), status: { observedGeneration: 1, readyReplicas: 2 } });
    h.em.apply(deployment('keep', 'default', 'nginx:1.99'));
    const d = h.em.get(dref('keep'));
    expect(d?.metadata?.['generation']).toBe(2);
    expect(d?.['status']).toEqual({ observedGeneration: 1, readyReplicas: 2 });
  });

  it('does not bump the resourceVersion for a no-op update', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: configMap('noop', 'default', {}, { a: '1' }),
    });
    const same = await core.replaceNamespacedConfigMap({ name: 'noop', namespace: 'default', body: created });
    expect(same.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });
});

describe('namespaces', () => {
  it('creates in a namespace that does not exist unless strictNamespaces is set', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'not-created', body: configMap('loose', 'not-created') });
    const strict = await startHarness({ strictNamespaces: true });
    try {
      const strictCore = strict.kc.makeApiClient(CoreV1Api);
      const err = await strictCore
        .createNamespacedConfigMap({ namespace: 'not-created', body: configMap('x', 'not-created') })
        .catch((e: unknown) => e);
      expect(readApiError(err).code).toBe(404);
      expect(readApiError(err).status['message']).toBe('namespaces "not-created" not found');
      await strictCore.createNamespace({ body: { metadata: { name: 'not-created' } } });
      await strictCore.createNamespacedConfigMap({ namespace: 'not-created', body: configMap('x', 'not-created') });
    } finally {
      await strict.em.close();
    }
  });
});

describe('patch', () => {
  it('applies a JSON merge patch', async () => {
    h.em.apply(configMap('mp', 'default', { a: '1' }, { x: '1', y: '2' }));
    const res = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/mp',
      { data: { x: null, z: '3' } },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(200);
    expect(res.json['data']).toEqual({ y: '2', z: '3' });
  });

  it('applies a JSON patch and answers 422 when a test op fails', async () => {
    h.em.apply(configMap('jp', 'default', {}, { x: '1' }));
    const ok = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/jp',
      [
        { op: 'add', path: '/data/y', value: '2' },
        { op: 'remove', path: '/data/x' },
      ],
      'application/json-patch+json',
    );
    expect(ok.json['data']).toEqual({ y: '2' });
    const bad = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/jp',
      [{ op: 'test', path: '/data/y', value: 'nope' }],
      'application/json-patch+json',
    );
    expect(bad.status).toBe(422);
    expect(bad.json['kind']).toBe('Status');
  });

  it('merges containers by name in a strategic merge patch', async () => {
    const apps = h.kc.makeApiClient(AppsV1Api);
    const d = deployment('smp');
    const spec = d['spec'] as { template: { spec: { containers: object[] } } };
    spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox' });
    h.em.apply(d);
    const patched = await apps.patchNamespacedDeployment(
      {
        name: 'smp',
        namespace: 'default',
        body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(patched.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image}`)).toEqual([
      'main=nginx:1.27',
      'sidecar=busybox',
    ]);
    expect(patched.metadata?.generation).toBe(2);
  });

  it('patches status through the /status subresource with a merge patch', async () => {
    const apps = h.kc.makeApiClient(AppsV1Api);
    h.em.apply(deployment('sp'));
    const patched = await apps.patchNamespacedDeploymentStatus(
      { name: 'sp', namespace: 'default', body: { status: { availableReplicas: 2 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.status?.availableReplicas).toBe(2);
    expect(patched.metadata?.generation).toBe(1);
  });

  it('creates and then updates through server-side apply', async () => {
    const objects = KubernetesObjectApi.makeApiClient(h.kc);
    const first = await objects.patch(
      configMap('ssa', 'default', {}, { a: '1' }) as V1ConfigMap,
      undefined,
      undefined,
      'phaselog-test',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect(first.metadata?.name).toBe('ssa');
    const second = await objects.patch(
      configMap('ssa', 'default', {}, { b: '2' }) as V1ConfigMap,
      undefined,
      undefined,
      'phaselog-test',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect((second as { data?: Record<string, string> }).data).toEqual({ a: '1', b: '2' });
  });

  it('refuses strategic merge patch on a custom resource with 415', async () => {
    h.em.apply({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'app', namespace: 'default' },
      spec: {},
    });
    const res = await send(
      'PATCH',
      '/apis/argoproj.io/v1alpha1/namespaces/default/applications/app',
      { spec: { x: 1 } },
      'application/strategic-merge-patch+json',
    );
    expect(res.status).toBe(415);
  });

  it('answers 409 when a patch carries a stale resourceVersion', async () => {
    h.em.apply(configMap('pv', 'default'));
    const res = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/pv',
      { metadata: { resourceVersion: '1' }, data: { a: 'b' } },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(409);
    expect(res.json['reason']).toBe('Conflict');
  });
});

describe('delete', () => {
  it('removes an object without finalizers at once', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    h.em.apply(configMap('gone-now'));
    await core.deleteNamespacedConfigMap({ name: 'gone-now', namespace: 'default' });
    expect(h.em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'gone-now' })).toBeUndefined();
  });

  it('keeps an object with finalizers Terminating until the last finalizer is removed', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'held' };
    h.em.apply({
      ...configMap('held'),
      metadata: { name: 'held', namespace: 'default', finalizers: ['example.com/a', 'example.com/b'] },
    });
    await core.deleteNamespacedConfigMap({ name: 'held', namespace: 'default' });
    const terminating = await core.readNamespacedConfigMap({ name: 'held', namespace: 'default' });
    expect(terminating.metadata?.deletionTimestamp).toBeInstanceOf(Date);

    await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/held',
      [{ op: 'replace', path: '/metadata/finalizers', value: ['example.com/b'] }],
      'application/json-patch+json',
    );
    expect(h.em.get(ref)).toBeDefined();
    const err = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/held',
      { metadata: { finalizers: ['example.com/b', 'example.com/new'] } },
      'application/merge-patch+json',
    );
    expect(err.status).toBe(422);

    await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/held',
      { metadata: { finalizers: null } },
      'application/merge-patch+json',
    );
    expect(h.em.get(ref)).toBeUndefined();
  });

  it('holds a Foreground deletion until dependents are gone, then cascades', async () => {
    h.em.apply(deployment('owner'));
    const uid = String(h.em.get(dref('owner'))?.metadata?.['uid']);
    h.em.apply({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: 'owner-rs',
        namespace: 'default',
        finalizers: ['example.com/slow'],
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'owner', uid, controller: true }],
      },
      spec: { selector: { matchLabels: { app: 'owner' } } },
    });
    const rsRef = { apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'default', name: 'owner-rs' };
    const res = await send('DELETE', '/apis/apps/v1/namespaces/default/deployments/owner', {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Foreground',
    });
    expect(res.status).toBe(202);
    expect(h.em.get(dref('owner'))?.metadata?.['finalizers']).toEqual(['foregroundDeletion']);
    expect(h.em.get(rsRef)?.metadata?.['deletionTimestamp']).toBeDefined();

    h.em.apply({ ...h.em.get(rsRef), metadata: { ...h.em.get(rsRef)?.metadata, finalizers: [] } });
    expect(h.em.get(rsRef)).toBeUndefined();
    expect(h.em.get(dref('owner'))).toBeUndefined();
  });

  it('deletes dependents in the background when the owner goes', () => {
    h.em.apply(configMap('parent'));
    const uid = String(
      h.em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'parent' })?.metadata?.['uid'],
    );
    h.em.apply({
      ...configMap('child'),
      metadata: {
        name: 'child',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid }],
      },
    });
    h.em.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'parent' });
    expect(h.em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'child' })).toBeUndefined();
  });

  it('orphans dependents with propagationPolicy Orphan: they stay and lose the ownerReference', () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'orphan-parent' };
    h.em.apply(configMap('orphan-parent'));
    const uid = String(h.em.get(ref)?.metadata?.['uid']);
    h.em.apply({
      ...configMap('orphan-child'),
      metadata: {
        name: 'orphan-child',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'orphan-parent', uid }],
      },
    });
    h.em.remove(ref, { propagationPolicy: 'Orphan' });
    const child = h.em.get({ ...ref, name: 'orphan-child' });
    expect(h.em.get(ref)).toBeUndefined();
    expect(child).toBeDefined();
    expect(child?.metadata?.['ownerReferences']).toBeUndefined();
  });

  it('terminates a namespace: contents deleted, then the namespace', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    h.em.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    h.em.apply([
      configMap('one', 'doomed'),
      {
        ...configMap('stuck', 'doomed'),
        metadata: { name: 'stuck', namespace: 'doomed', finalizers: ['example.com/x'] },
      },
    ]);
    await core.deleteNamespace({ name: 'doomed' });
    const ns = await core.readNamespace({ name: 'doomed' });
    expect(ns.status?.phase).toBe('Terminating');
    const createErr = await core
      .createNamespacedConfigMap({ namespace: 'doomed', body: configMap('late', 'doomed') })
      .catch((e: unknown) => e);
    expect(readApiError(createErr).code).toBe(403);
    expect((await core.listNamespacedConfigMap({ namespace: 'doomed' })).items.map((c) => c.metadata?.name)).toEqual([
      'stuck',
    ]);

    h.em.apply({ ...configMap('stuck', 'doomed'), metadata: { name: 'stuck', namespace: 'doomed', finalizers: [] } });
    const gone = await core.readNamespace({ name: 'doomed' }).catch((e: unknown) => e);
    expect(readApiError(gone).code).toBe(404);
  });

  it('deletes a collection by label selector', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    h.em.apply([
      configMap('dc-1', 'dc', { batch: 'x' }),
      configMap('dc-2', 'dc', { batch: 'x' }),
      configMap('dc-3', 'dc', { batch: 'y' }),
    ]);
    await core.deleteCollectionNamespacedConfigMap({ namespace: 'dc', labelSelector: 'batch=x' });
    expect((await core.listNamespacedConfigMap({ namespace: 'dc' })).items.map((c) => c.metadata?.name)).toEqual([
      'dc-3',
    ]);
  });
});

describe('custom resource definitions', () => {
  it('serves a new kind once its CRD is created through the API', async () => {
    const objects = KubernetesObjectApi.makeApiClient(h.kc);
    await objects.create({
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
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object' } },
          },
        ],
      },
    } as never);
    const discovery = await rawRequest(h.em, '/apis/example.com/v1');
    expect((discovery.json['resources'] as { kind: string }[]).map((r) => r.kind)).toContain('Widget');
    await objects.create({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: 'default' },
    } as never);
    const list = await objects.list('example.com/v1', 'Widget', 'default');
    expect(list.items.map((i) => i.metadata?.name)).toEqual(['w']);
  });
});
