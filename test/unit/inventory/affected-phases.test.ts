import { describe, expect, it } from 'vitest';
import { findAffectedPhases, type ChangedObjects } from '../../../src/inventory/affected-phases.ts';
import type { ObjectRef, Phase } from '../../../src/inventory/types.ts';

const ref = (group: string, kind: string, namespace: string, name: string): ObjectRef => ({
  group,
  kind,
  namespace,
  name,
});

function phase(name: string, entries: ObjectRef[], extra: Partial<Phase> = {}): Phase {
  return {
    source: 'cli-utils',
    id: name,
    name,
    namespace: 'shop',
    labels: {},
    entries,
    details: {},
    errors: [],
    ...extra,
  };
}

const web = ref('apps', 'Deployment', 'shop', 'web');
const db = ref('apps', 'StatefulSet', 'data', 'db');
const rs = ref('apps', 'ReplicaSet', 'batch', 'worker-5d4f');
const svc = ref('', 'Service', 'shop', 'web');
const ns = ref('', 'Namespace', '', 'shop');

const PHASES: Phase[] = [
  phase('shop', [web, svc, ns], { inventoryRef: ref('', 'ConfigMap', 'shop', 'inventory-shop') }),
  phase('data', [db], {
    source: 'flux',
    inventoryRef: ref('kustomize.toolkit.fluxcd.io', 'Kustomization', 'flux-system', 'data'),
  }),
  phase('batch', [rs], { inventoryRef: ref('kpt.dev', 'ResourceGroup', 'batch', 'batch') }),
  // A Flux Kustomization applying the `data` one: that Kustomization is this phase's entry.
  phase('infra', [ref('kustomize.toolkit.fluxcd.io', 'Kustomization', 'flux-system', 'data')], {
    source: 'flux',
    inventoryRef: ref('kustomize.toolkit.fluxcd.io', 'Kustomization', 'flux-system', 'infra'),
  }),
  phase('web-tier', [web], {
    source: 'selector',
    selector: {
      selector: { matchLabels: { tier: 'web' } },
      kinds: [{ group: 'apps', kind: 'Deployment' }],
      namespaces: ['shop', 'edge'],
    },
  }),
  phase('everywhere', [], {
    source: 'selector',
    selector: { selector: { matchLabels: { team: 'a' } }, kinds: [{ group: '', kind: 'Service' }], namespaces: [] },
  }),
];

const changed = (objects: ObjectRef[], inventories: ObjectRef[] = []): ChangedObjects => ({ objects, inventories });
const names = (indices: number[]) => indices.map((i) => PHASES[i]?.name);

describe('findAffectedPhases', () => {
  it.each([
    [
      'a changed entry affects every phase listing it (a selector phase matching its kind too)',
      changed([web]),
      ['shop', 'web-tier'],
    ],
    ['a cluster-scoped entry affects its phase', changed([ns]), ['shop']],
    [
      'a Service affects its phase and a selector phase over Services in every namespace',
      changed([svc]),
      ['shop', 'everywhere'],
    ],
    [
      'a Pod affects phases with a StatefulSet in its namespace (pod-aware rule)',
      changed([ref('', 'Pod', 'data', 'db-0')]),
      ['data'],
    ],
    [
      'a Pod affects phases with a ReplicaSet in its namespace',
      changed([ref('', 'Pod', 'batch', 'worker-5d4f-x')]),
      ['batch'],
    ],
    [
      'a Pod in a namespace without StatefulSets or ReplicaSets affects nothing',
      changed([ref('', 'Pod', 'shop', 'web-1')]),
      [],
    ],
    [
      'a Deployment no phase lists, in a namespace a selector phase looks in, affects that selector phase',
      changed([ref('apps', 'Deployment', 'edge', 'new')]),
      ['web-tier'],
    ],
    [
      'a Deployment no phase lists, elsewhere, affects nothing',
      changed([ref('apps', 'Deployment', 'other', 'new')]),
      [],
    ],
    ['an inventory affects its own phase', changed([], [ref('', 'ConfigMap', 'shop', 'inventory-shop')]), ['shop']],
    [
      "an inventory that is another phase's entry affects both",
      changed([], [ref('kustomize.toolkit.fluxcd.io', 'Kustomization', 'flux-system', 'data')]),
      ['data', 'infra'],
    ],
    [
      'changes to several phases affect each once, in order',
      changed([db, web, web, rs]),
      ['shop', 'data', 'batch', 'web-tier'],
    ],
    ['nothing changed, nothing affected', changed([]), []],
  ])('%s', (_, input, expected) => {
    const result = findAffectedPhases(PHASES, input);
    expect(result.whole).toBe(false);
    expect(result.whole === false ? names(result.indices) : undefined).toEqual(expected);
  });

  it.each([
    [
      'an inventory no phase came from (new and invalid, or deleted)',
      changed([web], [ref('', 'ConfigMap', 'shop', 'inventory-gone')]),
    ],
    [
      'a Kustomization that is only an entry, not a known inventory',
      changed([], [ref('kustomize.toolkit.fluxcd.io', 'Kustomization', 'flux-system', 'orphan')]),
    ],
  ])('asks for the whole cluster for %s', (_, input) => {
    const [inventory] = input.inventories as [ObjectRef];
    expect(findAffectedPhases(PHASES, input)).toEqual({
      whole: true,
      reason: expect.stringContaining(`${inventory.kind}/${inventory.namespace}/${inventory.name}`),
    });
  });
});

describe('findAffectedPhases for owner phases', () => {
  const owner = ref('lcm.example.dev', 'Phase', 'openstack', 'install-keystone');
  const job = ref('batch', 'Job', 'openstack', 'keystone-db-sync');
  const phases: Phase[] = [
    phase('install-keystone', [owner, job], {
      source: 'owner',
      namespace: 'openstack',
      owner: {
        kind: { group: 'lcm.example.dev', kind: 'Phase' },
        ownedKinds: [
          { group: 'batch', kind: 'Job' },
          { group: '', kind: 'Pod' },
        ],
      },
    }),
    phase('shop', [web]),
  ];
  const namesOf = (indices: number[]) => indices.map((i) => phases[i]?.name);

  it.each([
    [
      'a new Job in the owner namespace may be owned by it',
      changed([ref('batch', 'Job', 'openstack', 'keystone-bootstrap')]),
      ['install-keystone'],
    ],
    [
      'a new Pod in the owner namespace may be owned through a Job',
      changed([ref('', 'Pod', 'openstack', 'keystone-bootstrap-x')]),
      ['install-keystone'],
    ],
    ['a Job in another namespace cannot be owned by it', changed([ref('batch', 'Job', 'shop', 'migrate')]), []],
    ['a changed member affects it', changed([job]), ['install-keystone']],
  ])('%s', (_name, change, expected) => {
    const affected = findAffectedPhases(phases, change);
    expect(affected.whole ? 'whole' : namesOf(affected.indices)).toEqual(expected);
  });

  it('a new owner object is a new phase: the whole cluster is observed', () => {
    expect(
      findAffectedPhases(phases, changed([ref('lcm.example.dev', 'Phase', 'openstack', 'install-glance')])),
    ).toEqual({ whole: true, reason: 'lcm.example.dev/Phase/openstack/install-glance is a new owner' });
  });
});
