/** The one rule for "is this cluster observed recently" (src/history/observation.ts). */
import { describe, expect, it } from 'vitest';
import {
  clusterStateOf,
  observationStateOf,
  staleReasonOf,
  unobservedGapBefore,
  type ClusterObservationFacts,
} from '../../../src/history/observation.ts';

const T = Date.parse('2026-11-26T12:00:00.000Z');
const at = (ms: number) => new Date(T + ms);
const facts = (overrides: Partial<ClusterObservationFacts>): ClusterObservationFacts => ({
  lastObservedAt: at(0),
  snapshotIntervalMs: 10_000,
  retiredAt: null,
  ...overrides,
});

describe('observation state', () => {
  it.each([
    ['a tick within three intervals is observed', facts({}), 30_000, { state: 'OBSERVED' }],
    [
      'past three intervals it is unobserved since the bound',
      facts({}),
      30_001,
      { state: 'UNOBSERVED', since: at(30_000), lastObservedAt: at(0) },
    ],
    [
      'an unknown interval is the default 30 s',
      facts({ snapshotIntervalMs: null }),
      90_001,
      { state: 'UNOBSERVED', since: at(90_000), lastObservedAt: at(0) },
    ],
    [
      'a short interval gets at least the grace past one interval',
      facts({ snapshotIntervalMs: 300 }),
      10_300,
      { state: 'OBSERVED' },
    ],
    [
      'a short interval is unobserved past the grace',
      facts({ snapshotIntervalMs: 300 }),
      10_301,
      { state: 'UNOBSERVED', since: at(10_300), lastObservedAt: at(0) },
    ],
    [
      'never observed is unobserved from the start',
      facts({ lastObservedAt: null }),
      0,
      { state: 'UNOBSERVED', since: null, lastObservedAt: null },
    ],
    [
      'retired, however recent its last tick',
      facts({ retiredAt: at(5_000) }),
      6_000,
      { state: 'RETIRED', since: at(5_000), retiredAt: at(5_000), lastObservedAt: at(0) },
    ],
    [
      'retired long after its last tick: unobserved since the bound',
      facts({ retiredAt: at(60_000) }),
      70_000,
      { state: 'RETIRED', since: at(30_000), retiredAt: at(60_000), lastObservedAt: at(0) },
    ],
  ])('%s', (_name, given, now, expected) => {
    expect(observationStateOf(given, at(now))).toEqual(expected);
  });

  it.each([
    [
      'retired wins over a fresh status',
      { state: 'RETIRED', since: null, retiredAt: at(0), lastObservedAt: null } as const,
      false,
      true,
      'RETIRED',
    ],
    [
      'unobserved wins over an outage',
      { state: 'UNOBSERVED', since: null, lastObservedAt: null } as const,
      true,
      false,
      'UNOBSERVED',
    ],
    ['observed and stored stale is unreachable', { state: 'OBSERVED' } as const, true, false, 'UNREACHABLE'],
    [
      'observed and the cluster unreachable is unreachable',
      { state: 'OBSERVED' } as const,
      false,
      false,
      'UNREACHABLE',
    ],
    ['observed, reachable, fresh is fresh', { state: 'OBSERVED' } as const, false, true, null],
  ])('stale reason: %s', (_name, state, storedStale, reachable, expected) => {
    expect(staleReasonOf(state, storedStale, reachable)).toBe(expected);
  });

  it('a cluster observed but unreachable is UNREACHABLE; unobserved or retired say so whatever was read last', () => {
    expect(clusterStateOf({ state: 'OBSERVED' }, false)).toBe('UNREACHABLE');
    expect(clusterStateOf({ state: 'OBSERVED' }, true)).toBe('OBSERVED');
    expect(clusterStateOf({ state: 'UNOBSERVED', since: at(0), lastObservedAt: at(0) }, true)).toBe('UNOBSERVED');
  });

  it('a tick after the bound ends an unobserved span that began at the bound; one in time ends none', () => {
    expect(unobservedGapBefore(at(0), 10_000, at(30_000))).toBeUndefined();
    expect(unobservedGapBefore(at(0), 10_000, at(45_000))).toEqual(at(30_000));
    expect(unobservedGapBefore(null, 10_000, at(45_000))).toBeUndefined();
  });
});
