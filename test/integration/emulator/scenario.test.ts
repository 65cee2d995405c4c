import { AppsV1Api, CoreV1Api, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clusterOutage,
  deploymentRollout,
  podCrashLoop,
  runScenario,
  type ScenarioStep,
} from '../../../src/emulator/scenario.ts';
import { configMap, startHarness, waitFor, type Harness } from './helpers.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.em.close();
});

describe('runScenario', () => {
  it('runs steps in time order, declarative and functional alike', async () => {
    const order: string[] = [];
    const steps: ScenarioStep[] = [
      { at: 40, do: () => void order.push('third') },
      { at: 0, apply: configMap('sc-1', 'scen') },
      {
        at: 20,
        patchStatus: {
          ref: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'scen', name: 'missing' },
          status: {},
        },
        label: 'bad step',
      },
    ];
    const result = await runScenario(h.em, steps, {
      onStep: (s) => order.push(s.label ?? ('apply' in s ? 'apply' : 'do')),
    });
    expect(result).toMatchObject({ status: 'failed', stepsRun: 1, error: { step: 2, label: 'bad step' } });
    expect(result.error?.message).toMatch(/does not exist/);
    expect(order).toEqual(['apply']);
    expect(h.em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'scen', name: 'sc-1' })).toBeDefined();
  });

  it('stops at once when aborted and reports how far it got', async () => {
    const controller = new AbortController();
    const steps: ScenarioStep[] = [
      { at: 0, apply: configMap('ab-1', 'scen') },
      { at: 60_000, apply: configMap('ab-2', 'scen') },
    ];
    const running = runScenario(h.em, steps, { signal: controller.signal, onStep: () => controller.abort() });
    expect(await running).toEqual({ status: 'aborted', stepsRun: 1 });
    expect(h.em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'scen', name: 'ab-2' })).toBeUndefined();
  });

  it('reports an invalid time as a failed result, not an exception', async () => {
    expect(await runScenario(h.em, [{ at: -5, clearFaults: true }])).toMatchObject({ status: 'failed', stepsRun: 0 });
  });
});

