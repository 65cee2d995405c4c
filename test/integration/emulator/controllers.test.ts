/**
 * What the emulator's stand-ins for kube-apiserver's and kube-controller-manager's controllers
 * write: CRD status (NamesAccepted, Established) and, when asked, completed Deployment rollouts.
 */
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployment, rawRequest, startHarness, type Harness } from './helpers.ts';

let plain: Harness;
let settling: Harness;

beforeAll(async () => {
  plain = await startHarness();
  settling = await startHarness({ completeRollouts: true });
});

afterAll(async () => {
  await plain?.em.close();
  await settling?.em.close();
});

const gadgetCrd = (shortNames: string[] = []): V1CustomResourceDefinition => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Gadget', plural: 'gadgets', shortNames },
    versions: [
      { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
    ],
  },
});

function conditionsOf(
  crd: V1CustomResourceDefinition,
): Record<string, { status: string; reason?: string; lastTransitionTime?: Date | string }> {
  return Object.fromEntries((crd.status?.conditions ?? []).map((c) => [c.type, c]));
}

describe('CustomResourceDefinition status', () => {
  it.each([
    ['kpt ResourceGroup', 'resourcegroups.kpt.dev', 'ResourceGroup'],
    ['Flux Kustomization', 'kustomizations.kustomize.toolkit.fluxcd.io', 'Kustomization'],
    ['Argo CD Application', 'applications.argoproj.io', 'Application'],
  ])('the built-in %s CRD is Established with its names accepted', async (_label, name, kind) => {
    const crd = await plain.kc.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name });
    const c = conditionsOf(crd);
    expect(c['NamesAccepted']).toMatchObject({ status: 'True', reason: 'NoConflicts' });
    expect(c['Established']).toMatchObject({ status: 'True', reason: 'InitialNamesAccepted' });
    expect(crd.status?.acceptedNames).toMatchObject({ kind, listKind: `${kind}List` });
  });

  it('a CRD created through the API comes back Established, with defaulted names and its storage version', async () => {
    const api = settling.kc.makeApiClient(ApiextensionsV1Api);
    await api.createCustomResourceDefinition({ body: gadgetCrd() });
    const crd = await api.readCustomResourceDefinition({ name: 'gadgets.example.com' });
    expect(conditionsOf(crd)['Established']?.status).toBe('True');
    expect(conditionsOf(crd)['NamesAccepted']?.status).toBe('True');
    expect(crd.status?.acceptedNames).toEqual({
      kind: 'Gadget',
      listKind: 'GadgetList',
      plural: 'gadgets',
      singular: 'gadget',
    });
    expect(crd.status?.storedVersions).toEqual(['v1']);
  });

  it('keeps the conditions and their transition times across a spec change, and takes the new names', async () => {
    const api = settling.kc.makeApiClient(ApiextensionsV1Api);
    const before = await api.readCustomResourceDefinition({ name: 'gadgets.example.com' });
    await api.replaceCustomResourceDefinition({
      name: 'gadgets.example.com',
      body: { ...gadgetCrd(['gd']), metadata: before.metadata },
    });
    const after = await api.readCustomResourceDefinition({ name: 'gadgets.example.com' });
    expect(conditionsOf(after)['Established']?.lastTransitionTime).toEqual(
      conditionsOf(before)['Established']?.lastTransitionTime,
    );
    expect(after.status?.acceptedNames?.shortNames).toEqual(['gd']);
  });

  it('puts the conditions back when a client overwrites the status, as the controllers would', async () => {
    const res = await rawRequest(
      settling.em,
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com/status',
      {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/merge-patch+json' },
        body: JSON.stringify({
          status: {
            conditions: [
              {
                type: 'Established',
                status: 'False',
                reason: 'Broken',
                message: 'x',
                lastTransitionTime: '2020-01-01T00:00:00Z',
              },
            ],
          },
        }),
      },
    );
    expect(res.status).toBe(200);
    const crd = await settling.kc
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: 'gadgets.example.com' });
    expect(conditionsOf(crd)['Established']).toMatchObject({ status: 'True', reason: 'InitialNamesAccepted' });
  });
});

