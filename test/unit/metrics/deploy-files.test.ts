/**
 * The Grafana dashboard and Prometheus rules shipped in deploy/ name only series phaselog exports
 * (promtool is not available here: the files are parsed and every expression's metric names are
 * checked against the names the registry registers).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { registerFleetMetrics } from '../../../src/metrics/fleet-metrics.ts';
import { createMetrics, registerActiveOperations } from '../../../src/metrics/registry.ts';
import { registerWorkerMetrics } from '../../../src/metrics/worker-metrics.ts';

/** The names a phaselog process with every part running exports: the `# TYPE` lines of its /metrics body. */
async function exportedNames(): Promise<Set<string>> {
  const metrics = createMetrics();
  registerFleetMetrics(metrics, {
    clusters: async () => [],
    series: async () => ({ status: '', stale: '', changed: '', resources: '' }),
  });
  registerWorkerMetrics(metrics, { name: 'q', getJobCounts: async () => ({}) }, undefined);
  registerActiveOperations(metrics, () => 0);
  const { body } = await metrics.render();
  return new Set([...body.matchAll(/^# TYPE (\S+) /gm)].map(([, name]) => name as string));
}

/** Metric names in a PromQL expression; histogram series map back to their histogram. */
function metricNamesIn(expr: string): string[] {
  return [...expr.matchAll(/phaselog_[a-z_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, ''));
}

const rules = parseYaml(readFileSync(new URL('../../../deploy/prometheus/rules.yaml', import.meta.url), 'utf8')) as {
  groups: { name: string; rules: { alert?: string; expr: string; for?: string }[] }[];
};
const dashboard = JSON.parse(
  readFileSync(new URL('../../../deploy/grafana/phaselog.json', import.meta.url), 'utf8'),
) as { panels: { title: string; targets: { expr: string }[] }[] };
const ruleExprs = rules.groups.flatMap((g) => g.rules.map((r) => [r.alert ?? '(record)', r.expr] as const));
const panelExprs = dashboard.panels.flatMap((p) => p.targets.map((t) => [p.title, t.expr] as const));

describe('deploy/ files and the exported series', async () => {
  const names = await exportedNames();

  it('registers the phase state, machinery and process series under phaselog_', () => {
    for (const name of [
      'phaselog_phase_status',
      'phaselog_cluster_reachable',
      'phaselog_snapshot_duration_seconds',
      'phaselog_queue_jobs',
      'phaselog_graphql_request_duration_seconds',
      'phaselog_process_cpu_seconds_total',
    ]) {
      expect(names).toContain(name);
    }
    for (const name of names) expect(name).toMatch(/^phaselog_/);
  });

  it('ships the alerts the issue asks for', () => {
    expect(ruleExprs.map(([alert]) => alert)).toEqual(
      expect.arrayContaining([
        'PhaselogPhaseFailed',
        'PhaselogClusterUnreachable',
        'PhaselogSnapshotsFailing',
        'PhaselogQueueBackingUp',
      ]),
    );
    expect(rules.groups[0]?.rules.find((r) => r.alert === 'PhaselogPhaseFailed')?.for).toBe('5m');
  });

  it.each([...ruleExprs, ...panelExprs])('%s: every metric in its expression is exported', (_where, expr) => {
    const used = metricNamesIn(expr);
    expect(used.length).toBeGreaterThan(0);
    for (const name of used) expect(names, `${name} in ${expr}`).toContain(name);
  });

  it('a misspelt metric would be caught', () => {
    expect(metricNamesIn('rate(phaselog_snapshot_duration_seconds_bucket[5m]) + phaselog_phase_statuses')).toEqual([
      'phaselog_snapshot_duration_seconds',
      'phaselog_phase_statuses',
    ]);
    expect(names).not.toContain('phaselog_phase_statuses');
  });
});
