import { describe, expect, it } from 'vitest';
import {
  applyPodRule,
  computeStatus,
  findRecheckTime,
  parseLabelSelector,
  selectPods,
} from '../../../src/status/index.ts';
import { fixture, patched } from './fixtures.ts';

const NOW = new Date('2026-03-01T12:00:00Z');

function pod(
  name: string,
  labels: Record<string, string>,
  status: Record<string, unknown>,
  namespace = 'shop',
): Record<string, unknown> {
  return patched('pod', { metadata: { name, namespace, labels }, status });
}

const web = { 'app.kubernetes.io/name': 'web' };
const db = { 'app.kubernetes.io/name': 'db' };
const crashLooping = {
  conditions: [{ type: 'Ready', status: 'False' }],
  containerStatuses: [{ name: 'web', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
};
const unschedulable = {
  phase: 'Pending',
  conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
};
const ready = fixture('pod')['status'] as Record<string, unknown>;

const notReadyRs = patched('replicaset', { status: { readyReplicas: 2, availableReplicas: 2 } });
const notReadySts = patched('statefulset', { status: { readyReplicas: 1 } });

describe('pod-aware rule (kstatus pod-controller readers)', () => {
  it.each([
    [
      'an InProgress ReplicaSet with a crash-looping pod is Failed',
      notReadyRs,
      [pod('a', web, ready), pod('b', web, crashLooping)],
      'Failed',
      '1 pods have failed',
    ],
    [
      'an InProgress StatefulSet with two failed pods says so',
      notReadySts,
      [pod('db-0', db, crashLooping), pod('db-1', db, unschedulable), pod('db-2', db, ready)],
      'Failed',
      '2 pods have failed',
    ],
    [
      'failed pods outside the selector do not count',
      notReadyRs,
      [pod('other', db, crashLooping)],
      'InProgress',
      'Available: 2/3',
    ],
    [
      'failed pods in another namespace do not count',
      notReadyRs,
      [pod('b', web, crashLooping, 'staging')],
      'InProgress',
      'Available: 2/3',
    ],
    [
      'a Current ReplicaSet stays Current whatever its pods say',
      fixture('replicaset'),
      [pod('b', web, crashLooping)],
      'Current',
      'ReplicaSet is available. Replicas: 3',
    ],
    [
      'a Deployment is never escalated by its pods',
      patched('deployment', { status: { readyReplicas: 2 } }),
      [pod('b', web, crashLooping)],
      'InProgress',
      'Ready: 2/3',
    ],
    [
      'a pod with an unknown phase is Unknown, not Failed',
      notReadyRs,
      [pod('b', web, { phase: 'Unknown' })],
      'InProgress',
      'Available: 2/3',
    ],
    [
      'other kinds are left alone',
      patched('daemonset', { status: { numberReady: 1 } }),
      [pod('b', web, crashLooping)],
      'InProgress',
      'Ready: 1/5',
    ],
  ] as const)('%s', (_name, object, pods, status, message) => {
    const result = computeStatus(object, { now: NOW, pods });
    expect([result.status, result.message]).toEqual([status, message]);
    if (status === 'Failed')
      expect(result.conditions).toEqual([{ type: 'Stalled', status: 'True', reason: 'PodsFailed', message }]);
  });

  it('gives a recently unschedulable pod its 15 s grace period from now', () => {
    const fresh = patched('pod', {
      metadata: { labels: web, creationTimestamp: '2026-03-01T11:59:55Z' },
      status: unschedulable,
    });
    expect(computeStatus(notReadyRs, { now: NOW, pods: [fresh] }).status).toBe('InProgress');
    expect(computeStatus(notReadyRs, { now: new Date('2026-03-01T12:00:30Z'), pods: [fresh] }).status).toBe('Failed');
  });

  it.each([
    ['a ReplicaSet without spec.selector', patched('replicaset', { spec: { selector: null } }), 'no selector found'],
    ['a Deployment without spec.selector', patched('deployment', { spec: { selector: null } }), 'no selector found'],
    [
      'a StatefulSet with a bad operator',
      patched('statefulset', {
        spec: { selector: { matchLabels: null, matchExpressions: [{ key: 'tier', operator: 'Near', values: ['x'] }] } },
      }),
      '"Near" is not a valid label selector operator',
    ],
  ] as const)('%s is Unknown as kstatus readers make it', (_name, object, message) => {
    expect(computeStatus(object, { now: NOW, pods: [] })).toMatchObject({
      status: 'Unknown',
      reason: 'MALFORMED_OBJECT',
      message,
    });
  });

  it('leaves a result decided by a custom health check alone', () => {
    const custom = {
      status: 'InProgress' as const,
      message: 'custom',
      conditions: [],
      customHealth: {
        engine: 'lua' as const,
        source: 'apps/ReplicaSet/health.lua',
        health: 'Progressing',
        message: 'custom',
      },
    };
    expect(applyPodRule(custom, notReadyRs, [pod('b', web, crashLooping)], NOW)).toBe(custom);
  });
});

describe('selectPods', () => {
  const pods = [
    pod('a', { app: 'web', tier: 'frontend' }, ready),
    pod('b', { app: 'web', tier: 'backend' }, ready),
    pod('c', { app: 'web' }, ready),
    pod('d', { app: 'db', tier: 'backend' }, ready),
  ];
  it.each([
    ['matchLabels selects equal labels', { matchLabels: { app: 'web' } }, ['a', 'b', 'c']],
    [
      'In selects any listed value',
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['frontend', 'backend'] }] },
      ['a', 'b', 'd'],
    ],
    [
      'NotIn also selects pods without the label',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['backend'] }] },
      ['a', 'c'],
    ],
    ['Exists needs the label', { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, ['a', 'b', 'd']],
    ['DoesNotExist needs it absent', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, ['c']],
    [
      'labels and expressions must all hold',
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
      ['a', 'b'],
    ],
    ['an empty selector selects everything', {}, ['a', 'b', 'c', 'd']],
  ])('%s', (_name, selector, names) => {
    const owner = patched('replicaset', { spec: { selector: null } });
    (owner['spec'] as Record<string, unknown>)['selector'] = selector;
    const selected = selectPods(owner, pods);
    expect(selected.ok && selected.pods.map((p) => (p['metadata'] as { name: string }).name)).toEqual(names);
  });

  it.each([
    [
      'In without values',
      { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] },
      "for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['x'] }] },
      'values set must be empty for exists and does not exist',
    ],
    [
      'a numeric label value',
      { matchLabels: { app: 3 } },
      'cannot unmarshal int64 into LabelSelector.matchLabels["app"] of type string',
    ],
    ['an invalid label key', { matchLabels: { 'bad key!': 'x' } }, 'invalid label key "bad key!"'],
  ])('rejects %s', (_name, selector, error) => {
    expect(parseLabelSelector(selector)).toEqual({ ok: false, error });
  });
});

describe('findRecheckTime', () => {
  const created = '2026-03-01T11:59:55Z';
  const waiting = patched('pod', { metadata: { labels: web, creationTimestamp: created }, status: unschedulable });

  it('tells when a pod inside its grace period turns Failed', () => {
    expect(findRecheckTime(waiting, { now: NOW })).toBe(Date.parse(created) + 15_000);
    expect(computeStatus(waiting, { now: new Date(Date.parse(created) + 15_000) }).status).toBe('Failed');
  });

  it('tells a ReplicaSet when its unschedulable pod will escalate it', () => {
    expect(findRecheckTime(notReadyRs, { now: NOW, pods: [pod('a', web, ready), waiting] })).toBe(
      Date.parse(created) + 15_000,
    );
  });

  it.each([
    ['a ready pod', fixture('pod'), undefined],
    ['a pod already past its grace period', patched('pod', { status: unschedulable }), undefined],
    ['a Deployment, which never escalates', patched('deployment', {}), [waiting]],
    ['a ReplicaSet without pods given', notReadyRs, undefined],
  ] as const)('has nothing to schedule for %s', (_name, object, pods) => {
    expect(findRecheckTime(object, { now: NOW, pods })).toBeUndefined();
  });
});