describe('workload rollouts', () => {
  it('are left alone by default: an API-created Deployment has no status until someone writes one', async () => {
    const apps = plain.kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: deployment('idle', 'default', 'nginx:1.25', 3),
    });
    const dep = await apps.readNamespacedDeployment({ name: 'idle', namespace: 'default' });
    expect(dep.status ?? {}).toEqual({});
  });

  it('complete after create, update and scale with completeRollouts', async () => {
    const apps = settling.kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('shop', 'default', 'shop:1', 3) });
    let dep = await apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' });
    expect(dep.status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    expect(dep.status?.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
      'Available=True/MinimumReplicasAvailable',
      'Progressing=True/NewReplicaSetAvailable',
    ]);

    await apps.patchNamespacedDeployment({
      name: 'shop',
      namespace: 'default',
      body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'shop:2' }],
    });
    dep = await apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' });
    expect(dep.metadata?.generation).toBe(2);
    expect(dep.status?.observedGeneration).toBe(2);

    await apps.patchNamespacedDeploymentScale({
      name: 'shop',
      namespace: 'default',
      body: [{ op: 'replace', path: '/spec/replicas', value: 0 }],
    });
    dep = await apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' });
    expect(dep.status?.observedGeneration).toBe(3);
    expect(dep.status?.replicas ?? 0).toBe(0);
  });

  it('keep ReplicaSets and Pods behind a completed rollout: a new ReplicaSet per template, the old one scaled to 0', async () => {
    const apps = settling.kc.makeApiClient(AppsV1Api);
    const core = settling.kc.makeApiClient(CoreV1Api);
    const owned = async () => {
      const sets = (await apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=tree' })).items;
      const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=tree' })).items;
      return {
        sets: sets
          .map(
            (rs) =>
              `${rs.metadata?.ownerReferences?.[0]?.kind}/${rs.metadata?.ownerReferences?.[0]?.name} -> ${rs.metadata?.name} ${rs.spec?.replicas}/${rs.status?.readyReplicas ?? 0}`,
          )
          .sort(),
        pods: pods
          .map(
            (p) =>
              `${p.metadata?.ownerReferences?.[0]?.name} -> ${p.status?.conditions?.find((c) => c.type === 'Ready')?.status}`,
          )
          .sort(),
      };
    };
    await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('tree', 'default', 'tree:1', 2) });
    const first = await owned();
    expect(first.sets).toEqual([expect.stringMatching(/^Deployment\/tree -> tree-[a-z0-9]{10} 2\/2$/)]);
    const rs1 = first.sets[0]!.split(' ')[2]!;
    expect(first.pods).toEqual([`${rs1} -> True`, `${rs1} -> True`]);

    await apps.patchNamespacedDeployment({
      name: 'tree',
      namespace: 'default',
      body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'tree:2' }],
    });
    const second = await owned();
    const rs2 = second.sets.map((l) => l.split(' ')[2]!).find((n) => n !== rs1)!;
    expect(second.sets).toEqual([`Deployment/tree -> ${rs1} 0/0`, `Deployment/tree -> ${rs2} 2/2`].sort());
    expect(second.pods).toEqual([`${rs2} -> True`, `${rs2} -> True`]);

    // Scaling keeps the ReplicaSet and changes its Pods; deleting the Deployment takes everything.
    await apps.patchNamespacedDeploymentScale({
      name: 'tree',
      namespace: 'default',
      body: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
    });
    expect((await owned()).pods).toHaveLength(3);
    await apps.deleteNamespacedDeployment({ name: 'tree', namespace: 'default' });
    expect(await owned()).toEqual({ sets: [], pods: [] });
  });

  it("keep a StatefulSet's Pods, named by ordinal", async () => {
    const apps = settling.kc.makeApiClient(AppsV1Api);
    const core = settling.kc.makeApiClient(CoreV1Api);
    const sts = { ...deployment('db', 'default', 'db:1', 2), kind: 'StatefulSet' } as Record<string, unknown>;
    await apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: { ...sts, spec: { ...(sts['spec'] as object), serviceName: 'db' } } as never,
    });
    const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=db' })).items;
    expect(pods.map((p) => `${p.metadata?.name} ${p.metadata?.ownerReferences?.[0]?.kind}`).sort()).toEqual([
      'db-0 StatefulSet',
      'db-1 StatefulSet',
    ]);
  });

  it('get the apps/v1 update-strategy default on API writes, and keep a given one', async () => {
    const apps = plain.kc.makeApiClient(AppsV1Api);
    expect((await apps.readNamespacedDeployment({ name: 'idle', namespace: 'default' })).spec?.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
    });
    const recreate = { ...deployment('recreate', 'default') } as { spec: Record<string, unknown> };
    recreate.spec = { ...recreate.spec, strategy: { type: 'Recreate' } };
    await apps.createNamespacedDeployment({ namespace: 'default', body: recreate as never });
    expect((await apps.readNamespacedDeployment({ name: 'recreate', namespace: 'default' })).spec?.strategy).toEqual({
      type: 'Recreate',
    });
    plain.em.apply(deployment('fixture', 'default'));
    expect(
      (
        plain.em.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'fixture' })?.[
          'spec'
        ] as Record<string, unknown>
      )['strategy'],
    ).toBeUndefined();
  });

  it('leave in-process writes alone even with completeRollouts, so scenarios keep control of status', () => {
    settling.em.apply(deployment('scripted', 'default', 'x:1', 2));
    expect(
      settling.em.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'scripted' })?.[
        'status'
      ],
    ).toBeUndefined();
  });
});
