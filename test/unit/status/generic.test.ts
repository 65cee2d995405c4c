import { describe, expect, it } from 'vitest';
import { computeStatus, notFoundStatus, presenceOf, unknownStatus } from '../../../src/status/index.ts';
import type { StatusResult, UnknownReason } from '../../../src/status/index.ts';
import { fixture, patched } from './fixtures.ts';

const NOW = new Date('2026-03-01T12:00:00Z');

function cond(type: string, status: string, reason = '', message = ''): Record<string, string> {
  return { type, status, reason, message };
}

describe('order of checks', () => {
  it.each([
    [
      'deletion beats a generation mismatch',
      patched('deployment', { metadata: { deletionTimestamp: '2026-03-01T11:59:00Z', generation: 9 } }),
      'Terminating',
      'Resource scheduled for deletion',
    ],
    [
      'an empty deletionTimestamp is ignored',
      patched('configmap', { metadata: { deletionTimestamp: '' } }),
      'Current',
      'Resource is always ready',
    ],
    [
      'a generation mismatch beats Stalled and the kind rule',
      patched('deployment', {
        metadata: { generation: 5 },
        status: { conditions: [cond('Stalled', 'True', 'Boom', 'boom')] },
      }),
      'InProgress',
      'Deployment generation is 5, but latest observed generation is 4',
    ],
    [
      'a Reconciling=True condition beats the kind rule',
      patched('configmap', { status: { conditions: [cond('Reconciling', 'True', 'Syncing', 'syncing data')] } }),
      'InProgress',
      'syncing data',
    ],
    [
      'a Stalled=True condition beats the kind rule',
      patched('deployment', { status: { conditions: [cond('Stalled', 'True', 'QuotaExceeded', 'quota exceeded')] } }),
      'Failed',
      'quota exceeded',
    ],
    [
      'list order decides between Stalled and Reconciling',
      patched('kustomization', {
        status: {
          conditions: [
            cond('Stalled', 'True', 'A', 'stalled first'),
            cond('Reconciling', 'True', 'B', 'reconciling second'),
          ],
        },
      }),
      'Failed',
      'stalled first',
    ],
    [
      'Reconciling=False is not a signal',
      patched('kustomization', {
        status: { conditions: [cond('Reconciling', 'False', 'Done', 'done'), cond('Ready', 'True', 'Ok', 'fine')] },
      }),
      'Current',
      'Resource is Ready',
    ],
    [
      'a kind rule is final: a Deployment ignores its Ready condition',
      patched('deployment', {
        status: {
          readyReplicas: 0,
          conditions: [
            cond('Ready', 'True'),
            cond('Available', 'True'),
            cond('Progressing', 'True', 'NewReplicaSetAvailable'),
          ],
        },
      }),
      'InProgress',
      'Ready: 0/3',
    ],
    ['a custom resource with Ready=True is Current', fixture('kustomization'), 'Current', 'Resource is Ready'],
    [
      'a custom resource with Ready=False is InProgress with its message',
      patched('kustomization', {
        status: { conditions: [cond('Ready', 'False', 'BuildFailed', 'kustomize build failed')] },
      }),
      'InProgress',
      'kustomize build failed',
    ],
    [
      'a custom resource with Ready=Unknown is InProgress',
      patched('kustomization', {
        status: { conditions: [cond('Ready', 'Unknown', 'Progressing', 'reconciliation in progress')] },
      }),
      'InProgress',
      'reconciliation in progress',
    ],
    [
      'a Ready condition with an odd status is skipped for the next one',
      patched('kustomization', {
        status: { conditions: [cond('Ready', 'Maybe'), cond('Ready', 'False', 'X', 'second Ready wins')] },
      }),
      'InProgress',
      'second Ready wins',
    ],
    [
      'a custom resource without conditions is Current',
      patched('kustomization', { status: { conditions: null } }),
      'Current',
      'Resource is current',
    ],
    [
      'the generation check is skipped without observedGeneration',
      patched('kustomization', { metadata: { generation: 99 }, status: { observedGeneration: null } }),
      'Current',
      'Resource is Ready',
    ],
    [
      'a core object whose kind text is apps/Deployment hits the Deployment rule as in kstatus',
      { apiVersion: 'v1', kind: 'apps/Deployment', metadata: { name: 'x' } },
      'InProgress',
      'Replicas: 0/1',
    ],
    [
      'an apiVersion with two slashes loses its kind, as in apimachinery',
      { apiVersion: 'apps/v1/extra', kind: 'Deployment', metadata: { name: 'x' } },
      'Current',
      'Resource is current',
    ],
  ] as const)('%s', (_name, object, status, message) => {
    const result = computeStatus(object, { now: NOW });
    expect([result.status, result.message]).toEqual([status, message]);
  });

  it('copies the Stalled condition reason and message from the object', () => {
    const result = computeStatus(
      patched('kustomization', {
        status: { conditions: [cond('Stalled', 'True', 'ArtifactFailed', 'source not found')] },
      }),
      { now: NOW },
    );
    expect(result.conditions).toEqual([
      { type: 'Stalled', status: 'True', reason: 'ArtifactFailed', message: 'source not found' },
    ]);
  });
});

