import { describe, expect, it } from 'vitest';
import { detectPhaseSource, mergePhases, parseInventory } from '../../../src/inventory/parse-inventory.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';
import type { Phase, PhaseParseResult } from '../../../src/inventory/types.ts';
import { loadAirshipctlInventory, loadInventoryFixture } from './load-fixture.ts';

function expectPhase(result: PhaseParseResult): Phase {
  if (!result.ok) throw new Error(`expected a phase, got error ${result.error.code}: ${result.error.message}`);
  return result.phase;
}

describe('shared inventory examples', () => {
  it.each([
    {
      file: 'cli-utils-configmap.json',
      source: 'cli-utils',
      id: '3f0b6c1e-6a3c-4f2e-9f7e-2a6d1c9b8e41',
      name: '3f0b6c1e-6a3c-4f2e-9f7e-2a6d1c9b8e41',
      namespace: 'shop',
      keys: [
        '/ConfigMap/shop/frontend',
        '/Namespace//shop',
        '/Service/shop/frontend',
        'apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com',
        'apps/Deployment/shop/frontend',
        'apps/StatefulSet/shop/orders',
        'batch/Job/shop/old-worker',
        'policy/PodDisruptionBudget/shop/frontend-pdb',
        'rbac.authorization.k8s.io/ClusterRole//system:aggregate-to-view:shop',
      ],
    },
    {
      file: 'kpt-resourcegroup.json',
      source: 'resourcegroup',
      id: 'a1f0e4a6c5d7b9e8f1a2b3c4d5e6f708192a3b4c-1700000000000000000',
      name: 'inventory-shop',
      namespace: 'shop',
      keys: [
        '/Namespace//shop',
        '/Service/shop/frontend',
        'apps/Deployment/shop/frontend',
        'batch/Job/shop/db-migrate',
      ],
    },
    {
      file: 'flux-kustomization.json',
      source: 'flux',
      id: 'Kustomization/flux-system/shop',
      name: 'shop',
      namespace: 'flux-system',
      keys: [
        '/ConfigMap/shop/frontend',
        '/Namespace//shop',
        '/Service/shop/frontend',
        'apps/Deployment/shop/frontend',
        'autoscaling/HorizontalPodAutoscaler/shop/frontend',
        'bitnami.com/SealedSecret/shop/db-credentials',
        'rbac.authorization.k8s.io/Role/shop/shop-reader',
      ],
    },
    {
      file: 'flux-helmrelease.json',
      source: 'flux',
      id: 'HelmRelease/shop/podinfo',
      name: 'podinfo',
      namespace: 'shop',
      keys: [
        '/Service/shop/podinfo',
        'apps/Deployment/shop/podinfo',
        'autoscaling/HorizontalPodAutoscaler/shop/podinfo',
      ],
    },
    {
      file: 'argocd-application.json',
      source: 'argocd',
      id: 'argocd/shop',
      name: 'shop',
      namespace: 'argocd',
      keys: [
        '/ConfigMap/shop/frontend',
        '/Namespace//shop',
        '/Service/shop/frontend',
        'apps/Deployment/shop/frontend',
        'apps/StatefulSet/shop/orders',
        'batch/Job/shop/db-migrate',
      ],
    },
  ])('$file is a $source phase "$name" with every listed resource', ({ file, source, id, name, namespace, keys }) => {
    const obj = loadInventoryFixture(file);
    expect(detectPhaseSource(obj)).toBe(source);
    const phase = expectPhase(parseInventory(obj));
    expect(phase).toMatchObject({ source, id, name, namespace, errors: [] });
    expect(phase.entries.map(refKey)).toEqual(keys);
  });

  it('airshipctl: the inventory-id label is the phase name and the generated namespace is an entry', () => {
    const phase = expectPhase(parseInventory(loadAirshipctlInventory()));
    expect(phase).toMatchObject({
      source: 'cli-utils',
      id: 'initinfra-target',
      name: 'initinfra-target',
      namespace: 'airshipit-initinfra-target',
    });
    expect(phase.entries.map(refKey)).toContain('/Namespace//airshipit-initinfra-target');
    expect(phase.entries.map(refKey)).toContain('metal3.io/BareMetalHost/target-infra/node01');
    expect(phase.entries).toHaveLength(6);
    expect(phase.inventoryRef).toEqual({
      group: '',
      kind: 'ConfigMap',
      namespace: 'airshipit-initinfra-target',
      name: 'inventory-00529187',
    });
  });

  it('cli-utils: JSON status values become entry details; empty values give none', () => {
    const phase = expectPhase(parseInventory(loadInventoryFixture('cli-utils-configmap.json')));
    expect(phase.details['apps/StatefulSet/shop/orders']).toEqual({
      strategy: 'Apply',
      actuation: 'Failed',
      reconcile: 'Skipped',
    });
    expect(phase.details['batch/Job/shop/old-worker']?.strategy).toBe('Delete');
    expect(phase.details['policy/PodDisruptionBudget/shop/frontend-pdb']).toBeUndefined();
  });

  it('cli-utils: entries that all carry the same detail each have it, and a phase built from it has them again', () => {
    const data = {
      shop_web_apps_Deployment: '{"strategy":"Apply","actuation":"Succeeded"}',
      shop_db_apps_StatefulSet: '{"strategy":"Apply","actuation":"Succeeded"}',
      _shop__Namespace: '{"strategy":"Apply","actuation":"Succeeded"}',
    };
    const inventory = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'inv', namespace: 'shop', labels: { 'cli-utils.sigs.k8s.io/inventory-id': 'shop-inv' } },
      data,
    };
    const phase = expectPhase(parseInventory(inventory));
    const detail = { strategy: 'Apply', actuation: 'Succeeded' };
    expect(phase.details).toEqual({
      'apps/Deployment/shop/web': detail,
      'apps/StatefulSet/shop/db': detail,
      '/Namespace//shop': detail,
    });
    // Merged with an inventory of other details, each entry keeps its own.
    const other = expectPhase(
      parseInventory({
        ...inventory,
        metadata: { ...inventory.metadata, name: 'inv-2' },
        data: { shop_jobs_batch_Job: '{"strategy":"Delete"}' },
      }),
    );
    const [merged] = mergePhases([phase, other]);
    expect(merged?.details).toEqual({
      'apps/Deployment/shop/web': detail,
      'apps/StatefulSet/shop/db': detail,
      '/Namespace//shop': detail,
      'batch/Job/shop/jobs': { strategy: 'Delete' },
    });
  });

  it('a phase without errors can be given some: errors are replaced, and other phases keep none', () => {
    const first = expectPhase(parseInventory(loadInventoryFixture('flux-kustomization.json')));
    const second = expectPhase(parseInventory(loadInventoryFixture('argocd-application.json')));
    expect(first.errors).toEqual([]);
    first.errors = [...first.errors, { code: 'OWNED_READ_FAILED', message: 'cannot list' }];
    expect(first.errors).toHaveLength(1);
    expect(second.errors).toEqual([]);
    // The shared empty list cannot be added to by mistake.
    expect(() => (second.errors as unknown[]).push({})).toThrow(TypeError);
  });

  it('Flux: entry versions come from "v"', () => {
    const phase = expectPhase(parseInventory(loadInventoryFixture('flux-kustomization.json')));
    const hpa = phase.entries.find((e) => e.kind === 'HorizontalPodAutoscaler');
    expect(hpa?.version).toBe('v2');
  });

  it('Argo CD: sync status and hook flags become entry details', () => {
    const phase = expectPhase(parseInventory(loadInventoryFixture('argocd-application.json')));
    expect(phase.details['batch/Job/shop/db-migrate']).toEqual({ syncStatus: 'Synced', hook: true });
    expect(phase.details['apps/StatefulSet/shop/orders']).toEqual({ syncStatus: 'OutOfSync' });
  });

  it('kpt: actuation data from status.resourceStatuses becomes entry details', () => {
    const phase = expectPhase(parseInventory(loadInventoryFixture('kpt-resourcegroup.json')));
    expect(phase.details['batch/Job/shop/db-migrate']).toEqual({
      strategy: 'Apply',
      actuation: 'Succeeded',
      reconcile: 'Failed',
    });
  });
});

