/**
 * The fleet series' text: staleness follows the one observation rule per cluster, label values are
 * escaped as the text format requires, and `metrics.token` is read from config and environment.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { renderFleetState, staleClusterIds } from '../../../src/metrics/fleet-metrics.ts';
import { hasMetricsToken } from '../../../src/metrics/handler.ts';
import type { FleetClusterFacts, FleetSeries } from '../../../src/store/read-fleet-state.ts';

const now = new Date('2026-11-26T12:00:00Z');
const ids = (phase: string) => `cluster="east",namespace="shop",phase="${phase}"`;

function cluster(overrides: Partial<FleetClusterFacts> = {}): FleetClusterFacts {
  return {
    id: 1,
    name: 'east',
    reachable: true,
    lastObservedAt: new Date(now.getTime() - 10_000),
    snapshotIntervalMs: 30_000,
    ...overrides,
  };
}

const series: FleetSeries = {
  status: `phaselog_phase_status{${ids('web')},source="cli-utils",status="Current"} 1\nphaselog_phase_status{${ids('db')},source="cli-utils",status="InProgress"} 1`,
  stale: '',
  changed: `phaselog_phase_status_changed_timestamp_seconds{${ids('db')}} 1795700000.5`,
  resources: `phaselog_phase_resources{${ids('db')},status="InProgress"} 1`,
};

const lines = (text: string, name: string): string[] => text.split('\n').filter((l) => l.startsWith(`${name}{`));

describe('staleClusterIds', () => {
  it.each([
    ['an observed, reachable cluster', cluster(), []],
    ['an unreachable cluster', cluster({ reachable: false }), [1]],
    [
      'a cluster not observed for many intervals',
      cluster({ lastObservedAt: new Date(now.getTime() - 3_600_000) }),
      [1],
    ],
    ['a cluster never observed', cluster({ reachable: null, lastObservedAt: null }), [1]],
  ])('%s: every phase stale = %j', (_case, input, stale) => {
    expect(staleClusterIds([input], now)).toEqual(stale);
  });
});

describe('renderFleetState', () => {
  it('prints each series family once with HELP and TYPE, a cluster never read without a reachability series', () => {
    const text = renderFleetState([cluster(), cluster({ id: 2, name: 'new', reachable: null })], series);
    for (const name of [
      'phaselog_phase_status',
      'phaselog_phase_resources',
      'phaselog_phase_status_changed_timestamp_seconds',
      'phaselog_phase_stale',
      'phaselog_cluster_reachable',
    ]) {
      expect(text.match(new RegExp(`^# TYPE ${name} gauge$`, 'gm'))).toHaveLength(1);
    }
    expect(lines(text, 'phaselog_phase_status')).toHaveLength(2);
    expect(lines(text, 'phaselog_phase_stale')).toEqual([]);
    expect(lines(text, 'phaselog_cluster_reachable')).toEqual(['phaselog_cluster_reachable{cluster="east"} 1']);
    expect(text.endsWith('\n')).toBe(true);
    expect(text).not.toMatch(/\n\n/);
  });

  it('escapes a cluster name with quotes, backslashes and newlines', () => {
    const text = renderFleetState([cluster({ name: 'a"b\\c\nd' })], {
      status: '',
      stale: '',
      changed: '',
      resources: '',
    });
    expect(lines(text, 'phaselog_cluster_reachable')).toEqual([
      'phaselog_cluster_reachable{cluster="a\\"b\\\\c\\nd"} 1',
    ]);
  });
});

describe('metrics.token', () => {
  const dir = () => mkdtempSync(path.join(tmpdir(), 'phaselog-metrics-config-'));

  it('is unset by default and read from PHASELOG_METRICS_TOKEN or phaselog.yaml', () => {
    expect(loadConfig({}, dir()).metrics.token).toBeUndefined();
    expect(loadConfig({ PHASELOG_METRICS_TOKEN: 'env-token-0123456789' }, dir()).metrics.token).toBe(
      'env-token-0123456789',
    );
    const withFile = dir();
    writeFileSync(path.join(withFile, 'phaselog.yaml'), 'metrics:\n  token: file-token-0123456789\n');
    expect(loadConfig({}, withFile).metrics.token).toBe('file-token-0123456789');
  });

  it('refuses a token too short to resist guessing', () => {
    expect(() => loadConfig({ PHASELOG_METRICS_TOKEN: 'short' }, dir())).toThrow(ConfigError);
  });

  it.each([
    [`Bearer token-0123456789abcdef`, true],
    [`bearer   token-0123456789abcdef`, true],
    [`Bearer token-0123456789abcdeF`, false],
    [`Bearer token-0123456789abcde`, false],
    [`token-0123456789abcdef`, false],
    [undefined, false],
  ])('authorization %j matches: %s', (authorization, ok) => {
    expect(hasMetricsToken(authorization, 'token-0123456789abcdef')).toBe(ok);
  });
});
