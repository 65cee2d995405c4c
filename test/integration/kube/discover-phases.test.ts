import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  discoverPhases,
  INVENTORY_WATCHES,
  type DiscoveredPhase,
  type DiscoverPhasesResult,
} from '../../../src/kube/discover-phases.ts';
import { createWatchSet } from '../../../src/kube/watch-set.ts';
import { loadAirshipctlInventory, loadInventoryFixture } from '../../unit/inventory/load-fixture.ts';
import { connect, startTestCluster, type TestCluster } from './helpers.ts';

const FIXTURES = [
  'cli-utils-configmap.json',
  'kpt-resourcegroup.json',
  'flux-kustomization.json',
  'flux-helmrelease.json',
  'argocd-application.json',
];

describe('finding phases in a cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
    const objects = [...FIXTURES.map(loadInventoryFixture), loadAirshipctlInventory()];
    const cm = objects[0]?.metadata as Record<string, unknown>;
    cm.managedFields = [{ manager: 'kapply', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }];
    // An ordinary ConfigMap must not be mistaken for an inventory.
    objects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'shop' },
      data: { a: 'b' },
    });
    cluster.emulator.apply(objects);
  });
  afterEach(() => cluster.emulator.clearFaults());
  afterAll(async () => cluster.close());

  it('finds every inventory format with its entries, and keeps a slimmed manifest', async () => {
    const result = await discoverPhases(cluster.client);
    expect(result.errors).toEqual([]);
    expect(result.invalid).toEqual([]);
    const summary = result.phases
      .map(({ phase }) => [phase.source, phase.namespace, phase.name, phase.entries.length])
      .sort();
    expect(summary).toEqual([
      ['argocd', 'argocd', 'shop', 6],
      ['cli-utils', 'airshipit-initinfra-target', 'initinfra-target', 6],
      ['cli-utils', 'shop', '3f0b6c1e-6a3c-4f2e-9f7e-2a6d1c9b8e41', 9],
      ['flux', 'flux-system', 'shop', 7],
      ['flux', 'shop', 'podinfo', 3],
      ['resourcegroup', 'shop', 'inventory-shop', 4],
    ]);
    const cliUtils = result.phases.find((d) => d.phase.namespace === 'shop' && d.phase.source === 'cli-utils');
    expect(cliUtils?.manifest).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'inventory-04873621' },
    });
    expect((cliUtils?.manifest.metadata as Record<string, unknown>).managedFields).toBeUndefined();
    const flux = result.phases.find((d) => d.phase.source === 'flux' && d.phase.name === 'shop');
    expect(flux?.manifest.status).toMatchObject({ lastAppliedRevision: expect.stringContaining('main@sha1') });
  });

  it('looks only in the configured namespaces', async () => {
    const result = await discoverPhases(cluster.client, { namespaces: ['shop'] });
    expect(result.phases.map((d) => `${d.phase.source}/${d.phase.name}`).sort()).toEqual([
      'cli-utils/3f0b6c1e-6a3c-4f2e-9f7e-2a6d1c9b8e41',
      'flux/podinfo',
      'resourcegroup/inventory-shop',
    ]);
  });

  it('skips disabled sources without asking the cluster about them', async () => {
    cluster.emulator.resetRequests();
    const result = await discoverPhases(cluster.client, { sources: { flux: false, argocd: false } });
    expect(result.phases.map((d) => d.phase.source).sort()).toEqual(['cli-utils', 'cli-utils', 'resourcegroup']);
    expect(cluster.emulator.requestCount({ resource: 'kustomizations' })).toBe(0);
    expect(cluster.emulator.requestCount({ resource: 'applications' })).toBe(0);
  });

  it('reports a forbidden source as data and still finds the others', async () => {
    cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'kustomizations' },
      effect: 'status',
      statusCode: 403,
    });
    const result = await discoverPhases(cluster.client);
    expect(result.errors).toEqual([
      expect.objectContaining({ kind: 'Kustomization', error: expect.objectContaining({ kind: 'FORBIDDEN' }) }),
    ]);
    expect(result.phases).toHaveLength(5);
  });

  it('reports an inventory object that cannot be parsed, and keeps the rest', async () => {
    cluster.emulator.apply({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'broken', namespace: 'flux-system' },
      spec: {},
      status: { inventory: { entries: 'oops' } },
    });
    try {
      const result = await discoverPhases(cluster.client);
      expect(result.invalid).toEqual([
        expect.objectContaining({
          source: 'flux',
          namespace: 'flux-system',
          name: 'broken',
          error: expect.objectContaining({ code: 'MALFORMED_INVENTORY' }),
        }),
      ]);
      expect(result.phases).toHaveLength(6);
    } finally {
      cluster.emulator.remove({
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        namespace: 'flux-system',
        name: 'broken',
      });
    }
  });
});

