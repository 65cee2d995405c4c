import { describe, expect, it } from 'vitest';
import { AuditInputError, computeAuditReport } from '../../../src/reports/index.ts';
import type { AuditInput, ClusterAudit } from '../../../src/reports/index.ts';
import { h, HOUR, input, iv, phase, reach } from '../../fixtures/reports/histories.ts';

const zeros = { Current: 0, InProgress: 0, Failed: 0, Terminating: 0, NotFound: 0, Unknown: 0 };

describe('unreachable time is shown apart, neither Current nor down', () => {
  // prod is unreachable from 06:00 to 12:00. "stale" records it on the interval itself; "fresh" is a
  // phase whose intervals say nothing about it, so the cluster's reachability decides.
  const report = computeAuditReport(
    input(
      [
        phase('stale', [
          iv('Current', 0, 6),
          iv('Current', 6, 12, true),
          iv('InProgress', 12, 16.5),
          iv('Current', 16.5, 24),
        ]),
        phase('fresh', [iv('Current', 0, 24)]),
        phase('elsewhere', [iv('Current', 0, 24)], { cluster: 'staging' }),
      ],
      [{ name: 'prod', reachability: [reach(true, 0, 6), reach(false, 6, 12), reach(true, 12, null)] }],
    ),
  );

  it('a stale interval counts as unreachable: availability = 13.5 h Current / (24 h - 6 h) = 75%', () => {
    expect(report.phases[0]).toMatchObject({
      observedMs: 24 * HOUR,
      unreachableMs: 6 * HOUR,
      unobservedMs: 0,
      availability: 75,
      timeInStatus: { ...zeros, Current: 13.5 * HOUR, InProgress: 4.5 * HOUR },
      statusChanges: 2,
      failures: 0,
      recovery: {
        incidents: [{ from: h(12), to: h(16.5), durationMs: 4.5 * HOUR, reachedFailed: false }],
        meanTimeToRecoverMs: 4.5 * HOUR,
      },
    });
  });

  it("the cluster's unreachable period is taken out of a phase whose intervals are not marked stale", () => {
    expect(report.phases[1]).toMatchObject({
      observedMs: 24 * HOUR,
      unreachableMs: 6 * HOUR,
      availability: 100,
      timeInStatus: { ...zeros, Current: 18 * HOUR },
    });
  });

  it('a phase in a cluster without reachability records loses no time', () => {
    expect(report.phases[2]).toMatchObject({
      unreachableMs: 0,
      availability: 100,
      timeInStatus: { ...zeros, Current: 24 * HOUR },
    });
  });

  it('the cluster is 75% reachable with one 6 h outage', () => {
    expect(report.clusters).toEqual<ClusterAudit[]>([
      {
        name: 'prod',
        observedMs: 24 * HOUR,
        reachableMs: 18 * HOUR,
        unreachableMs: 6 * HOUR,
        unobservedMs: 0,
        reachability: 75,
        outages: [{ from: h(6), to: h(12), durationMs: 6 * HOUR }],
        longestOutageMs: 6 * HOUR,
        outageAtStart: null,
      },
    ]);
  });

  it('totals weight availability by reachable observed time: (13.5 + 18 + 24) h / (18 + 18 + 24) h = 92.5%', () => {
    expect(report.totals).toEqual({
      phases: 3,
      clusters: 1,
      observedMs: 72 * HOUR,
      unreachableMs: 12 * HOUR,
      availability: 92.5,
      failures: 0,
      incidents: 1,
      flappingPhases: 0,
      outages: 1,
      manifestChanges: 0,
      inventoryChanges: 0,
      revisionChanges: 0,
      // The one incident was a rollout (InProgress, never Failed): time out of Current, nothing restored.
      restored: 0,
      meanTimeToRestoreMs: null,
      meanTimeOutOfCurrentMs: 4.5 * HOUR,
    });
  });
});

describe('cluster outages', () => {
  it.each<[string, AuditInput['clusters'][number]['reachability'], Partial<ClusterAudit>]>([
    [
      'an outage going at the start is reported apart and not counted',
      [reach(false, -2, 3), reach(true, 3, null)],
      {
        reachableMs: 21 * HOUR,
        unreachableMs: 3 * HOUR,
        reachability: 87.5,
        outages: [],
        longestOutageMs: 0,
        outageAtStart: { from: h(-2), to: h(3), durationMs: 3 * HOUR },
      },
    ],
    [
      'an outage still going at the end has no end and counts its time in the range',
      [reach(true, 0, 20), reach(false, 20, null)],
      {
        outages: [{ from: h(20), to: null, durationMs: 4 * HOUR }],
        longestOutageMs: 4 * HOUR,
        reachability: (100 * 20) / 24,
      },
    ],
    [
      'two outages: count 2, longest 3 h; time before the first record is unobserved',
      [reach(true, 4, 5), reach(false, 5, 6), reach(true, 6, 10), reach(false, 10, 13), reach(true, 13, 24)],
      {
        observedMs: 20 * HOUR,
        unobservedMs: 4 * HOUR,
        reachableMs: 16 * HOUR,
        reachability: 80,
        longestOutageMs: 3 * HOUR,
        outages: [
          { from: h(5), to: h(6), durationMs: HOUR },
          { from: h(10), to: h(13), durationMs: 3 * HOUR },
        ],
      },
    ],
    [
      'no reachability records: null reachability, zeros',
      [],
      {
        observedMs: 0,
        reachableMs: 0,
        unreachableMs: 0,
        unobservedMs: 24 * HOUR,
        reachability: null,
        outages: [],
        longestOutageMs: 0,
        outageAtStart: null,
      },
    ],
  ])('%s', (_name, reachability, expected) => {
    const report = computeAuditReport(input([], [{ name: 'prod', reachability }]));
    expect(report.clusters[0]).toMatchObject(expected);
  });
});

describe('inputs the report refuses', () => {
  const good = iv('Current', 0, 24);
  it.each<[string, AuditInput, string, string]>([
    [
      'overlapping status intervals',
      input([phase('web', [iv('Current', 0, 10), iv('Failed', 9, 12)])]),
      'OVERLAPPING_INTERVALS',
      'phases[0].statusIntervals[1]',
    ],
    [
      'an open interval followed by another',
      input([phase('web', [iv('Current', 0, null), iv('Failed', 30, 31)])]),
      'OVERLAPPING_INTERVALS',
      'phases[0].statusIntervals[1]',
    ],
    [
      'an interval ending before it starts',
      input([phase('web', [good, iv('Failed', 30, 29)])]),
      'INVERTED_INTERVAL',
      'phases[0].statusIntervals[1]',
    ],
    [
      'overlapping reachability',
      input([], [{ name: 'prod', reachability: [reach(true, 0, 5), reach(false, 4, null)] }]),
      'OVERLAPPING_INTERVALS',
      'clusters[0].reachability[1]',
    ],
    ['a range ending before it starts', input([], [], 5, 4), 'INVALID_RANGE', 'range'],
    [
      'an invalid Date',
      input([phase('web', [{ status: 'Current', from: new Date('nope'), to: null, stale: false }])]),
      'INVALID_DATE',
      'phases[0].statusIntervals[0].from',
    ],
  ])('%s', (_name, bad, kind, path) => {
    let caught: unknown;
    try {
      computeAuditReport(bad);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AuditInputError);
    expect(caught).toMatchObject({ name: 'AuditInputError', kind, path });
  });
});
