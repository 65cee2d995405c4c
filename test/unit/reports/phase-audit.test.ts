import { describe, expect, it } from 'vitest';
import { computeAuditReport } from '../../../src/reports/index.ts';
import type { PhaseAudit, PhaseHistory, StatusInterval } from '../../../src/reports/index.ts';
import type { ResourceStatus } from '../../../src/status/types.ts';
import { change, h, HOUR, input, iv, ivMin, phase } from '../../fixtures/reports/histories.ts';

const DAY = 24 * HOUR;
/** What a case expects: any subset of the figures, nested objects included (toMatchObject's rule). */
type Expected<T> = T extends Date
  ? T
  : T extends readonly (infer E)[]
    ? Expected<E>[]
    : T extends object
      ? { [K in keyof T]?: Expected<T[K]> }
      : T;
const NO_RESTORE = {
  restores: [],
  restored: 0,
  meanTimeToRestoreMs: null,
  longestTimeToRestoreMs: null,
  restoreAtStart: null,
  notRestored: null,
};
const zeros = { Current: 0, InProgress: 0, Failed: 0, Terminating: 0, NotFound: 0, Unknown: 0 };

function auditOne(history: PhaseHistory): PhaseAudit {
  const audit = computeAuditReport(input([history])).phases[0];
  if (audit === undefined) throw new Error('no phase audit');
  return audit;
}