describe('clusters without some inventory kinds', () => {
  it('skips kinds the cluster does not serve without reporting an error', async () => {
    const cluster = await startTestCluster();
    try {
      cluster.emulator.apply(loadInventoryFixture('cli-utils-configmap.json'));
      for (const crd of [
        'applications.argoproj.io',
        'kustomizations.kustomize.toolkit.fluxcd.io',
        'helmreleases.helm.toolkit.fluxcd.io',
        'resourcegroups.kpt.dev',
      ]) {
        cluster.emulator.remove({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd });
      }
      const client = connect(cluster.emulator);
      const result = await discoverPhases(client);
      client.close();
      expect(result.errors).toEqual([]);
      expect(result.phases.map((d) => d.phase.source)).toEqual(['cli-utils']);
    } finally {
      await cluster.close();
    }
  });
});

describe('inventories parsed once, kept while they are listed', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
    cluster.emulator.apply(
      ['cli-utils-configmap.json', 'flux-kustomization.json', 'argocd-application.json'].map(loadInventoryFixture),
    );
  });
  afterEach(() => cluster.emulator.clearFaults());
  afterAll(async () => cluster.close());

  const cliUtils = (result: DiscoverPhasesResult): DiscoveredPhase => {
    const found = result.phases.find((d) => d.phase.source === 'cli-utils');
    if (found === undefined) throw new Error('no cli-utils phase found');
    return found;
  };
  /** What a snapshot reads of each phase, in a stable order. */
  const comparable = (result: DiscoverPhasesResult): unknown[] =>
    result.phases
      .map(({ phase, manifest, manifestVersion }) => ({ phase, manifest, manifestVersion }))
      .sort((a, b) => `${a.phase.source}/${a.phase.id}`.localeCompare(`${b.phase.source}/${b.phase.id}`));

  it('parses an unchanged inventory once, through a failed LIST, and again once it changes on the server', async () => {
    const first = await discoverPhases(cluster.client);
    const again = cliUtils(await discoverPhases(cluster.client));
    expect(again.phase).toBe(cliUtils(first).phase);
    // The kept parse is where a snapshot remembers the manifest's hash: the same one while the version lasts.
    expect(again.kept).toBeDefined();
    expect(again.kept).toBe(cliUtils(first).kept);
    cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'configmaps' },
      effect: 'status',
      statusCode: 403,
    });
    expect((await discoverPhases(cluster.client)).errors).toEqual([expect.objectContaining({ kind: 'ConfigMap' })]);
    cluster.emulator.clearFaults();
    expect(cliUtils(await discoverPhases(cluster.client)).phase).toBe(cliUtils(first).phase);

    const edited = loadInventoryFixture('cli-utils-configmap.json');
    (edited.data as Record<string, string>)['shop_checkout-worker-blue_apps_Deployment'] =
      '{"strategy":"Apply","actuation":"Pending"}';
    cluster.emulator.apply(edited);
    const changed = cliUtils(await discoverPhases(cluster.client));
    expect(changed.phase.entries).toHaveLength(cliUtils(first).phase.entries.length + 1);
    expect(changed.phase.entries).toContainEqual({
      group: 'apps',
      kind: 'Deployment',
      namespace: 'shop',
      name: 'checkout-worker-blue',
    });
    expect(changed.phase.details['apps/Deployment/shop/checkout-worker-blue']).toEqual({
      strategy: 'Apply',
      actuation: 'Pending',
    });
    expect(changed.manifestVersion).not.toBe(cliUtils(first).manifestVersion);
    expect(changed.kept).not.toBe(cliUtils(first).kept);
    expect(changed.kept?.memo).toBeUndefined();
  });

  it('gives the same phases from synced watch caches as the LISTs before them, and parses anew when it lists again', async () => {
    const listed = await discoverPhases(cluster.client);
    const set = createWatchSet(cluster.client, INVENTORY_WATCHES);
    try {
      expect([...(await set.start()).values()].every((error) => error === undefined)).toBe(true);
      cluster.emulator.resetRequests();
      const cached = await discoverPhases(cluster.client);
      expect(cluster.emulator.requestCount({ verb: 'list' })).toBe(0);
      expect(comparable(cached)).toEqual(comparable(listed));
      const cachedAgain = await discoverPhases(cluster.client);
      expect(cliUtils(cachedAgain).kept).toBeDefined();
      expect(cliUtils(cachedAgain).kept).toBe(cliUtils(cached).kept);
    } finally {
      set.stop();
    }
    // Read from the caches, the kinds kept no parsed LIST: the next LIST parses them again, alike.
    const relisted = await discoverPhases(cluster.client);
    expect(comparable(relisted)).toEqual(comparable(listed));
    expect(cliUtils(relisted).phase).not.toBe(cliUtils(listed).phase);
  });
});
