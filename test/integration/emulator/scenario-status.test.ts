/**
 * The scenario builders produce objects phaselog's kstatus port reads the way kstatus reads the
 * real controllers' output: rollouts end Current, crash loops are Failed until they recover, and a
 * crash-looping Pod fails its ReplicaSet through the pod-aware rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type EmulatorObjectRef } from '../../../src/emulator/index.ts';
import { deploymentRollout, podCrashLoop, runScenario } from '../../../src/emulator/scenario.ts';
import { computeStatus } from '../../../src/status/index.ts';

let em: Emulator;

beforeAll(async () => {
  em = await startEmulator();
});
afterAll(async () => {
  await em.close();
});

function statusOf(ref: EmulatorObjectRef): string {
  return computeStatus(em.get(ref), { now: Date.now() }).status;
}

describe('scenario objects under kstatus', () => {
  it('a Deployment rollout is InProgress at every step and Current at the end', async () => {
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ks', name: 'api' };
    const seen: string[] = [];
    await runScenario(em, deploymentRollout({ name: 'api', namespace: 'ks', replicas: 3, stepMs: 5 }), {
      onStep: () => seen.push(statusOf(ref)),
    });
    expect(seen).toEqual(['InProgress', 'InProgress', 'InProgress', 'Current']);
    await runScenario(
      em,
      deploymentRollout({ name: 'api', namespace: 'ks', replicas: 3, image: 'nginx:1.28', stepMs: 5 }),
      { onStep: () => seen.push(statusOf(ref)) },
    );
    expect(seen.slice(4)).toEqual(['InProgress', 'InProgress', 'InProgress', 'Current']);
  });

  it('the rollout ReplicaSets end Current, the scaled-down one included', async () => {
    await runScenario(em, deploymentRollout({ name: 'web', namespace: 'ks2', replicas: 2, image: 'web:1', stepMs: 5 }));
    await runScenario(em, deploymentRollout({ name: 'web', namespace: 'ks2', replicas: 2, image: 'web:2', stepMs: 5 }));
    const sets = em.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'ks2' });
    const pods = em.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'ks2' });
    expect(sets).toHaveLength(2);
    expect(sets.map((rs) => computeStatus(rs, { now: Date.now(), pods }).status)).toEqual(['Current', 'Current']);
  });

  it('a crash-looping Pod fails the ReplicaSet that selects it through the pod-aware rule', async () => {
    await runScenario(em, deploymentRollout({ name: 'pay', namespace: 'ks3', replicas: 2, stepMs: 5 }));
    const [rs] = em.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'ks3' });
    const labels = (rs?.metadata?.['labels'] ?? {}) as Record<string, string>;
    await runScenario(em, podCrashLoop({ name: 'pay-extra', namespace: 'ks3', crashes: 1, recover: false, stepMs: 5 }));
    const crashing = em.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'ks3', name: 'pay-extra' });
    em.apply({ ...crashing, metadata: { ...crashing?.metadata, labels } });
    // One more replica than ready makes the ReplicaSet InProgress, which a failed pod escalates.
    em.patchStatus(
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'ks3', name: String(rs?.metadata?.['name']) },
      { replicas: 3 },
    );
    const pods = em.list({
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'ks3',
      labelSelector: Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    });
    expect(pods).toHaveLength(3);
    const after = em.list({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'ks3' })[0];
    expect(computeStatus(after, { now: Date.now(), pods }).status).toBe('Failed');
  });

  it('a crash-looping Pod is Failed until it recovers', async () => {
    const ref = { apiVersion: 'v1', kind: 'Pod', namespace: 'ks', name: 'worker' };
    const seen: string[] = [];
    await runScenario(em, podCrashLoop({ name: 'worker', namespace: 'ks', crashes: 2, stepMs: 5 }), {
      onStep: () => seen.push(statusOf(ref)),
    });
    expect(seen).toEqual(['Current', 'Failed', 'Failed', 'Current']);
  });
});
