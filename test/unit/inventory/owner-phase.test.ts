import { describe, expect, it } from 'vitest';
import { buildOwnerPhases, type OwnerKindSpec } from '../../../src/inventory/owner-phase.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';

const SPEC: OwnerKindSpec = {
  kind: { group: 'openstacklcm.airshipit.org', kind: 'OsPhase' },
  ownedKinds: [
    { group: 'batch', kind: 'Job' },
    { group: '', kind: 'Pod' },
    { group: 'argoproj.io', kind: 'Workflow' },
  ],
};

type Owner = { apiVersion: string; kind: string; uid: string };

function object(
  apiVersion: string,
  kind: string,
  name: string,
  uid: string,
  owners: Owner[] = [],
  namespace = 'openstack',
): Record<string, unknown> {
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      namespace,
      uid,
      ownerReferences: owners.map((o) => ({
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: `${o.kind.toLowerCase()}-of-${o.uid}`,
        uid: o.uid,
      })),
    },
  };
}

const osPhase = (name: string, uid: string, owners: Owner[] = []) =>
  object('openstacklcm.airshipit.org/v1alpha1', 'OsPhase', name, uid, owners);
const job = (name: string, uid: string, owners: Owner[]) => object('batch/v1', 'Job', name, uid, owners);
const pod = (name: string, uid: string, owners: Owner[]) => object('v1', 'Pod', name, uid, owners);
const ownedBy = (kind: 'OsPhase' | 'Job' | 'Pod', uid: string): Owner => ({
  apiVersion: kind === 'OsPhase' ? 'openstacklcm.airshipit.org/v1alpha1' : kind === 'Job' ? 'batch/v1' : 'v1',
  kind,
  uid,
});

function membersOf(result: ReturnType<typeof buildOwnerPhases>, name: string): string[] {
  const phase = result.find((p) => p.phase.name === name)?.phase;
  return (phase?.entries ?? []).map(refKey);
}

