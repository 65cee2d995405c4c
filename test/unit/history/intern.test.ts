import { describe, expect, it } from 'vitest';
import { createStatusIntern, createTextIntern } from '../../../src/history/intern.ts';
import type { ResourceIntervalStatus } from '../../../src/history/types.ts';

const CURRENT: ResourceIntervalStatus = { status: 'Current', reason: null, message: 'Deployment is available. Replicas: 2', presence: 'Present', customHealth: null };

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