const configMap = (
  data: unknown,
  labels: Record<string, string> = { 'cli-utils.sigs.k8s.io/inventory-id': 'web' },
) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'inventory-1', namespace: 'shop', labels },
  data,
});
const kustomization = (status: unknown) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'apps', namespace: 'flux-system' },
  status,
});

describe('malformed entries are phase errors and the good entries are kept', () => {
  it.each([
    {
      label: 'ConfigMap key with too few fields',
      obj: configMap({ shop_web_apps_Deployment: '', 'not-an-id': '' }),
      good: ['apps/Deployment/shop/web'],
      bad: { code: 'MALFORMED_ID', entry: 'not-an-id' },
    },
    {
      label: 'ConfigMap value that is not JSON keeps the entry',
      obj: configMap({ shop_web_apps_Deployment: '{oops' }),
      good: ['apps/Deployment/shop/web'],
      bad: { code: 'MALFORMED_STATUS_VALUE', entry: 'shop_web_apps_Deployment' },
    },
    {
      label: 'Flux entry with an empty name',
      obj: kustomization({
        inventory: {
          entries: [
            { id: 'shop__apps_Deployment', v: 'v1' },
            { id: 'shop_web__Service', v: 'v1' },
          ],
        },
      }),
      good: ['/Service/shop/web'],
      bad: { code: 'MALFORMED_ID', entry: 'shop__apps_Deployment' },
    },
    {
      label: 'Flux entry without an id',
      obj: kustomization({ inventory: { entries: [{ v: 'v1' }, { id: 'shop_web__Service', v: 'v1' }] } }),
      good: ['/Service/shop/web'],
      bad: { code: 'MALFORMED_ENTRY', entry: 'entries[0]' },
    },
    {
      label: 'ResourceGroup resource without a name',
      obj: {
        apiVersion: 'kpt.dev/v1alpha1',
        kind: 'ResourceGroup',
        metadata: { name: 'rg', namespace: 'shop' },
        spec: {
          resources: [
            { group: 'apps', kind: 'Deployment', namespace: 'shop' },
            { group: '', kind: 'Service', namespace: 'shop', name: 'web' },
          ],
        },
      },
      good: ['/Service/shop/web'],
      bad: { code: 'MALFORMED_ENTRY', entry: 'spec.resources[0]' },
    },
    {
      label: 'Argo resource with a numeric name',
      obj: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: 'a', namespace: 'argocd' },
        status: {
          resources: [
            { kind: 'Service', name: 7 },
            { version: 'v1', kind: 'Service', namespace: 'shop', name: 'web' },
          ],
        },
      },
      good: ['/Service/shop/web'],
      bad: { code: 'MALFORMED_ENTRY', entry: 'status.resources[0]' },
    },
    {
      label: 'ConfigMap value whose actuation is a number keeps the entry and its string fields',
      obj: configMap({ shop_web_apps_Deployment: '{"strategy":"Apply","actuation":3}' }),
      good: ['apps/Deployment/shop/web'],
      bad: { code: 'MALFORMED_STATUS_VALUE', entry: 'shop_web_apps_Deployment' },
    },
    {
      label: 'ResourceGroup resource status whose reconcile is an object',
      obj: {
        apiVersion: 'kpt.dev/v1alpha1',
        kind: 'ResourceGroup',
        metadata: { name: 'rg', namespace: 'shop' },
        spec: { resources: [{ group: '', kind: 'Service', namespace: 'shop', name: 'web' }] },
        status: {
          resourceStatuses: [
            { group: '', kind: 'Service', namespace: 'shop', name: 'web', actuation: 'Succeeded', reconcile: {} },
          ],
        },
      },
      good: ['/Service/shop/web'],
      bad: { code: 'MALFORMED_STATUS_VALUE', entry: 'status.resourceStatuses[0]' },
    },
    {
      label: 'Argo resource whose sync status is a boolean',
      obj: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: 'a', namespace: 'argocd' },
        status: { resources: [{ version: 'v1', kind: 'Service', namespace: 'shop', name: 'web', status: true }] },
      },
      good: ['/Service/shop/web'],
      bad: { code: 'MALFORMED_STATUS_VALUE', entry: 'status.resources[0]' },
    },
  ])('$label', ({ obj, good, bad }) => {
    const phase = expectPhase(parseInventory(obj));
    expect(phase.entries.map(refKey)).toEqual(good);
    expect(phase.errors).toHaveLength(1);
    expect(phase.errors[0]).toMatchObject(bad);
    expect(phase.errors[0]?.message).toMatch(/\S/);
  });
});

