import { describe, expect, it } from 'vitest';
import { buildChildTree, indexOwners, type ChildNode } from '../../../src/status/children.ts';
import { buildPodStatus } from '../../../src/emulator/workload-objects.ts';

function owned(
  kind: string,
  name: string,
  uid: string,
  owners: { kind: string; name: string; uid: string }[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const apiVersion = kind === 'Pod' ? 'v1' : 'apps/v1';
  return {
    apiVersion,
    kind,
    metadata: { name, namespace: 'shop', uid, generation: 1, ownerReferences: owners },
    ...extra,
  };
}

const rsStatus = (ready: number) => ({
  spec: { replicas: 2, selector: { matchLabels: { app: 'web' } } },
  status: {
    observedGeneration: 1,
    replicas: ready,
    readyReplicas: ready,
    availableReplicas: ready,
    fullyLabeledReplicas: ready,
  },
});
const pod = (
  name: string,
  owner: { kind: string; name: string; uid: string },
  state: 'running' | 'crashing' = 'running',
) =>
  owned('Pod', name, `uid-${name}`, [owner], {
    spec: { containers: [{ name: 'main', image: 'x' }] },
    status: buildPodStatus('main', 'x', state, state === 'crashing' ? 3 : 0),
  });

function lines(nodes: ChildNode[], depth = 0): string[] {
  return nodes.flatMap((n) => [
    `${'  '.repeat(depth)}${n.kind}/${n.name} ${n.status}`,
    ...lines(n.children, depth + 1),
  ]);
}

describe('buildChildTree', () => {
  const deployment = { namespace: 'shop', kind: 'Deployment', name: 'web' };
  const rs = { kind: 'ReplicaSet', name: 'web-abc', uid: 'uid-rs' };

  it("nests a Deployment's ReplicaSets and their Pods, each with its kstatus status", () => {
    const index = indexOwners([
      owned('ReplicaSet', 'web-abc', 'uid-rs', [{ kind: 'Deployment', name: 'web', uid: 'uid-dep' }], rsStatus(1)),
      pod('web-abc-1', rs),
      pod('web-abc-2', rs, 'crashing'),
      // Same names, another namespace: not this Deployment's.
      {
        ...owned('ReplicaSet', 'web-zzz', 'uid-other', [{ kind: 'Deployment', name: 'web', uid: 'uid-dep-2' }]),
        metadata: {
          name: 'web-zzz',
          namespace: 'other',
          uid: 'uid-other',
          ownerReferences: [{ kind: 'Deployment', name: 'web', uid: 'uid-dep-2' }],
        },
      },
    ]);
    const tree = buildChildTree(deployment, index, Date.now());
    expect(lines(tree.children)).toEqual([
      'ReplicaSet/web-abc InProgress',
      '  Pod/web-abc-1 Current',
      '  Pod/web-abc-2 Failed',
    ]);
    expect(tree.omitted).toBe(0);
  });

  it('stops at an ownerReference cycle instead of looping', () => {
    // a owns b, b owns a (only a hostile or broken cluster has this); the Deployment owns a.
    const index = indexOwners([
      owned('ReplicaSet', 'a', 'uid-a', [
        { kind: 'Deployment', name: 'web', uid: 'uid-dep' },
        { kind: 'ReplicaSet', name: 'b', uid: 'uid-b' },
      ]),
      owned('ReplicaSet', 'b', 'uid-b', [{ kind: 'ReplicaSet', name: 'a', uid: 'uid-a' }]),
      // The member owned by its own child: shown once, as the root.
      owned('Deployment', 'web', 'uid-dep', [{ kind: 'ReplicaSet', name: 'b', uid: 'uid-b' }]),
    ]);
    expect(lines(buildChildTree(deployment, index, Date.now()).children)).toEqual([
      'ReplicaSet/a Unknown',
      '  ReplicaSet/b Unknown',
    ]);
  });

  it('bounds a tree of many Pods and counts what it left out', () => {
    const pods = Array.from({ length: 10_000 }, (_, i) => pod(`web-abc-${String(i).padStart(5, '0')}`, rs));
    const index = indexOwners([
      owned('ReplicaSet', 'web-abc', 'uid-rs', [{ kind: 'Deployment', name: 'web', uid: 'uid-dep' }], rsStatus(2)),
      ...pods,
    ]);
    const tree = buildChildTree(deployment, index, Date.now(), { maxNodes: 50 });
    expect(lines(tree.children)).toHaveLength(50);
    expect(tree.omitted).toBe(10_001 - 50);
  });

  it('bounds the depth', () => {
    const chain = Array.from({ length: 8 }, (_, i) =>
      owned('ReplicaSet', `rs-${i}`, `uid-${i}`, [
        i === 0
          ? { kind: 'Deployment', name: 'web', uid: 'uid-dep' }
          : { kind: 'ReplicaSet', name: `rs-${i - 1}`, uid: `uid-${i - 1}` },
      ]),
    );
    const tree = buildChildTree(deployment, indexOwners(chain), Date.now(), { maxDepth: 3 });
    expect(lines(tree.children).map((l) => l.trim().split(' ')[0])).toEqual([
      'ReplicaSet/rs-0',
      'ReplicaSet/rs-1',
      'ReplicaSet/rs-2',
    ]);
    expect(tree.omitted).toBeGreaterThan(0);
  });
});
