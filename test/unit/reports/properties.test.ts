import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeAuditReport } from '../../../src/reports/index.ts';
import type { AuditInput, ReachabilityInterval, StatusInterval } from '../../../src/reports/index.ts';
import { RESOURCE_STATUSES } from '../../../src/status/types.ts';
import { m, MINUTE, T0 } from '../../fixtures/reports/histories.ts';

/** Consecutive pieces laid out from `start` minutes: a gap, then an interval of `length` minutes. */
const pieces = <T>(value: fc.Arbitrary<T>) =>
  fc.array(fc.record({ value, gap: fc.integer({ min: 0, max: 90 }), length: fc.integer({ min: 0, max: 300 }) }), {
    maxLength: 12,
  });

function layOut<T>(
  start: number,
  list: { value: T; gap: number; length: number }[],
  lastOpen: boolean,
): { value: T; from: number; to: number | null }[] {
  let at = start;
  return list.map((piece, index) => {
    const from = at + piece.gap;
    at = from + piece.length;
    return { value: piece.value, from, to: lastOpen && index === list.length - 1 ? null : at };
  });
}

const history = fc.record({
  rangeFrom: fc.integer({ min: 0, max: 600 }),
  rangeLength: fc.integer({ min: 0, max: 1800 }),
  statusStart: fc.integer({ min: -300, max: 600 }),
  statuses: pieces(fc.record({ status: fc.constantFrom(...RESOURCE_STATUSES), stale: fc.boolean() })),
  statusOpen: fc.boolean(),
  reachStart: fc.integer({ min: -300, max: 600 }),
  reach: pieces(fc.boolean()),
  reachOpen: fc.boolean(),
});

describe('audit maths agrees with a minute-by-minute count on random whole-minute histories', () => {
  it('time split, failures and status changes', () => {
    fc.assert(
      fc.property(history, (h) => {
        const statusPieces = layOut(h.statusStart, h.statuses, h.statusOpen);
        const reachPieces = layOut(h.reachStart, h.reach, h.reachOpen);
        const rangeTo = h.rangeFrom + h.rangeLength;
        const statusIntervals: StatusInterval[] = statusPieces.map((p) => ({
          status: p.value.status,
          stale: p.value.stale,
          from: m(p.from),
          to: p.to === null ? null : m(p.to),
        }));
        const reachability: ReachabilityInterval[] = reachPieces.map((p) => ({
          reachable: p.value,
          from: m(p.from),
          to: p.to === null ? null : m(p.to),
        }));
        const input: AuditInput = {
          range: { from: m(h.rangeFrom), to: m(rangeTo) },
          clusters: [{ name: 'prod', reachability }],
          phases: [
            {
              id: 'p',
              cluster: 'prod',
              namespace: 'shop',
              name: 'web',
              source: 'flux',
              statusIntervals,
              manifestChanges: [],
            },
          ],
        };
        const audit = computeAuditReport(input).phases[0];
        if (audit === undefined) throw new Error('no phase');

        // The oracle: classify every minute of the range on its own.
        const covering = <T>(list: { value: T; from: number; to: number | null }[], minute: number) =>
          list.find((p) => p.from <= minute && minute < (p.to ?? rangeTo));
        const time = { Current: 0, InProgress: 0, Failed: 0, Terminating: 0, NotFound: 0, Unknown: 0 };
        let unreachable = 0;
        let unobserved = 0;
        for (let minute = h.rangeFrom; minute < rangeTo; minute += 1) {
          const status = covering(statusPieces, minute);
          if (status === undefined) unobserved += MINUTE;
          else if (status.value.stale || covering(reachPieces, minute)?.value === false) unreachable += MINUTE;
          else time[status.value.status] += MINUTE;
        }
        const nonEmpty = statusPieces.filter((p) => p.to === null || p.to > p.from).filter((p) => p.from < rangeTo);
        const inRange = (at: number) => at >= h.rangeFrom && at < rangeTo;
        const changes = nonEmpty.filter(
          (p, i) => i > 0 && nonEmpty[i - 1]?.value.status !== p.value.status && inRange(p.from),
        ).length;
        const failures = nonEmpty.filter(
          (p, i) => p.value.status === 'Failed' && nonEmpty[i - 1]?.value.status !== 'Failed' && inRange(p.from),
        ).length;
        const reachableObserved = Object.values(time).reduce((a, b) => a + b, 0);

        expect(audit.timeInStatus).toEqual(time);
        expect([audit.unreachableMs, audit.unobservedMs, audit.observedMs]).toEqual([
          unreachable,
          unobserved,
          reachableObserved + unreachable,
        ]);
        expect(audit.availability).toBe(reachableObserved > 0 ? (100 * time.Current) / reachableObserved : null);
        expect([audit.statusChanges, audit.failures]).toEqual([changes, failures]);
        for (const incident of audit.recovery.incidents) {
          expect(incident.durationMs).toBeGreaterThan(0);
          expect(incident.from.getTime()).toBeGreaterThanOrEqual(T0 + h.rangeFrom * MINUTE);
        }
        // Every restore starts at an entry into Failed and ends where Current resumes: inside the
        // incident that holds it when the phase had been Current before, and never longer than it.
        expect(audit.restore.restores.length).toBeLessThanOrEqual(audit.failures);
        for (const restore of audit.restore.restores) {
          expect(audit.failureTimes.map((at) => at.getTime())).toContain(restore.failedAt.getTime());
          const holding = audit.recovery.incidents.find(
            (incident) => incident.from <= restore.failedAt && (incident.to === null || restore.failedAt < incident.to),
          );
          if (holding !== undefined) {
            expect(restore.restoredAt?.getTime() ?? null).toBe(holding.to?.getTime() ?? null);
            expect(restore.durationMs).toBeLessThanOrEqual(holding.durationMs);
          }
        }
        const cluster = computeAuditReport(input).clusters[0];
        expect(cluster === undefined ? -1 : cluster.observedMs + cluster.unobservedMs).toBe(h.rangeLength * MINUTE);
      }),
      { numRuns: 300 },
    );
  });
});
