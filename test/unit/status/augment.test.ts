import { describe, expect, it } from 'vitest';
import { augmentConditions } from '../../../src/status/index.ts';
import { fixture, patched } from './fixtures.ts';

const NOW = new Date('2026-03-01T12:00:00Z');
const EARLIER = '2026-03-01T11:00:00Z';

function conditionsOf(object: Record<string, unknown>): unknown {
  return (object['status'] as { conditions: unknown }).conditions;
}

describe('augmentConditions (kstatus Augment)', () => {
  it('adds Reconciling=True to an unready Pod with both times set to now', () => {
    const outcome = augmentConditions(patched('pod', { status: { conditions: [] } }), { now: NOW });
    expect(outcome.ok && conditionsOf(outcome.object)).toEqual([
      {
        type: 'Reconciling',
        status: 'True',
        reason: 'PodRunningNotReady',
        message: 'Pod is running but is not Ready',
        lastTransitionTime: '2026-03-01T12:00:00Z',
        lastUpdateTime: '2026-03-01T12:00:00Z',
      },
    ]);
  });

  it('flips an existing Reconciling=False and moves its lastTransitionTime', () => {
    const object = patched('pod', {
      status: {
        conditions: [
          {
            type: 'Reconciling',
            status: 'False',
            reason: 'Done',
            lastTransitionTime: EARLIER,
            lastUpdateTime: EARLIER,
          },
          { type: 'Ready', status: 'False' },
        ],
      },
    });
    const outcome = augmentConditions(object, { now: NOW });
    expect(outcome.ok && conditionsOf(outcome.object)).toEqual([
      {
        type: 'Reconciling',
        status: 'True',
        reason: 'PodRunningNotReady',
        message: 'Pod is running but is not Ready',
        lastTransitionTime: '2026-03-01T12:00:00Z',
        lastUpdateTime: '2026-03-01T12:00:00Z',
      },
      { type: 'Ready', status: 'False' },
    ]);
  });

  it('keeps a Reconciling=True written earlier, which then holds a rolled-out Deployment InProgress', () => {
    const stale = { type: 'Reconciling', status: 'True', reason: 'Old', message: 'old', lastTransitionTime: EARLIER };
    const object = patched('deployment', {});
    (object['status'] as Record<string, unknown>)['conditions'] = [
      ...(conditionsOf(fixture('deployment')) as unknown[]),
      stale,
    ];
    const outcome = augmentConditions(object, { now: NOW });
    expect(outcome.ok && outcome.result.status).toBe('InProgress');
    expect(outcome.ok && (conditionsOf(outcome.object) as unknown[]).length).toBe(3);
  });

  it('gives an object without status an empty conditions list, as kstatus writes one', () => {
    const outcome = augmentConditions(fixture('configmap'), { now: NOW });
    expect(outcome.ok && outcome.object['status']).toEqual({ conditions: [] });
  });

  it('leaves the input object untouched', () => {
    const object = patched('pod', { status: { conditions: [{ type: 'Reconciling', status: 'False' }] } });
    const before = structuredClone(object);
    augmentConditions(object, { now: NOW });
    expect(object).toEqual(before);
  });

  it.each([
    ['a malformed object', patched('pod', { status: { phase: 'Unknown' } }), 'unknown phase Unknown'],
    ['not an object', 'Pod', 'expected a Kubernetes object, got a string (3 characters)'],
    [
      'a condition without a string type',
      patched('pod', { status: { conditions: [{ status: 'True', type: null }, { type: 7 }] } }),
      'cannot convert int64 to string (at .status.conditions[1].type)',
    ],
    [
      'an existing Reconciling condition with a missing status',
      patched('pod', { status: { conditions: [{ type: 'Reconciling' }] } }),
      'condition status does not have the expected type',
    ],
    [
      'an existing condition without a type',
      patched('pod', { status: { conditions: [{ status: 'False' }] } }),
      'condition type does not have the expected type',
    ],
  ])("reports kstatus' error for %s", (_name, object, error) => {
    expect(augmentConditions(object, { now: NOW })).toEqual({ ok: false, error });
  });
});
