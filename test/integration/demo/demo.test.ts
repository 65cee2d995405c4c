/**
 * The demo clusters, read through phaselog's own cluster-access layer and status engine: every
 * inventory kind is there, and the scripted scenario moves statuses the way the README promises.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLAN, startDemo } from '../../../src/demo/index.ts';
import { definePlans } from '../../../src/history/plans.ts';
import type { Demo } from '../../../src/demo/index.ts';
import { createClusterClient } from '../../../src/kube/cluster-client.ts';
import { discoverPhases } from '../../../src/kube/discover-phases.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';
import { computeStatus } from '../../../src/status/index.ts';
import { buildChildTree, indexOwners, type ChildNode } from '../../../src/status/children.ts';
import { waitFor } from '../../../src/runtime/wait.ts';
import { fillUrlTemplate } from '../../../src/checks/url-template.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';

const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-demo-'));
let demo: Demo;

/** What the LCM owner phase on staging went through, recorded from the start (the scenario is fast). */
const lcm = { statuses: [] as string[], members: new Set<string>(), stop: false, done: Promise.resolve() };

async function watchLcmPhase(): Promise<void> {
  const staging = client('demo-staging');
  while (!lcm.stop) {
    const observation = await observeCluster(staging, { owners: demo.owners });
    const phase =
      observation.outcome === 'ok' ? observation.phases.find((p) => p.identity.sourceKind === 'owner') : undefined;
    if (phase !== undefined) {
      if (lcm.statuses[lcm.statuses.length - 1] !== phase.status.status) lcm.statuses.push(phase.status.status);
      for (const resource of phase.resources) lcm.members.add(resource.key);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  staging.close();
}

beforeAll(async () => {
  // 20x speed: the one-minute scenario plays in about three seconds.
  demo = await startDemo({ log: pino({ level: 'silent' }), stateDir, speed: 20, cycleGapMs: 600_000 });
  lcm.done = watchLcmPhase();
});
afterAll(async () => {
  lcm.stop = true;
  await lcm.done;
  await demo.close();
  rmSync(stateDir, { recursive: true, force: true });
});

function client(name: string) {
  const handle = demo.clusters.find((c) => c.name === name);
  if (!handle) throw new Error(`no demo cluster ${name}`);
  return createClusterClient(handle);
}

async function statusOf(cluster: string, kind: string, name: string): Promise<string> {
  const ref = { group: kind === 'Deployment' ? 'apps' : '', kind, namespace: 'shop', name };
  const read = await readObjects(client(cluster), [ref]);
  if (read.clusterError) return `unreachable:${read.clusterError.kind}`;
  const object = read.objects.get(refKey(ref));
  return object ? computeStatus(object, { now: new Date() }).status : 'NotFound';
}

describe('the demo clusters', () => {
  it('are two clusters with a phase of every inventory kind each', async () => {
    expect(demo.clusters.map((c) => c.name).sort()).toEqual(['demo-prod', 'demo-staging']);
    for (const cluster of ['demo-staging', 'demo-prod']) {
      const found = await discoverPhases(client(cluster));
      expect(found.invalid).toEqual([]);
      expect(found.phases.map((p) => p.phase.source).sort()).toEqual(['argocd', 'cli-utils', 'flux', 'resourcegroup']);
      for (const { phase } of found.phases) {
        expect(phase.errors).toEqual([]);
        expect(phase.entries.length).toBeGreaterThanOrEqual(2);
      }
    }
    // Staging also has an operator-driven (owner) phase; prod has none.
    for (const [cluster, expected] of [
      ['demo-staging', ['openstack/keystone-upgrade']],
      ['demo-prod', []],
    ] as const) {
      const observation = await observeCluster(client(cluster), { owners: demo.owners });
      if (observation.outcome !== 'ok') throw new Error(`${cluster} unreachable`);
      expect(
        observation.phases
          .filter((p) => p.identity.sourceKind === 'owner')
          .map((p) => `${p.identity.namespace}/${p.identity.name}`),
      ).toEqual(expected);
      expect(observation.phases).toHaveLength(4 + expected.length);
    }
    // Every object a prod phase lists exists there (staging's worker-0 comes with its scenario).
    expect(await statusOf('demo-prod', 'Pod', 'worker-0')).toBe('Current');
  });

  it('roll the api Deployment out to Current, crash-loop and recover worker-0, and take prod away for a while', async () => {
    const seen = { api: new Set<string>(), worker: new Set<string>(), prod: new Set<string>() };
    await waitFor(
      async () => {
        seen.api.add(await statusOf('demo-staging', 'Deployment', 'api'));
        seen.worker.add(await statusOf('demo-staging', 'Pod', 'worker-0'));
        seen.prod.add(await statusOf('demo-prod', 'Deployment', 'checkout'));
        return (
          seen.api.has('InProgress') &&
          seen.prod.has('unreachable:UNREACHABLE') &&
          (await statusOf('demo-staging', 'Deployment', 'api')) === 'Current' &&
          (await statusOf('demo-prod', 'Deployment', 'checkout')) === 'Current' &&
          seen.worker.has('Failed') &&
          (await statusOf('demo-staging', 'Pod', 'worker-0')) === 'Current'
        );
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'the demo scenario to play' },
    );
    expect(seen.api).toContain('Current');
    expect(seen.worker).toContain('Failed'); // kstatus: CrashLoopBackOff is Failed
  });

  it("runs the LCM phase's tasks: a Job runs and completes, a verify Job fails and its retry completes", async () => {
    await waitFor(
      () => lcm.statuses.includes('Failed') && lcm.statuses.lastIndexOf('Current') > lcm.statuses.indexOf('Failed'),
      { timeoutMs: 20_000, intervalMs: 50, what: 'the LCM phase to fail and recover' },
    );
    // It runs (at 20x the seeded Current may be gone before the first read), fails, runs the retry, ends Current.
    expect(lcm.statuses.indexOf('InProgress')).toBeLessThan(lcm.statuses.indexOf('Failed'));
    expect([...lcm.members].some((key) => key.includes('keystone-verify-0-retry'))).toBe(true);
    expect([...lcm.members].some((key) => key.includes('Workflow'))).toBe(true);
  });

  it("give api's Deployment a tree: its ReplicaSet and Pods, and after the rollout the old ReplicaSet scaled to 0 beside the new one", async () => {
    const em = demo.emulators['demo-staging']!;
    const tree = () => {
      const objects = [
        ...em.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'shop' }),
        ...em.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'shop' }),
      ];
      const lines = (nodes: ChildNode[], depth = 0): string[] =>
        nodes.flatMap((n) => [`${'  '.repeat(depth)}${n.kind} ${n.status}`, ...lines(n.children, depth + 1)]);
      return lines(
        buildChildTree({ namespace: 'shop', kind: 'Deployment', name: 'api' }, indexOwners(objects), Date.now())
          .children,
      );
    };
    // Prod's checkout has its own from the start (its rollout comes later in the cycle).
    const prod = demo.emulators['demo-prod']!;
    expect(prod.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'shop', labelSelector: 'app=frontend' })).toHaveLength(
      3,
    );
    // After the rollout: the new ReplicaSet with two Pods, the old one kept at 0 (as the controller keeps history).
    const settled = ['  Pod Current', '  Pod Current', 'ReplicaSet Current', 'ReplicaSet Current'];
    await waitFor(async () => JSON.stringify([...tree()].sort()) === JSON.stringify(settled), {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: 'the new and the old (scaled to 0) ReplicaSet',
    });
    const names = em
      .list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'shop' })
      .filter((rs) => String(rs.metadata?.['name']).startsWith('api-'));
    expect(names.map((rs) => (rs['spec'] as { replicas: number }).replicas).sort()).toEqual([0, 2]);
  });

  it('changes the worker phase manifest', async () => {
    await waitFor(
      async () => {
        const found = await discoverPhases(client('demo-staging'));
        const worker = found.phases.find((p) => p.phase.source === 'flux');
        return worker?.phase.entries.some((e) => e.name === 'worker-flags-0') ?? false;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the worker manifest change' },
    );
  });

  it("declare a plan by labels over staging's four phases in order, which the worker's manifest change keeps", async () => {
    const planOf = async (cluster: string) => {
      const found = await discoverPhases(client(cluster));
      const labelled = found.phases.map(({ phase }, id) => ({
        id,
        cluster,
        namespace: phase.namespace,
        name: phase.name,
        labels: phase.labels,
      }));
      return definePlans([], labelled);
    };
    // Read after the scenario re-applied the worker's Kustomization (the test before waits for it).
    const [plan] = await planOf('demo-staging');
    expect(plan).toMatchObject({ name: DEMO_PLAN, source: 'labels', warnings: [] });
    expect(plan?.refs.map((r) => r.text)).toEqual([
      'demo-staging/shop/staging-shop-base',
      'demo-staging/shop/api',
      'demo-staging/flux-system/worker',
      'demo-staging/argocd/checkout',
    ]);
    expect(await planOf('demo-prod')).toEqual([]);
  });
  it("come with an http check whose condition on staging's api phase flips within the first two minutes (at 20x: seconds), while prod's stays healthy", async () => {
    const [check] = demo.checks;
    expect(check?.name).toBe('health');
    expect(check?.interval).toBeLessThanOrEqual(30_000);
    const urlOf = (cluster: string, name: string) =>
      fillUrlTemplate(check?.http?.url ?? '', {
        id: 0,
        cluster,
        source: 'resourcegroup',
        namespace: 'shop',
        name,
        labels: {},
      });
    const seen = new Set<number>();
    await waitFor(
      async () => {
        seen.add((await fetch(urlOf('demo-staging', 'api'))).status);
        return seen.has(200) && seen.has(503);
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'staging api health to be seen both up and down' },
    );
    expect((await fetch(urlOf('demo-prod', 'api'))).status).toBe(200);
  });
});
