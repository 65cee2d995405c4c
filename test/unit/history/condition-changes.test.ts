import { describe, expect, it } from 'vitest';
import { isCheckRunFresh, planConditionChanges, type StoredCondition } from '../../../src/history/condition-changes.ts';

const from = new Date('2026-03-01T10:00:00Z');
const stored = (status: 'True' | 'False' | 'Unknown', reason = 'Succeeded', message = 'ok'): StoredCondition => ({
  phaseId: 1,
  type: 'health',
  source: 'http',
  status,
  reason,
  message,
  from,
});

describe('planConditionChanges', () => {
  it.each([
    [
      'a first result opens the condition and logs a change from nothing',
      [],
      { status: 'True', reason: 'Succeeded', message: 'ok' },
      { opened: 1, closed: 0, updated: 0, changes: [[null, 'True']] },
    ],
    [
      'the same status, reason and message writes nothing',
      [stored('True')],
      { status: 'True', reason: 'Succeeded', message: 'ok' },
      { opened: 0, closed: 0, updated: 0, changes: [] },
    ],
    [
      'a new message with the same status updates in place, no change logged',
      [stored('True')],
      { status: 'True', reason: 'Succeeded', message: 'answered 204' },
      { opened: 0, closed: 0, updated: 1, changes: [] },
    ],
    [
      'a new status closes the interval, opens one and logs the change',
      [stored('True')],
      { status: 'False', reason: 'UnexpectedStatus', message: '503' },
      { opened: 1, closed: 1, updated: 0, changes: [['True', 'False']] },
    ],
  ] as const)('%s', (_what, before, result, expected) => {
    const plan = planConditionChanges(before, [{ phaseId: 1, type: 'health', ...result }]);
    expect({
      opened: plan.opened.length,
      closed: plan.closed.length,
      updated: plan.updated.length,
      changes: plan.changes.map((c) => [c.fromStatus, c.toStatus]),
    }).toEqual(expected);
  });

  it('keeps the last of two results for one phase and type', () => {
    const plan = planConditionChanges(
      [stored('True')],
      [
        { phaseId: 1, type: 'health', status: 'False', reason: 'UnexpectedStatus', message: '503' },
        { phaseId: 1, type: 'health', status: 'True', reason: 'Succeeded', message: 'ok' },
      ],
    );
    expect(plan.changes).toEqual([]);
  });
});

describe("planConditionChanges after a gap in the check's runs", () => {
  it('ends every touched interval at the last run and opens new ones, logging only status changes', () => {
    const lastRun = new Date('2026-03-01T10:05:00Z');
    const plan = planConditionChanges(
      [stored('True'), { ...stored('True'), phaseId: 2 }],
      [
        { phaseId: 1, type: 'health', status: 'True', reason: 'Succeeded', message: 'ok' },
        { phaseId: 2, type: 'health', status: 'False', reason: 'UnexpectedStatus', message: '503' },
      ],
      { resumedAfter: lastRun },
    );
    expect(plan.closedAt).toEqual(lastRun);
    expect(plan.closed.map((c) => c.phaseId)).toEqual([1, 2]);
    expect(plan.opened.map((c) => c.phaseId)).toEqual([1, 2]);
    expect(plan.changes.map((c) => [c.phaseId, c.fromStatus, c.toStatus])).toEqual([[2, 'True', 'False']]);
  });

  it('does not close an interval that began at the last run itself (it would be empty)', () => {
    const plan = planConditionChanges(
      [stored('True')],
      [{ phaseId: 1, type: 'health', status: 'True', reason: 'Succeeded', message: 'ok' }],
      { resumedAfter: from },
    );
    expect(plan.closed).toEqual([]);
    expect(plan.opened).toHaveLength(1);
  });
});

describe('isCheckRunFresh', () => {
  it.each([
    ['a run within three intervals', 30_000, 89_000, true],
    ['a run older than three intervals', 30_000, 91_000, false],
    ['a short interval still gets interval + 10 s', 1_000, 10_500, true],
  ])('%s', (_what, intervalMs, ageMs, fresh) => {
    const now = new Date(from.getTime() + ageMs);
    expect(isCheckRunFresh(from, intervalMs, now)).toBe(fresh);
  });

  it('never counts a check that never ran as fresh', () => {
    expect(isCheckRunFresh(null, 30_000, from)).toBe(false);
  });
});