describe('deploymentRollout', () => {
  it('steps a Deployment from progressing to all replicas available, seen through a watch', async () => {
    const seen: { ready: number; available: string; observed: number; generation: number }[] = [];
    const controller = await new Watch(h.kc).watch(
      '/apis/apps/v1/namespaces/roll/deployments',
      {},
      (
        _type,
        obj: {
          metadata: { generation: number };
          status?: {
            readyReplicas?: number;
            observedGeneration?: number;
            conditions?: { type: string; status: string }[];
          };
        },
      ) => {
        seen.push({
          ready: obj.status?.readyReplicas ?? 0,
          available: obj.status?.conditions?.find((c) => c.type === 'Available')?.status ?? 'none',
          observed: obj.status?.observedGeneration ?? 0,
          generation: obj.metadata.generation,
        });
      },
      () => undefined,
    );
    const result = await runScenario(
      h.em,
      deploymentRollout({ name: 'api', namespace: 'roll', replicas: 3, stepMs: 10 }),
    );
    expect(result).toEqual({ status: 'completed', stepsRun: 4 });
    await waitFor('the final event', () => (seen.some((s) => s.ready === 3) ? true : undefined));
    controller.abort();
    expect(seen.map((s) => s.ready)).toEqual([0, 0, 1, 2, 3]);
    expect(seen.at(-1)).toEqual({ ready: 3, available: 'True', observed: 1, generation: 1 });

    const apps = h.kc.makeApiClient(AppsV1Api);
    await runScenario(
      h.em,
      deploymentRollout({ name: 'api', namespace: 'roll', replicas: 3, image: 'nginx:1.28', stepMs: 5 }),
    );
    const after = await apps.readNamespacedDeployment({ name: 'api', namespace: 'roll' });
    expect(after.metadata?.generation).toBe(2);
    expect(after.status?.observedGeneration).toBe(2);
    expect(after.status?.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('NewReplicaSetAvailable');
  });
});

describe('deploymentRollout with controller-owned objects', () => {
  it('replaces the old ReplicaSet and Pods with new ones, and the Deployment owns them all', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const apps = h.kc.makeApiClient(AppsV1Api);
    await runScenario(
      h.em,
      deploymentRollout({ name: 'shop', namespace: 'owned', replicas: 2, image: 'shop:1', stepMs: 5 }),
    );
    const firstPods = (await core.listNamespacedPod({ namespace: 'owned', labelSelector: 'app=shop' })).items;
    expect(firstPods.map((p) => p.status?.containerStatuses?.[0]?.image)).toEqual(['shop:1', 'shop:1']);

    await runScenario(
      h.em,
      deploymentRollout({ name: 'shop', namespace: 'owned', replicas: 3, image: 'shop:2', stepMs: 5 }),
    );
    const pods = (await core.listNamespacedPod({ namespace: 'owned', labelSelector: 'app=shop' })).items;
    expect(pods.map((p) => p.spec?.containers[0]?.image)).toEqual(['shop:2', 'shop:2', 'shop:2']);
    const sets = (await apps.listNamespacedReplicaSet({ namespace: 'owned' })).items;
    const byImage = Object.fromEntries(
      sets.map((rs) => [
        rs.spec?.template?.spec?.containers[0]?.image,
        `${rs.spec?.replicas}/${rs.status?.readyReplicas}`,
      ]),
    );
    expect(byImage).toEqual({ 'shop:1': '0/0', 'shop:2': '3/3' });
    expect(sets.every((rs) => rs.status?.observedGeneration === rs.metadata?.generation)).toBe(true);

    const events = await core.listNamespacedEvent({ namespace: 'owned', fieldSelector: 'involvedObject.name=shop' });
    expect(events.items.map((e) => e.message?.replace(/shop-\w+/, 'shop-<hash>')).sort()).toEqual([
      'Scaled down replica set shop-<hash> to 0 from 1',
      'Scaled down replica set shop-<hash> to 1 from 2',
      'Scaled up replica set shop-<hash> to 2',
      'Scaled up replica set shop-<hash> to 3',
    ]);

    await apps.deleteNamespacedDeployment({ name: 'shop', namespace: 'owned' });
    expect((await core.listNamespacedPod({ namespace: 'owned' })).items).toEqual([]);
    expect((await apps.listNamespacedReplicaSet({ namespace: 'owned' })).items).toEqual([]);
  });
});

describe('podCrashLoop', () => {
  it('shows CrashLoopBackOff with a rising restartCount, then recovers', async () => {
    const states: string[] = [];
    const ref = { apiVersion: 'v1', kind: 'Pod', namespace: 'crash', name: 'worker' };
    await runScenario(h.em, podCrashLoop({ name: 'worker', namespace: 'crash', crashes: 2, stepMs: 5 }), {
      onStep: () => {
        const cs = (
          h.em.get(ref)?.['status'] as {
            containerStatuses: { restartCount: number; state: Record<string, { reason?: string }> }[];
          }
        ).containerStatuses[0];
        states.push(`${Object.keys(cs?.state ?? {})[0]}:${cs?.state['waiting']?.reason ?? '-'}:${cs?.restartCount}`);
      },
    });
    expect(states).toEqual(['running:-:0', 'waiting:CrashLoopBackOff:1', 'waiting:CrashLoopBackOff:2', 'running:-:2']);
    const core = h.kc.makeApiClient(CoreV1Api);
    const pod = await core.readNamespacedPod({ name: 'worker', namespace: 'crash' });
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const events = await core.listNamespacedEvent({
      namespace: 'crash',
      fieldSelector: 'involvedObject.kind=Pod,involvedObject.name=worker',
    });
    expect(events.items.map((e) => `${e.type} ${e.reason} x${e.count}`)).toEqual(['Warning BackOff x2']);
  });
});

describe('clusterOutage', () => {
  it('resets every request while the cluster is away and serves again afterwards', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    let away = false;
    const running = runScenario(h.em, clusterOutage({ at: 0, durationMs: 1000 }), {
      onStep: (s) => (away = s.label === 'cluster goes away'),
    });
    await waitFor('the outage', () => (away ? true : undefined));
    const during = await core.listNamespace().catch((e: unknown) => e);
    expect(during).toBeInstanceOf(Error);
    expect(await running).toEqual({ status: 'completed', stepsRun: 2 });
    expect((await core.listNamespace()).items.length).toBeGreaterThan(0);
  });
});