describe('computeAuditReport, one phase over [T0, T0 + 24 h)', () => {
  it.each<[string, PhaseHistory, Expected<PhaseAudit>]>([
    [
      'a fully Current phase is 100% available with nothing to recover from',
      phase('web', [iv('Current', 0, 24)]),
      {
        observedMs: DAY,
        unreachableMs: 0,
        unobservedMs: 0,
        availability: 100,
        timeInStatus: { ...zeros, Current: DAY },
        statusAtStart: 'Current',
        statusAtEnd: 'Current',
        failures: 0,
        failureTimes: [],
        failedAtStart: false,
        statusChanges: 0,
        changesPerHour: 0,
        maxChangesInAnHour: 0,
        flapping: false,
        recovery: {
          incidents: [],
          recovered: 0,
          meanTimeToRecoverMs: null,
          longestTimeToRecoverMs: null,
          incidentAtStart: null,
          openIncident: null,
        },
        restore: NO_RESTORE,
      },
    ],
    [
      'a rollout (Current → InProgress → Current) is time out of Current but nothing to restore from',
      phase('web', [iv('Current', 0, 10), iv('InProgress', 10, 10.5), iv('Current', 10.5, 24)]),
      {
        failures: 0,
        statusChanges: 2,
        recovery: {
          incidents: [{ from: h(10), to: h(10.5), durationMs: HOUR / 2, reachedFailed: false, cause: null }],
          recovered: 1,
          meanTimeOutOfCurrentMs: HOUR / 2,
          longestTimeOutOfCurrentMs: HOUR / 2,
          meanTimeToRecoverMs: HOUR / 2,
        },
        restore: NO_RESTORE,
      },
    ],
    [
      'one failure at 10:00 recovered at 16:00: MTTR is exactly 6 h, availability 18/24',
      phase('web', [iv('Current', 0, 10), iv('Failed', 10, 16), iv('Current', 16, 24)]),
      {
        observedMs: DAY,
        availability: 75,
        timeInStatus: { ...zeros, Current: 18 * HOUR, Failed: 6 * HOUR },
        failures: 1,
        failureTimes: [h(10)],
        failedAtStart: false,
        statusChanges: 2,
        changesPerHour: 2 / 24,
        recovery: {
          incidents: [{ from: h(10), to: h(16), durationMs: 6 * HOUR, reachedFailed: true }],
          recovered: 1,
          meanTimeToRecoverMs: 6 * HOUR,
          longestTimeToRecoverMs: 6 * HOUR,
          incidentAtStart: null,
          openIncident: null,
        },
        restore: {
          restores: [{ failedAt: h(10), restoredAt: h(16), durationMs: 6 * HOUR, cause: null }],
          restored: 1,
          meanTimeToRestoreMs: 6 * HOUR,
          longestTimeToRestoreMs: 6 * HOUR,
          restoreAtStart: null,
          notRestored: null,
        },
      },
    ],
    [
      'two failures, 1 h and 5 h to recover (the second counted from leaving Current at 10:00, not from Failed at 11:00)',
      phase('web', [
        iv('Current', 0, 2),
        iv('Failed', 2, 3),
        iv('Current', 3, 10),
        iv('InProgress', 10, 11),
        iv('Failed', 11, 15),
        iv('Current', 15, 24),
      ]),
      {
        availability: 75,
        timeInStatus: { ...zeros, Current: 18 * HOUR, Failed: 5 * HOUR, InProgress: HOUR },
        failures: 2,
        failureTimes: [h(2), h(11)],
        statusChanges: 5,
        recovery: {
          incidents: [
            { from: h(2), to: h(3), durationMs: HOUR, reachedFailed: true },
            { from: h(10), to: h(15), durationMs: 5 * HOUR, reachedFailed: true },
          ],
          recovered: 2,
          meanTimeOutOfCurrentMs: 3 * HOUR,
          longestTimeOutOfCurrentMs: 5 * HOUR,
          incidentAtStart: null,
          openIncident: null,
        },
        // Restores count from entering Failed: 1 h and 4 h (11:00 to 15:00), so 2.5 h on average, not 3 h.
        restore: {
          restores: [
            { failedAt: h(2), restoredAt: h(3), durationMs: HOUR },
            { failedAt: h(11), restoredAt: h(15), durationMs: 4 * HOUR },
          ],
          restored: 2,
          meanTimeToRestoreMs: 2.5 * HOUR,
          longestTimeToRestoreMs: 4 * HOUR,
        },
      },
    ],
    [
      'a range cutting through intervals at both ends clips them; the failure already going at the start is not an entry',
      phase('web', [iv('Current', -5, -3), iv('Failed', -3, 2), iv('Current', 2, 20), iv('InProgress', 20, 30)]),
      {
        observedMs: DAY,
        unobservedMs: 0,
        availability: 75,
        timeInStatus: { ...zeros, Failed: 2 * HOUR, Current: 18 * HOUR, InProgress: 4 * HOUR },
        statusAtStart: 'Failed',
        statusAtEnd: 'InProgress',
        failures: 0,
        failureTimes: [],
        failedAtStart: true,
        statusChanges: 2,
        recovery: {
          incidents: [{ from: h(20), to: null, durationMs: 4 * HOUR, reachedFailed: false }],
          recovered: 0,
          meanTimeToRecoverMs: null,
          longestTimeToRecoverMs: null,
          incidentAtStart: { since: h(-3), recoveredAt: h(2) },
          openIncident: { since: h(20), ongoingMs: 4 * HOUR },
        },
        restore: { ...NO_RESTORE, restoreAtStart: { failedAt: h(-3), restoredAt: h(2) } },
      },
    ],
    [
      'a failure beginning exactly at range.from is an entry in the range, not failedAtStart',
      phase('web', [iv('Current', -4, 0), iv('Failed', 0, 3), iv('Current', 3, 24)]),
      {
        failures: 1,
        failureTimes: [h(0)],
        failedAtStart: false,
        statusAtStart: 'Failed',
        statusChanges: 2,
        availability: 87.5,
        recovery: {
          incidents: [{ from: h(0), to: h(3), durationMs: 3 * HOUR, reachedFailed: true }],
          recovered: 1,
          meanTimeToRecoverMs: 3 * HOUR,
          longestTimeToRecoverMs: 3 * HOUR,
          incidentAtStart: null,
          openIncident: null,
        },
      },
    ],
    [
      'a recovery exactly at range.to is outside [from, to): the incident is still open',
      phase('web', [iv('Current', 0, 20), iv('Failed', 20, 24), iv('Current', 24, 30)]),
      {
        failures: 1,
        statusAtEnd: 'Failed',
        statusChanges: 1,
        recovery: {
          incidents: [{ from: h(20), to: null, durationMs: 4 * HOUR, reachedFailed: true }],
          recovered: 0,
          meanTimeToRecoverMs: null,
          longestTimeToRecoverMs: null,
          incidentAtStart: null,
          openIncident: { since: h(20), ongoingMs: 4 * HOUR },
        },
      },
    ],
    [
      'no data gives zeros and a null availability, never NaN',
      phase('web', []),
      {
        observedMs: 0,
        unreachableMs: 0,
        unobservedMs: DAY,
        availability: null,
        timeInStatus: zeros,
        statusAtStart: null,
        statusAtEnd: null,
        failures: 0,
        statusChanges: 0,
        changesPerHour: 0,
        flapping: false,
      },
    ],
    [
      'an open interval ends at the range end: an unrecovered failure is reported apart, not averaged',
      phase('web', [iv('Current', 0, 12), iv('Failed', 12, null)]),
      {
        observedMs: DAY,
        availability: 50,
        timeInStatus: { ...zeros, Current: 12 * HOUR, Failed: 12 * HOUR },
        statusAtEnd: 'Failed',
        failures: 1,
        failureTimes: [h(12)],
        recovery: {
          incidents: [{ from: h(12), to: null, durationMs: 12 * HOUR, reachedFailed: true }],
          recovered: 0,
          meanTimeToRecoverMs: null,
          longestTimeToRecoverMs: null,
          incidentAtStart: null,
          openIncident: { since: h(12), ongoingMs: 12 * HOUR },
        },
        restore: {
          restores: [{ failedAt: h(12), restoredAt: null, durationMs: 12 * HOUR }],
          restored: 0,
          meanTimeToRestoreMs: null,
          notRestored: { failedAt: h(12), ongoingMs: 12 * HOUR },
        },
      },
    ],
    [
      'an open interval begun before the range covers all of it',
      phase('web', [iv('Current', -2, null)]),
      { observedMs: DAY, unobservedMs: 0, availability: 100, statusAtStart: 'Current', statusChanges: 0 },
    ],
    [
      'time before the first record is unobserved; a phase first seen Failed has one failure and a restore, but no incident (it was never Current)',
      phase('web', [iv('Failed', 2, 4), iv('Current', 4, 24)]),
      {
        observedMs: 22 * HOUR,
        unobservedMs: 2 * HOUR,
        availability: (100 * 20) / 22,
        statusAtStart: null,
        failures: 1,
        failureTimes: [h(2)],
        failedAtStart: false,
        statusChanges: 1,
        recovery: {
          incidents: [],
          recovered: 0,
          meanTimeToRecoverMs: null,
          longestTimeToRecoverMs: null,
          incidentAtStart: null,
          openIncident: null,
        },
        restore: {
          restores: [{ failedAt: h(2), restoredAt: h(4), durationMs: 2 * HOUR }],
          restored: 1,
          meanTimeToRestoreMs: 2 * HOUR,
        },
      },
    ],
    [
      'Failed, InProgress, Failed again and then Current is one restore, counted from the first entry into Failed',
      phase('web', [
        iv('Current', 0, 5),
        iv('Failed', 5, 6),
        iv('InProgress', 6, 7),
        iv('Failed', 7, 9),
        iv('Current', 9, 24),
      ]),
      {
        failures: 2,
        failureTimes: [h(5), h(7)],
        restore: {
          restores: [{ failedAt: h(5), restoredAt: h(9), durationMs: 4 * HOUR }],
          restored: 1,
          meanTimeToRestoreMs: 4 * HOUR,
        },
      },
    ],
    [
      'a gap between two Current intervals is unobserved and not a status change',
      phase('web', [iv('Current', 0, 5), iv('Current', 8, 24)]),
      { observedMs: 21 * HOUR, unobservedMs: 3 * HOUR, availability: 100, statusChanges: 0 },
    ],
    [
      'six changes 10 min apart inside one hour are flapping (more than 4 an hour)',
      phase('web', [
        ivMin('Current', 0, 60),
        ivMin('InProgress', 60, 70),
        ivMin('Current', 70, 80),
        ivMin('InProgress', 80, 90),
        ivMin('Current', 90, 100),
        ivMin('InProgress', 100, 110),
        ivMin('Current', 110, 1440),
      ]),
      { statusChanges: 6, changesPerHour: 6 / 24, maxChangesInAnHour: 6, flapping: true },
    ],
    [
      'four changes inside one hour are not flapping (the threshold must be exceeded)',
      phase('web', [
        ivMin('Current', 0, 60),
        ivMin('InProgress', 60, 70),
        ivMin('Current', 70, 80),
        ivMin('InProgress', 80, 90),
        ivMin('Current', 90, 1440),
      ]),
      { statusChanges: 4, maxChangesInAnHour: 4, flapping: false },
    ],
    [
      'six changes 15 min apart never put more than 4 in one half-open hour',
      phase('web', [
        ivMin('Current', 0, 60),
        ivMin('InProgress', 60, 75),
        ivMin('Current', 75, 90),
        ivMin('InProgress', 90, 105),
        ivMin('Current', 105, 120),
        ivMin('InProgress', 120, 135),
        ivMin('Current', 135, 1440),
      ]),
      { statusChanges: 6, maxChangesInAnHour: 4, flapping: false },
    ],
    [
      'manifest changes are filtered to [from, to) and sorted by time; a revision change alone is not a manifest version',
      phase('web', [iv('Current', 0, 24)], {
        manifestChanges: [
          change(5, ['apps/Deployment/shop/api']),
          change(-1),
          change(24),
          change(0, [], ['/Service/shop/old']),
          change(3, [], [], ['apps/Deployment/shop/web']),
        ],
      }),
      {
        manifestChanges: [
          { at: h(0), inventoryChanged: true, added: [], removed: ['/Service/shop/old'], revisionsChanged: [] },
          { at: h(3), inventoryChanged: false, added: [], removed: [], revisionsChanged: ['apps/Deployment/shop/web'] },
          { at: h(5), inventoryChanged: true, added: ['apps/Deployment/shop/api'], removed: [], revisionsChanged: [] },
        ],
        inventoryChanges: 2,
        revisionChanges: 1,
      },
    ],
    [
      'a new manifest version the store marks as one counts as an inventory change even with no entry added or removed',
      phase('web', [iv('Current', 0, 24)], {
        manifestChanges: [{ ...change(4, [], [], ['apps/Deployment/shop/web']), inventoryChanged: true }],
      }),
      { manifestChanges: [{ at: h(4), inventoryChanged: true }], inventoryChanges: 1, revisionChanges: 1 },
    ],
  ])('%s', (_name, history, expected) => {
    expect(auditOne(history)).toMatchObject(expected);
  });

  it('gives the same report for unordered intervals as for ordered ones', () => {
    const ordered = [iv('Current', 0, 10), iv('Failed', 10, 16), iv('Current', 16, 24)];
    const shuffled = [ordered[2], ordered[0], ordered[1]].filter((interval) => interval !== undefined);
    expect(auditOne(phase('web', shuffled))).toEqual(auditOne(phase('web', ordered)));
  });

  it('drops empty intervals and lets a stale interval continue the same status without a change', () => {
    const audit = auditOne(
      phase('web', [iv('Current', 0, 6), iv('InProgress', 6, 6), iv('Current', 6, 9, true), iv('Current', 9, 24)]),
    );
    expect([audit.statusChanges, audit.unreachableMs, audit.timeInStatus.Current, audit.availability]).toEqual([
      0,
      3 * HOUR,
      21 * HOUR,
      100,
    ]);
  });

  it('takes a caller-chosen flapping threshold', () => {
    const history = phase('web', [ivMin('Current', 0, 60), ivMin('InProgress', 60, 70), ivMin('Current', 70, 1440)]);
    const report = computeAuditReport(input([history]), { flappingChangesPerHour: 1 });
    expect([report.flappingChangesPerHour, report.phases[0]?.maxChangesInAnHour, report.phases[0]?.flapping]).toEqual([
      1,
      2,
      true,
    ]);
  });

  it('an empty range gives zeros, not NaN', () => {
    const report = computeAuditReport(input([phase('web', [iv('Current', 0, 24)])], [], 5, 5));
    expect(report.range.durationMs).toBe(0);
    expect(report.phases[0]).toMatchObject({ observedMs: 0, unobservedMs: 0, availability: null, changesPerHour: 0 });
    expect(report.totals.availability).toBeNull();
  });
});