describe('malformed objects are Unknown with MALFORMED_OBJECT, never thrown', () => {
  it.each([
    ['null', null, 'expected a Kubernetes object (a JSON object), got null'],
    ['an array', [fixture('pod')], 'expected a Kubernetes object (a JSON object), got an array of 1 items'],
    ['a string', 'kind: Pod', 'expected a Kubernetes object (a JSON object), got a string (9 characters)'],
    ['a number', 42, 'expected a Kubernetes object (a JSON object), got a number (42)'],
    ['undefined', undefined, 'expected a Kubernetes object (a JSON object), got nothing (undefined)'],
    [
      'a numeric deletionTimestamp',
      patched('pod', { metadata: { deletionTimestamp: 1700000000 } }),
      'looking up metadata.deletionTimestamp from resource: .metadata.deletionTimestamp accessor error: 1700000000 is of the type int64, expected string',
    ],
    [
      'metadata that is a string',
      patched('pod', { metadata: 'web' }),
      'looking up metadata.deletionTimestamp from resource: .metadata.deletionTimestamp accessor error: web is of the type string, expected map[string]interface{}',
    ],
    [
      'a fractional generation',
      patched('deployment', { metadata: { generation: 1.5 } }),
      'looking up metadata.generation from resource: .metadata.generation accessor error: 1.5 is of the type float64, expected int64',
    ],
    [
      'a huge generation',
      patched('deployment', { metadata: { generation: 1e300 } }),
      'looking up metadata.generation from resource: .metadata.generation accessor error: 1e+300 is of the type float64, expected int64',
    ],
    [
      'a string observedGeneration',
      patched('deployment', { status: { observedGeneration: '4' } }),
      'looking up status.observedGeneration from resource: .status.observedGeneration accessor error: 4 is of the type string, expected int64',
    ],
    [
      'a status that is a list',
      patched('configmap', { status: ['Ready'] }),
      'cannot restore struct from: slice (at .status)',
    ],
    [
      'conditions that are an object',
      patched('configmap', { status: { conditions: { Ready: 'True' } } }),
      'cannot restore slice from map (at .status.conditions)',
    ],
    [
      'a condition that is a string',
      patched('configmap', { status: { conditions: ['Ready'] } }),
      'cannot restore struct from: string (at .status.conditions[0])',
    ],
    [
      'a condition status that is a boolean',
      patched('configmap', { status: { conditions: [{ type: 'Ready', status: true }] } }),
      'cannot convert bool to v1.ConditionStatus (at .status.conditions[0].status)',
    ],
    [
      'a deeply nested condition type',
      patched('configmap', { status: { conditions: [{ type: { a: { b: { c: { d: {} } } } } }] } }),
      'cannot convert map[string]interface {} to string (at .status.conditions[0].type)',
    ],
    ['an unknown Pod phase', patched('pod', { status: { phase: 'Unknown' } }), 'unknown phase Unknown'],
    [
      'containerStatuses that are not a list',
      patched('pod', { status: { conditions: [], containerStatuses: { web: {} } } }),
      '.status.containerStatuses accessor error: map[...] is of the type map[string]interface {}, expected []interface{}',
    ],
    [
      'a container state that is a string',
      patched('pod', { status: { conditions: [], containerStatuses: [{ name: 'web', state: 'waiting' }] } }),
      '.status.containerStatuses[0].state accessor error: waiting is of the type string, expected map[string]interface{}',
    ],
  ] as const)('%s', (_name, object, message) => {
    const result = computeStatus(object, { now: NOW });
    expect(result).toEqual({ status: 'Unknown', message, conditions: [], reason: 'MALFORMED_OBJECT' });
  });

  it('reports a 10,000-deep list where status belongs', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(computeStatus({ ...fixture('kustomization'), status: deep }, { now: NOW })).toMatchObject({
      status: 'Unknown',
      reason: 'MALFORMED_OBJECT',
      message:
        'looking up status.observedGeneration from resource: .status.observedGeneration accessor error: [1 items] is of the type []interface {}, expected map[string]interface{}',
    });
  });

  it('ignores deep nesting in fields kstatus does not read', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const object = patched('deployment', {});
    (object['spec'] as Record<string, unknown>)['template'] = deep;
    expect(computeStatus(object, { now: NOW }).status).toBe('Current');
  });

  it('reads a null metadata as absent, like apimachinery', () => {
    expect(computeStatus({ apiVersion: 'v1', kind: 'ConfigMap', metadata: null }, { now: NOW }).status).toBe('Current');
  });

  it('accepts null condition fields and null list entries as empty', () => {
    const object = patched('kustomization', {});
    (object['status'] as Record<string, unknown>)['conditions'] = [
      null,
      { type: 'Ready', status: 'False', reason: null, message: null },
    ];
    expect(computeStatus(object, { now: NOW })).toMatchObject({
      status: 'InProgress',
      message: '',
      conditions: [{ reason: '' }],
    });
  });

  it('survives an object whose getter throws', () => {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      get metadata(): never {
        throw new Error('boom');
      },
    };
    expect(computeStatus(object, { now: NOW })).toMatchObject({
      status: 'Unknown',
      reason: 'MALFORMED_OBJECT',
      message: 'could not read the object: boom',
    });
  });

  it('accepts Date timestamps from typed client objects', () => {
    const deleting = patched('pod', {});
    (deleting['metadata'] as Record<string, unknown>)['deletionTimestamp'] = new Date('2026-03-01T11:00:00Z');
    expect(computeStatus(deleting, { now: NOW }).status).toBe('Terminating');
    const scheduling = patched('pod', {
      status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'Unschedulable')] },
    });
    (scheduling['metadata'] as Record<string, unknown>)['creationTimestamp'] = new Date('2026-03-01T11:59:58Z');
    expect(computeStatus(scheduling, { now: NOW }).status).toBe('InProgress');
  });
});