describe('owner phases', () => {
  it('an owner phase holds the owner, its Jobs and their Pods, and nothing of another owner', () => {
    const result = buildOwnerPhases(
      SPEC,
      [osPhase('install-keystone', 'p1'), osPhase('install-glance', 'p2')],
      [
        job('keystone-db-sync', 'j1', [ownedBy('OsPhase', 'p1')]),
        pod('keystone-db-sync-x7k2q', 'q1', [ownedBy('Job', 'j1')]),
        job('glance-db-sync', 'j2', [ownedBy('OsPhase', 'p2')]),
        job('unrelated', 'j3', []),
      ],
    );
    expect(membersOf(result, 'install-keystone')).toEqual([
      '/Pod/openstack/keystone-db-sync-x7k2q',
      'batch/Job/openstack/keystone-db-sync',
      'openstacklcm.airshipit.org/OsPhase/openstack/install-keystone',
    ]);
    expect(membersOf(result, 'install-glance')).toEqual([
      'batch/Job/openstack/glance-db-sync',
      'openstacklcm.airshipit.org/OsPhase/openstack/install-glance',
    ]);
    expect(result.every((p) => p.phase.errors.length === 0 && p.phase.source === 'owner')).toBe(true);
  });

  it('a Job owned by a Job that is gone is reported on the phase that still reaches it', () => {
    const result = buildOwnerPhases(
      SPEC,
      [osPhase('install-nova', 'p1')],
      [job('nova-db-sync', 'j1', [ownedBy('OsPhase', 'p1'), ownedBy('Job', 'gone-uid')])],
    );
    const phase = result[0]?.phase;
    expect(phase?.entries.map((e) => e.name).sort()).toEqual(['install-nova', 'nova-db-sync']);
    expect(phase?.errors).toEqual([
      {
        code: 'DANGLING_OWNER_REFERENCE',
        entry: 'batch/Job nova-db-sync',
        message:
          'batch/Job nova-db-sync names an owner that does not exist: batch/Job job-of-gone-uid (uid gone-uid); the garbage collector may delete it',
      },
    ]);
  });

  it('an owner naming an owner of a kind phaselog did not read is not called dangling', () => {
    const result = buildOwnerPhases(
      SPEC,
      [
        osPhase('install-nova', 'p1', [
          { apiVersion: 'openstacklcm.airshipit.org/v1alpha1', kind: 'OsDeployment', uid: 'elsewhere' },
        ]),
      ],
      [],
    );
    expect(result[0]?.phase.errors).toEqual([]);
  });

  it('an owner owned by its own Job is a cycle, reported once, and the walk ends', () => {
    const result = buildOwnerPhases(
      SPEC,
      [osPhase('install-heat', 'p1', [ownedBy('Job', 'j1')])],
      [job('heat-bootstrap', 'j1', [ownedBy('OsPhase', 'p1')])],
    );
    const phase = result[0]?.phase;
    expect(phase?.entries.map((e) => e.name).sort()).toEqual(['heat-bootstrap', 'install-heat']);
    expect(phase?.errors.map((e) => [e.code, e.message])).toEqual([
      [
        'OWNER_REFERENCE_CYCLE',
        'ownerReferences form a cycle: openstacklcm.airshipit.org/OsPhase install-heat owns batch/Job heat-bootstrap owns openstacklcm.airshipit.org/OsPhase install-heat; the cycle is not followed further',
      ],
    ]);
  });

  it('a Job and a Pod owning each other below the owner is a cycle, not an endless walk', () => {
    const result = buildOwnerPhases(
      SPEC,
      [osPhase('install-cinder', 'p1')],
      [
        job('cinder-db-sync', 'j1', [ownedBy('OsPhase', 'p1'), ownedBy('Pod', 'q1')]),
        pod('cinder-db-sync-abcde', 'q1', [ownedBy('Job', 'j1')]),
      ],
    );
    const phase = result[0]?.phase;
    expect(phase?.entries.map((e) => e.name).sort()).toEqual([
      'cinder-db-sync',
      'cinder-db-sync-abcde',
      'install-cinder',
    ]);
    expect(phase?.errors.map((e) => e.message)).toEqual([
      'ownerReferences form a cycle: batch/Job cinder-db-sync owns Pod cinder-db-sync-abcde owns batch/Job cinder-db-sync; the cycle is not followed further',
    ]);
  });

  it('an object that owns itself is a cycle of one', () => {
    const result = buildOwnerPhases(SPEC, [osPhase('install-self', 'p1', [ownedBy('OsPhase', 'p1')])], []);
    expect(result[0]?.phase.errors.map((e) => e.code)).toEqual(['OWNER_REFERENCE_CYCLE']);
  });

  it('objects without a uid or name cannot be followed and are left out without error', () => {
    const result = buildOwnerPhases(
      SPEC,
      [osPhase('install-x', 'p1'), { kind: 'OsPhase', metadata: { name: 'no-uid' } }, 'junk'],
      [{ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', ownerReferences: [{ uid: 'p1' }] } }, null],
    );
    expect(result.map((p) => p.phase.name)).toEqual(['install-x']);
    expect(membersOf(result, 'install-x')).toEqual(['openstacklcm.airshipit.org/OsPhase/openstack/install-x']);
  });

  it('a chain of owned objects deeper than the call stack is followed to the end', () => {
    const chain = Array.from({ length: 20_000 }, (_, i) =>
      pod(`p${i}`, `u${i}`, [i === 0 ? ownedBy('OsPhase', 'root') : ownedBy('Pod', `u${i - 1}`)]),
    );
    const result = buildOwnerPhases(SPEC, [osPhase('deep', 'root')], chain);
    expect(result[0]?.phase.entries).toHaveLength(20_001);
  });
});

describe('owner phases across namespaces', () => {
  it('an object in another namespace naming a namespaced owner does not join it, as Kubernetes treats that reference as absent', () => {
    const owner = osPhase('install-keystone', 'p1');
    const intruder = object('batch/v1', 'Job', 'sneaky', 'j9', [ownedBy('OsPhase', 'p1')], 'tenant-b');
    const intruderPod = object('v1', 'Pod', 'sneaky-pod', 'q9', [ownedBy('Job', 'j9')], 'tenant-b');
    const result = buildOwnerPhases(SPEC, [owner], [intruder, intruderPod]);
    expect(membersOf(result, 'install-keystone')).toEqual([
      'openstacklcm.airshipit.org/OsPhase/openstack/install-keystone',
    ]);
    expect(result[0]?.phase.errors).toEqual([]);
  });

  it('a cluster-scoped owner may own objects in any namespace', () => {
    const owner = object('openstacklcm.airshipit.org/v1alpha1', 'OsPhase', 'site-upgrade', 'c1', [], '');
    const result = buildOwnerPhases(
      SPEC,
      [owner],
      [
        object('batch/v1', 'Job', 'a', 'j1', [ownedBy('OsPhase', 'c1')], 'ns-a'),
        object('batch/v1', 'Job', 'b', 'j2', [ownedBy('OsPhase', 'c1')], 'ns-b'),
      ],
    );
    expect(membersOf(result, 'site-upgrade')).toEqual([
      'batch/Job/ns-a/a',
      'batch/Job/ns-b/b',
      'openstacklcm.airshipit.org/OsPhase//site-upgrade',
    ]);
  });
});