describe('what caused an incident', () => {
  const web = 'apps/Deployment/shop/web';
  const db = 'apps/StatefulSet/shop/db';
  const withCause = (
    interval: StatusInterval,
    resource: string,
    status: ResourceStatus,
    message: string,
  ): StatusInterval => ({ ...interval, cause: { resource, status, message } });

  it('names the resource of the worst status in the incident and its message, in the incident and in its restore', () => {
    const audit = auditOne(
      phase('web', [
        iv('Current', 0, 10),
        withCause(iv('InProgress', 10, 11), web, 'InProgress', 'Deployment is progressing'),
        withCause(iv('Failed', 11, 13), db, 'Failed', 'Back-off restarting failed container'),
        withCause(iv('Failed', 13, 14), web, 'Failed', 'ProgressDeadlineExceeded'),
        iv('Current', 14, 24),
      ]),
    );
    const cause = { resource: db, status: 'Failed', message: 'Back-off restarting failed container' };
    expect(audit.recovery.incidents).toEqual([
      { from: h(10), to: h(14), durationMs: 4 * HOUR, reachedFailed: true, cause },
    ]);
    expect(audit.restore.restores).toEqual([{ failedAt: h(11), restoredAt: h(14), durationMs: 3 * HOUR, cause }]);
  });

  it('names the rolling resource of a rollout, and nothing when no cause was recorded', () => {
    const audit = auditOne(
      phase('web', [
        iv('Current', 0, 2),
        withCause(iv('InProgress', 2, 3), web, 'InProgress', 'Waiting for rollout to finish'),
        iv('Current', 3, 5),
        iv('InProgress', 5, 6),
        iv('Current', 6, 24),
      ]),
    );
    expect(audit.recovery.incidents.map((incident) => incident.cause)).toEqual([
      { resource: web, status: 'InProgress', message: 'Waiting for rollout to finish' },
      null,
    ]);
  });
});

