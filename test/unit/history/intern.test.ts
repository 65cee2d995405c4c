import { describe, expect, it } from 'vitest';
import { createSharedValues, createStatusIntern, createTextIntern } from '../../../src/history/intern.ts';
import type { OpenPhaseInterval, ResourceIntervalStatus } from '../../../src/history/types.ts';

const CURRENT: ResourceIntervalStatus = {
  status: 'Current',
  reason: null,
  message: 'Deployment is available. Replicas: 2',
  presence: 'Present',
  customHealth: null,
  applied: null,
};

describe('resource interval statuses of a kept state', () => {
  it('are one object for equal values, whichever object brought them', () => {
    const intern = createStatusIntern(createTextIntern());
    const first = intern({ ...CURRENT });
    expect(intern({ ...CURRENT })).toBe(first);
    expect(first).toEqual(CURRENT);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it.each([
    ['status', { status: 'InProgress' }],
    ['reason', { reason: '' }],
    ['message', { message: 'Deployment is available. Replicas: 3' }],
    ['presence', { presence: 'Absent' }],
    ['custom health', { customHealth: 'Healthy' }],
  ] as const)('are another object for another %s', (_field, change) => {
    const intern = createStatusIntern(createTextIntern());
    const current = intern({ ...CURRENT });
    const other = intern({ ...CURRENT, ...change });
    expect(other).not.toBe(current);
    expect(other).toEqual({ ...CURRENT, ...change });
    expect(intern({ ...CURRENT })).toBe(current);
  });

  it('are the kept ones for their values, when a state is built upon', () => {
    const kept = createStatusIntern(createTextIntern())({ ...CURRENT });
    const intern = createStatusIntern(createTextIntern(), [kept, kept]);
    expect(intern({ ...CURRENT })).toBe(kept);
    expect(intern({ ...CURRENT, status: 'InProgress' })).not.toBe(kept);
  });
});

describe('phase statuses kept across clusters', () => {
  const status = (from: number, extra: Partial<OpenPhaseInterval> = {}): OpenPhaseInterval => ({
    from: new Date(from),
    since: new Date(from),
    status: 'Current',
    // A concatenation, as summaries build it.
    message: `All ${String(1)} resources are Current`,
    summary: JSON.parse('{"Current":1}') as Record<string, number>,
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Current',
        message: 'All 1 resources are Current',
        lastTransitionTime: new Date(from).toISOString(),
      },
      {
        type: 'Stalled',
        status: 'False',
        reason: 'Current',
        message: '',
        lastTransitionTime: new Date(from).toISOString(),
      },
    ],
    worstResource: null,
    stale: false,
    ...extra,
  });

  it('equal to the status given, frozen, and given back as they are', () => {
    const shared = createSharedValues();
    const given = status(1_000);
    const kept = shared.phaseStatus(given);
    expect(kept).toEqual(status(1_000));
    expect(
      Object.isFrozen(kept) &&
        Object.isFrozen(kept.conditions) &&
        Object.isFrozen(kept.conditions[0]) &&
        Object.isFrozen(kept.summary),
    ).toBe(true);
    expect(() => (kept.conditions as unknown[]).push({})).toThrow(TypeError);
    expect(shared.phaseStatus(kept)).toBe(kept);
    // The status given is left as it was.
    expect(Object.isFrozen(given) || Object.isFrozen(given.conditions)).toBe(false);
  });

  it('share their summary, conditions, strings and moments with equal ones of other phases', () => {
    const shared = createSharedValues();
    const a = shared.phaseStatus(status(1_000));
    const b = shared.phaseStatus(status(1_000));
    expect(b).not.toBe(a);
    expect(b.summary).toBe(a.summary);
    expect(b.conditions).toBe(a.conditions);
    expect(b.from).toBe(a.from);
    const later = shared.phaseStatus(status(2_000, { summary: { InProgress: 1 }, message: 'other' }));
    expect(later.conditions).not.toBe(a.conditions);
    expect(later.conditions[1]?.message).toBe('');
    expect(later.summary).toEqual({ InProgress: 1 });
    expect(later.from.getTime()).toBe(2_000);
  });

  it('start sharing over past their limit, and what was shared stays as it was', () => {
    const shared = createSharedValues(2);
    const first = shared.phaseStatus(status(1_000));
    shared.phaseStatus(status(2_000));
    shared.phaseStatus(status(3_000));
    const again = shared.phaseStatus(status(1_000));
    expect(again.conditions).not.toBe(first.conditions);
    expect(again).toEqual(first);
    expect(first).toEqual(status(1_000));
  });
});
