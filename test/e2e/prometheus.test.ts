/**
 * A real Prometheus (Debian's `prometheus` package; `.ci/run` installs it) scrapes `phaselog start`
 * on its demo and loads deploy/prometheus/rules.yaml, as a platform team would run them: the target
 * is up, every rule evaluates without error, the phase-Failed alert goes pending for the demo's
 * crash-looping phase, and every expression of deploy/grafana/phaselog.json runs (the main panels
 * with data). promtool validates the rules file as Prometheus' own checker. The target is scraped
 * as two jobs, as an install of several processes exports the fleet's series once per process: each
 * phase still gives one alert and is counted once.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { cleanEnv, freePort, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { freshDatabaseUrl, testRedisUrl, uniquePrefix } from '../helpers/services.ts';

const RULES = path.join(PROJECT_ROOT, 'deploy', 'prometheus', 'rules.yaml');
const DASHBOARD = path.join(PROJECT_ROOT, 'deploy', 'grafana', 'phaselog.json');
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-prometheus-'));
const db = freshDatabaseUrl('prometheus');
let phaselog: PhaselogProcess | undefined;
let prometheus: ChildProcess | undefined;
let prometheusLog = '';
let api = '';

interface PromAnswer<T> {
  status: string;
  data: T;
  error?: string;
}

async function prom<T>(pathAndQuery: string): Promise<PromAnswer<T>> {
  return (await (await fetch(`${api}${pathAndQuery}`)).json()) as PromAnswer<T>;
}

const query = (expr: string) =>
  prom<{ resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] }>(
    `/api/v1/query?query=${encodeURIComponent(expr)}`,
  );

beforeAll(async () => {
  phaselog = runPhaselog(
    ['start'],
    cleanEnv({
      DATABASE_URL: db.url,
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_PORT: '0',
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: uniquePrefix('prometheus'),
      PHASELOG_LOG_FORMAT: 'json',
    }),
  );
  const line = await phaselog.waitForLog((l) => l.msg === 'phaselog API listening', 90_000);
  const target = new URL(String(line.graphql)).host;
  const port = await freePort();
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - ${RULES}\nscrape_configs:\n${['phaselog-api', 'phaselog-worker'].map((job) => `  - job_name: ${job}\n    static_configs:\n      - targets: ['${target}']\n`).join('')}`,
  );
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prometheus.stdout?.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
  prometheus.stderr?.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
  api = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${api}/-/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 30_000,
    intervalMs: 200,
    what: `Prometheus to be ready\n${prometheusLog}`,
  });
}, 120_000);

afterAll(async () => {
  prometheus?.kill('SIGKILL');
  phaselog?.child.kill('SIGINT');
  await Promise.race([phaselog?.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  phaselog?.child.kill('SIGKILL');
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('Prometheus scraping phaselog', () => {
  it('accepts the rules file under promtool', () => {
    const checked = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toMatch(/SUCCESS: 6 rules found/);
    expect(checked.status).toBe(0);
  });

  it("scrapes the target, evaluates every rule without error, and has the crash-looping phase's alert pending", async () => {
    await waitFor(
      async () => {
        const targets = await prom<{ activeTargets: { health: string }[] }>('/api/v1/targets');
        return targets.data.activeTargets.length === 2 && targets.data.activeTargets.every((t) => t.health === 'up');
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the phaselog target to be up' },
    );
    type Rule = { name: string; health: string; lastError?: string; state?: string };
    let rules: Rule[] = [];
    await waitFor(
      async () => {
        rules = (await prom<{ groups: { rules: Rule[] }[] }>('/api/v1/rules')).data.groups.flatMap((g) => g.rules);
        return rules.length === 6 && rules.every((r) => r.health !== 'unknown');
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'every rule evaluated once' },
    );
    expect(rules.map((r) => [r.name, r.health, r.lastError ?? ''])).toEqual(rules.map((r) => [r.name, 'ok', '']));

    // The demo's staging worker pod crash-loops within a minute: its phase goes Failed, and the
    // alert waits out its `for:` as pending.
    type Alert = { labels: Record<string, string>; state: string };
    let alerts: Alert[] = [];
    await waitFor(
      async () => {
        alerts = (await prom<{ alerts: Alert[] }>('/api/v1/alerts')).data.alerts;
        return alerts.some((a) => a.labels['alertname'] === 'PhaselogPhaseFailed');
      },
      { timeoutMs: 90_000, intervalMs: 500, what: 'the PhaselogPhaseFailed alert for the crash-looping phase' },
    );
    const failed = alerts.filter(
      (a) => a.labels['alertname'] === 'PhaselogPhaseFailed' && a.labels['phase'] === 'worker',
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      state: 'pending',
      labels: { cluster: 'demo-staging', phase: 'worker', severity: 'critical' },
    });
  }, 150_000);

  it('runs every expression of the Grafana dashboard, with data in the main panels', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const withData = new Set([
      'Phases by status',
      'Clusters reachable',
      'Snapshot queue',
      'Requests to cluster API servers / s by code',
      'Snapshot duration p95',
    ]);
    // Rates need two samples in their window: give the 1 s scrapes a few seconds.
    await waitFor(
      async () => ((await query('sum(rate(phaselog_kube_requests_total[5m]))')).data.result.length ?? 0) > 0,
      { timeoutMs: 30_000, intervalMs: 500, what: 'rates to have two samples' },
    );
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) {
        const answer = await query(target.expr);
        expect([panel.title, target.expr, answer.status, answer.error ?? '']).toEqual([
          panel.title,
          target.expr,
          'success',
          '',
        ]);
      }
    }
    // The main panels have data once their series were scraped a few times (later on a loaded machine).
    const empty = async (): Promise<string[]> => {
      const out: string[] = [];
      for (const panel of dashboard.panels.filter((p) => withData.has(p.title))) {
        for (const target of panel.targets ?? [])
          if ((await query(target.expr)).data.result.length === 0) out.push(panel.title);
      }
      return out;
    };
    let missing: string[] = [];
    await waitFor(async () => (missing = await empty()).length === 0, {
      timeoutMs: 30_000,
      intervalMs: 1000,
      what: 'data in the main panels',
    }).catch(() => undefined);
    expect(missing).toEqual([]);
    const phasesByStatus = dashboard.panels.find((p) => p.title === 'Phases by status')?.targets?.[0]?.expr as string;
    // The demo's nine phases, each counted once under its one status, though two jobs export them.
    // Right after a phase changes status one job may have scraped the new status and the other
    // not yet (the old series goes stale at the other's next scrape): the sum settles within a
    // scrape interval, so it is read until it does, and an answer that never settles fails.
    let counted = 0;
    await waitFor(
      async () => {
        const byStatus = (await query(phasesByStatus)).data.result;
        counted = byStatus.reduce((sum, r) => sum + Number(r.value[1]), 0);
        return counted === 9;
      },
      { timeoutMs: 10_000, intervalMs: 500, what: 'each phase counted once' },
    ).catch(() => undefined);
    expect(counted).toBe(9);
  }, 60_000);
});