describe('the order of phases', () => {
  it('lists the worst first: lowest availability, then more time Failed, more failures; phases with no figure last', () => {
    const report = computeAuditReport(
      input([
        phase('healthy', [iv('Current', 0, 24)]),
        phase('unseen', []),
        phase('rolled', [iv('Current', 0, 12), iv('InProgress', 12, 18), iv('Current', 18, 24)]),
        phase('broken', [iv('Current', 0, 12), iv('Failed', 12, 18), iv('Current', 18, 24)]),
        phase('down', [iv('Current', 0, 6), iv('Failed', 6, 24)]),
        phase('flaky', [
          iv('Current', 0, 12),
          iv('Failed', 12, 15),
          iv('Current', 15, 16),
          iv('Failed', 16, 19),
          iv('Current', 19, 24),
        ]),
      ]),
    );
    // broken and rolled are both 75% available; broken spent its 6 h Failed. flaky is 75% too, with two failures in 6 h Failed.
    expect(report.phases.map((audit) => audit.name)).toEqual([
      'down',
      'flaky',
      'broken',
      'rolled',
      'healthy',
      'unseen',
    ]);
  });
});

describe('computeAuditReport: conditions from checks', () => {
  it('reports the time in the range each condition was True, False and Unknown, clipping intervals that began before it or are still open', () => {
    const history: PhaseHistory = {
      ...phase('web', [iv('Current', 0, 24)]),
      conditionIntervals: [
        { type: 'health', status: 'True', from: h(-2), to: h(6) },
        { type: 'health', status: 'False', from: h(6), to: h(7) },
        { type: 'health', status: 'True', from: h(7), to: null },
        { type: 'version', status: 'Unknown', from: h(23), to: null },
      ],
    };
    expect(auditOne(history).conditionTime).toEqual({
      health: { True: 23 * HOUR, False: HOUR, Unknown: 0 },
      version: { True: 0, False: 0, Unknown: HOUR },
    });
  });

  it('reports no conditions for a phase no check selects', () => {
    expect(auditOne(phase('web', [iv('Current', 0, 24)])).conditionTime).toEqual({});
  });
});