describe('custom health hook', () => {
  const healthy: StatusResult = {
    status: 'Current',
    message: 'custom says fine',
    conditions: [],
    customHealth: { engine: 'cel', source: 'healthCheckExprs[0]', health: 'current', message: '' },
  };

  it('replaces generation, conditions and the kind rule when it answers', () => {
    const object = patched('deployment', { metadata: { generation: 9 }, status: { readyReplicas: 0 } });
    expect(computeStatus(object, { now: NOW, customHealth: () => healthy })).toBe(healthy);
  });

  it('does not override deletion', () => {
    const object = patched('deployment', { metadata: { deletionTimestamp: '2026-03-01T11:00:00Z' } });
    expect(computeStatus(object, { now: NOW, customHealth: () => healthy }).status).toBe('Terminating');
  });

  it('falls back to kstatus when it returns undefined', () => {
    expect(
      computeStatus(patched('deployment', { status: { readyReplicas: 1 } }), {
        now: NOW,
        customHealth: () => undefined,
      }).message,
    ).toBe('Ready: 1/3');
  });

  it('turns a throwing hook into Unknown HEALTH_CHECK_ERROR', () => {
    const result = computeStatus(fixture('deployment'), {
      now: NOW,
      customHealth: () => {
        throw new Error('no such field: status.phase');
      },
    });
    expect(result).toEqual({
      status: 'Unknown',
      reason: 'HEALTH_CHECK_ERROR',
      message: 'custom health check failed: no such field: status.phase',
      conditions: [],
    });
  });

  it('survives a hook that throws something unprintable', () => {
    const unprintable = {
      toString(): string {
        throw new Error('no');
      },
    };
    const result = computeStatus(fixture('deployment'), {
      now: NOW,
      customHealth: () => {
        throw unprintable;
      },
    });
    expect(result).toMatchObject({
      status: 'Unknown',
      reason: 'HEALTH_CHECK_ERROR',
      message: 'custom health check failed: an unprintable error',
    });
  });

  it('turns a hook answer without a valid status into Unknown HEALTH_CHECK_ERROR', () => {
    const bogus = (): StatusResult => ({ status: 'Healthy', message: '', conditions: [] }) as unknown as StatusResult;
    expect(computeStatus(fixture('deployment'), { now: NOW, customHealth: bogus })).toMatchObject({
      status: 'Unknown',
      reason: 'HEALTH_CHECK_ERROR',
    });
  });
});

describe('statuses only the reading layer knows', () => {
  it('builds NotFound the way kstatus readers do', () => {
    expect(notFoundStatus()).toEqual({ status: 'NotFound', message: 'Resource not found', conditions: [] });
  });

  it.each([
    ['a computed Current result', { status: 'Current' } as const, 'Present'],
    ['Terminating', { status: 'Terminating' } as const, 'Present'],
    ['NotFound', notFoundStatus(), 'NotPresent'],
    [
      'Unknown because the kind is not served',
      unknownStatus('KIND_NOT_FOUND', 'no matches for kind "Widget"'),
      'NotPresent',
    ],
    ['Unknown because reading was forbidden', unknownStatus('FORBIDDEN', 'widgets is forbidden'), 'Unknown'],
    ['Unknown because the cluster is unreachable', unknownStatus('UNREACHABLE', 'connect ECONNREFUSED'), 'Unknown'],
    ['Unknown because the object is malformed', unknownStatus('MALFORMED_OBJECT', 'unknown phase X'), 'Present'],
    ['Unknown because the health check failed', unknownStatus('HEALTH_CHECK_ERROR', 'boom'), 'Present'],
  ] as const)('presence of %s is %s', (_name, result, presence) => {
    expect(presenceOf(result)).toBe(presence);
  });

  it('keeps the reason on Unknown results', () => {
    const reason: UnknownReason = 'TIMEOUT';
    expect(unknownStatus(reason, 'timed out after 10s')).toEqual({
      status: 'Unknown',
      reason,
      message: 'timed out after 10s',
      conditions: [],
    });
  });
});
