import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/history/canonical-hash.ts';
import type { ClusterClient } from '../../../src/kube/cluster-client.ts';
import { discoverPhases, INVENTORY_WATCHES, type DiscoverPhasesResult } from '../../../src/kube/discover-phases.ts';
import { createWatchSet, type WatchSet } from '../../../src/kube/watch-set.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { loadAirshipctlInventory, loadInventoryFixture } from '../../unit/inventory/load-fixture.ts';
import { connect, startTestCluster, waitFor, type TestCluster } from './helpers.ts';

const FIXTURES = [
  'cli-utils-configmap.json',
  'kpt-resourcegroup.json',
  'flux-kustomization.json',
  'flux-helmrelease.json',
  'argocd-application.json',
];

/** Phases and their manifests, in a stable order, as a snapshot records them. */
function phasesOf(result: DiscoverPhasesResult): unknown[] {
  return result.phases
    .map(({ phase, manifest }) => ({ phase, manifest }))
    .sort((a, b) =>
      `${a.phase.source}/${a.phase.namespace}/${a.phase.name}`.localeCompare(
        `${b.phase.source}/${b.phase.namespace}/${b.phase.name}`,
      ),
    );
}

async function observedManifests(client: ClusterClient): Promise<unknown[]> {
  const observation = await observeCluster(client);
  if (observation.outcome !== 'ok') throw new Error('cluster unreachable');
  return (
    observation.phases
      // What a snapshot stores of a manifest (a memoised one makes its source and entries on read).
      .map((p) => ({
        identity: p.identity,
        inventoryId: p.inventoryId,
        manifest: { hash: p.manifest.hash, source: p.manifest.source, entries: p.manifest.entries },
        status: p.status.status,
      }))
      .sort((a, b) => JSON.stringify(a.identity).localeCompare(JSON.stringify(b.identity)))
  );
}

describe('inventories read from watch caches', () => {
  let cluster: TestCluster;
  /** A second client of the same cluster without caches: every read is a LIST. */
  let listing: ClusterClient;
  let set: WatchSet;
  const cm = (): Record<string, unknown> => loadInventoryFixture('cli-utils-configmap.json');
  const cmMeta = (): { name: string; namespace: string } => cm().metadata as { name: string; namespace: string };

  beforeAll(async () => {
    cluster = await startTestCluster();
    // An ordinary ConfigMap must not be mistaken for an inventory.
    cluster.emulator.apply([
      ...FIXTURES.map(loadInventoryFixture),
      loadAirshipctlInventory(),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'shop' }, data: { a: 'b' } },
    ]);
    listing = connect(cluster.emulator);
    set = createWatchSet(cluster.client, INVENTORY_WATCHES);
    const outcomes = await set.start();
    expect([...outcomes.values()]).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });
  afterAll(async () => {
    set.stop();
    listing.close();
    await cluster.close();
  });

  /** Waits until the caches answer what a LIST answers (a watch event takes a moment). */
  async function expectSameAsList(): Promise<DiscoverPhasesResult> {
    const listed = await discoverPhases(listing);
    let cached = await discoverPhases(cluster.client);
    const until = Date.now() + 5000;
    while (canonicalJson(phasesOf(cached)) !== canonicalJson(phasesOf(listed)) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      cached = await discoverPhases(cluster.client);
    }
    expect(phasesOf(cached)).toEqual(phasesOf(listed));
    expect(cached.invalid).toEqual(listed.invalid);
    expect(cached.errors).toEqual([]);
    expect(await observedManifests(cluster.client)).toEqual(await observedManifests(listing));
    return cached;
  }

  it('gives the same phases and manifests as a LIST, without listing any inventory kind', async () => {
    cluster.emulator.resetRequests();
    const cached = await expectSameAsList();
    expect(cached.phases).toHaveLength(6);
    expect(cluster.emulator.requestCount({ verb: 'list', resource: 'resourcegroups' })).toBeGreaterThan(0);
    cluster.emulator.resetRequests();
    await discoverPhases(cluster.client);
    expect(cluster.emulator.requestCount({ verb: 'list' })).toBe(0);
    // The ordinary ConfigMap is not in the label-selected cache.
    expect(
      set.caches
        .get(`/ConfigMap?${INVENTORY_WATCHES[0]?.labelSelector ?? ''}`)
        ?.list()
        .map((o) => (o.metadata as { name: string }).name)
        .sort(),
    ).toEqual(['inventory-00529187', 'inventory-04873621']);
  });

  it('follows an edited inventory: a new entry, a changed label', async () => {
    const edited = cm();
    (edited.data as Record<string, string>)['shop_extra_apps_Deployment'] = '';
    (edited.metadata as { labels: Record<string, string> }).labels['team'] = 'checkout';
    cluster.emulator.apply(edited);
    const cached = await expectSameAsList();
    const phase = cached.phases.find((d) => d.phase.source === 'cli-utils' && d.phase.namespace === 'shop');
    expect(phase?.phase.entries.map((e) => e.name)).toContain('extra');
    expect(phase?.phase.labels).toMatchObject({ team: 'checkout' });
  });

  it('drops an inventory that is deleted, and a ConfigMap that loses its inventory label', async () => {
    cluster.emulator.remove({
      apiVersion: 'kpt.dev/v1alpha1',
      kind: 'ResourceGroup',
      namespace: 'shop',
      name: 'inventory-shop',
    });
    const unlabelled = cm();
    delete (unlabelled.metadata as { labels: Record<string, string> }).labels['cli-utils.sigs.k8s.io/inventory-id'];
    cluster.emulator.apply(unlabelled);
    await waitFor(
      () =>
        set.caches
          .get(`/ConfigMap?${INVENTORY_WATCHES[0]?.labelSelector ?? ''}`)
          ?.get(cmMeta().namespace, cmMeta().name) === undefined,
      'the unlabelled ConfigMap to leave the cache',
    );
    const cached = await expectSameAsList();
    expect(cached.phases.map((d) => `${d.phase.source}/${d.phase.namespace}`).sort()).toEqual([
      'argocd/argocd',
      'cli-utils/airshipit-initinfra-target',
      'flux/flux-system',
      'flux/shop',
    ]);
  });

  it('lists again when a cache is not synced', async () => {
    set.stop();
    cluster.emulator.resetRequests();
    const result = await discoverPhases(cluster.client);
    expect(result.phases).toHaveLength(4);
    expect(cluster.emulator.requestCount({ verb: 'list' })).toBe(5);
  });
});