describe('applier status values are kept as the tool wrote them', () => {
  it.each([
    {
      label: 'cli-utils value with a number keeps its string fields',
      obj: configMap({ shop_web_apps_Deployment: '{"strategy":"Apply","actuation":3,"reconcile":"Pending"}' }),
      detail: { strategy: 'Apply', reconcile: 'Pending' },
    },
    {
      label: 'cli-utils value with a reconcile cli-utils does not define',
      obj: configMap({ shop_web_apps_Deployment: '{"actuation":"Succeeded","reconcile":"Superseded"}' }),
      detail: { actuation: 'Succeeded', reconcile: 'Superseded' },
    },
    {
      label: 'Argo sync status phaselog does not know',
      obj: {
        apiVersion: 'argoproj.io/v1alpha1',
        kind: 'Application',
        metadata: { name: 'a', namespace: 'argocd' },
        status: { resources: [{ version: 'v1', kind: 'Service', namespace: 'shop', name: 'web', status: 'Drifting' }] },
      },
      detail: { syncStatus: 'Drifting' },
    },
  ])('$label', ({ obj, detail }) => {
    const phase = expectPhase(parseInventory(obj));
    expect(Object.values(phase.details)).toEqual([detail]);
  });
});

describe('edge cases of whole inventories', () => {
  it.each([
    ['ConfigMap inventory with no data', configMap(undefined)],
    ['ConfigMap inventory with empty data', configMap({})],
    ['Kustomization that has not applied yet (no status)', kustomization(undefined)],
    ['Kustomization with an empty inventory', kustomization({ inventory: { entries: [] } })],
    ['Kustomization whose inventory was cleared (null)', kustomization({ inventory: null })],
    [
      'Argo Application without status',
      { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'a', namespace: 'argocd' } },
    ],
  ])('%s is an empty phase without errors', (_label, obj) => {
    const phase = expectPhase(parseInventory(obj));
    expect(phase.entries).toEqual([]);
    expect(phase.errors).toEqual([]);
  });

  it('duplicate Flux entries appear once', () => {
    const phase = expectPhase(
      parseInventory(
        kustomization({
          inventory: {
            entries: [
              { id: 'shop_web_apps_Deployment', v: 'v1' },
              { id: 'shop_web__Service', v: 'v1' },
              { id: 'shop_web_apps_Deployment', v: 'v1' },
            ],
          },
        }),
      ),
    );
    expect(phase.entries.map(refKey)).toEqual(['/Service/shop/web', 'apps/Deployment/shop/web']);
  });

  it('entries are sorted the same way whatever order the tool wrote them in', () => {
    const ids = ['shop_b__Service', '_shop__Namespace', 'shop_a_apps_Deployment', 'shop_a__Service'];
    const forward = expectPhase(
      parseInventory(kustomization({ inventory: { entries: ids.map((id) => ({ id, v: 'v1' })) } })),
    );
    const backward = expectPhase(
      parseInventory(kustomization({ inventory: { entries: [...ids].reverse().map((id) => ({ id, v: 'v1' })) } })),
    );
    expect(forward.entries).toEqual(backward.entries);
  });

  it.each([
    ['null', null, 'MALFORMED_INVENTORY'],
    ['a string', 'inventory', 'MALFORMED_INVENTORY'],
    ['a ConfigMap without the inventory-id label', configMap({}, {}), 'UNSUPPORTED_OBJECT'],
    ['a Deployment', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } }, 'UNSUPPORTED_OBJECT'],
    [
      'a Kustomization whose inventory entries is a string',
      kustomization({ inventory: { entries: 'oops' } }),
      'MALFORMED_INVENTORY',
    ],
    [
      'a ResourceGroup whose resources is an object',
      {
        apiVersion: 'kpt.dev/v1alpha1',
        kind: 'ResourceGroup',
        metadata: { name: 'rg', namespace: 'x' },
        spec: { resources: {} },
      },
      'MALFORMED_INVENTORY',
    ],
    ['an inventory ConfigMap whose data is a list', configMap([]), 'MALFORMED_INVENTORY'],
    [
      'an Argo Application without a name',
      { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: {} },
      'MALFORMED_INVENTORY',
    ],
  ])('%s gives one clear error instead of a throw', (_label, obj, code) => {
    const result = parseInventory(obj);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe(code);
      expect(result.error.message.length).toBeGreaterThan(10);
    }
  });

  it('ConfigMaps sharing one inventory-id merge into one phase (cli-utils label strategy)', () => {
    const a = expectPhase(parseInventory(configMap({ shop_web_apps_Deployment: '' })));
    const b = expectPhase(
      parseInventory({
        ...configMap({ shop_web__Service: '', shop_web_apps_Deployment: '' }),
        metadata: { name: 'inventory-2', namespace: 'shop', labels: { 'cli-utils.sigs.k8s.io/inventory-id': 'web' } },
      }),
    );
    const merged = mergePhases([a, b]);
    expect(merged).toHaveLength(1);
    expect(merged[0]?.entries.map(refKey)).toEqual(['/Service/shop/web', 'apps/Deployment/shop/web']);
  });

  it('merged ConfigMaps keep the details of every one, the first one winning', () => {
    const a = expectPhase(
      parseInventory(configMap({ shop_web_apps_Deployment: '{"strategy":"Apply","actuation":"Succeeded"}' })),
    );
    const b = expectPhase(
      parseInventory({
        ...configMap({
          shop_web__Service: '{"strategy":"Apply","actuation":"Failed"}',
          shop_web_apps_Deployment: '{"strategy":"Delete"}',
        }),
        metadata: { name: 'inventory-2', namespace: 'shop', labels: { 'cli-utils.sigs.k8s.io/inventory-id': 'web' } },
      }),
    );
    expect(mergePhases([a, b])[0]?.details).toEqual({
      '/Service/shop/web': { strategy: 'Apply', actuation: 'Failed' },
      'apps/Deployment/shop/web': { strategy: 'Apply', actuation: 'Succeeded' },
    });
  });

  it("a parsed phase's details copy, serialise and can be replaced like its other fields", () => {
    const phase = expectPhase(parseInventory(loadInventoryFixture('cli-utils-configmap.json')));
    const orders = { strategy: 'Apply', actuation: 'Failed', reconcile: 'Skipped' };
    expect({ ...phase }.details['apps/StatefulSet/shop/orders']).toEqual(orders);
    expect((JSON.parse(JSON.stringify(phase)) as Phase).details['apps/StatefulSet/shop/orders']).toEqual(orders);
    expect(Object.keys(phase.details)).toHaveLength(8);
    phase.details = { 'apps/StatefulSet/shop/orders': { strategy: 'Delete' } };
    expect(phase.details).toEqual({ 'apps/StatefulSet/shop/orders': { strategy: 'Delete' } });
  });
});
