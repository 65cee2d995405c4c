/**
 * The demo: phaselog's embedded default when no cluster is configured. Two emulated clusters
 * (`demo-staging`, `demo-prod`) serve phases of every inventory kind over the real Kubernetes
 * REST and watch protocol, and a scripted scenario keeps changing them: a rollout progressing to
 * Current, a crash-looping pod that recovers, a manifest change, and a short cluster outage. The
 * scenario repeats every few minutes so the history keeps growing.
 */
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { startEmulator } from '../emulator/index.ts';
import { startFaultControl, writeControlFile } from '../emulator/control.ts';
import type { Emulator } from '../emulator/index.ts';
import { clusterOutage, deploymentRollout, podCrashLoop, runScenario } from '../emulator/scenario.ts';
import { applyRolledOut } from '../emulator/workload-objects.ts';
import type { ScenarioStep } from '../emulator/scenario.ts';
import { loadKubeconfigClusters } from '../kube/clusters.ts';
import type { ClusterHandle } from '../kube/clusters.ts';
import type { CheckConfig } from '../checks/config.ts';
import { startDemoHealthEndpoint } from './health-endpoint.ts';
import {
  argoApplication,
  cliUtilsInventory,
  configMap,
  fluxKustomization,
  namespaceObject,
  readyDeployment,
  ref,
  resourceGroup,
  runningPod,
  service,
} from './objects.ts';

export interface DemoOptions {
  log: Logger;
  /** The demo writes `demo.kubeconfig` here so kubectl can look at the emulated clusters too. */
  stateDir: string;
  /** Scenario speed: 2 runs twice as fast. @default 1 */
  speed?: number;
  /** Pause between scenario cycles, in ms. @default 120000 */
  cycleGapMs?: number;
}

export interface Demo {
  clusters: ClusterHandle[];
  emulators: Record<string, Emulator>;
  /** Path of a kubeconfig with one context per demo cluster. */
  kubeconfigPath: string;
  /** The demo's checks: an http check on emulated service health endpoints, one of which flips. */
  checks: CheckConfig[];
  close(): Promise<void>;
}

const NS = 'shop';

function seedCluster(em: Emulator, cluster: 'staging' | 'prod'): void {
  const shopRefs = [ref('Namespace', '', NS), ref('ConfigMap', NS, 'frontend'), ref('Service', NS, 'frontend'), ref('Deployment', NS, 'frontend')];
  em.apply([
    namespaceObject(NS),
    namespaceObject('flux-system'),
    namespaceObject('argocd'),
    configMap(NS, 'frontend'),
    service(NS, 'frontend'),
    readyDeployment(NS, 'frontend', cluster === 'prod' ? 3 : 2),
    service(NS, 'api'),
    readyDeployment(NS, 'api', 2, 'example/api:1.0.0'),
    configMap(NS, 'worker-config', { QUEUE: 'orders' }),
    // Staging's worker-0 comes and crash-loops with its scenario; prod's simply runs.
    ...(cluster === 'prod' ? [runningPod(NS, 'worker-0')] : []),
    readyDeployment(NS, 'checkout', 2, 'example/checkout:2.3.0'),
    service(NS, 'checkout'),
    // The four phases, one per inventory kind.
    cliUtilsInventory(NS, `${cluster}-shop-base`, shopRefs),
    resourceGroup(NS, 'api', [ref('Service', NS, 'api'), ref('Deployment', NS, 'api')]),
    fluxKustomization('worker', [ref('ConfigMap', NS, 'worker-config'), ref('Pod', NS, 'worker-0')], 'main@sha1:1111111'),
    argoApplication('checkout', NS, [ref('Deployment', NS, 'checkout'), ref('Service', NS, 'checkout')]),
  ]);
  // What the controllers leave behind: each Deployment's ReplicaSet and Pods (`status --tree`).
  // The images match readyDeployment's, so a rollout scales these ReplicaSets down.
  applyRolledOut(em, { deployment: 'frontend', namespace: NS, image: 'nginx:1.27', container: 'main' }, cluster === 'prod' ? 3 : 2);
  applyRolledOut(em, { deployment: 'api', namespace: NS, image: 'example/api:1.0.0', container: 'main' }, 2);
  applyRolledOut(em, { deployment: 'checkout', namespace: NS, image: 'example/checkout:2.3.0', container: 'main' }, 2);
}

/** One cycle of changes on staging: rollout, crash loop, manifest change. */
function stagingCycle(cycle: number): ScenarioStep[] {
  const version = `1.${cycle + 1}.0`;
  return [
    ...deploymentRollout({ name: 'api', namespace: NS, replicas: 2, image: `example/api:${version}`, startAt: 3_000, stepMs: 4_000 }),
    ...podCrashLoop({ name: 'worker-0', namespace: NS, crashes: 2, startAt: 1_000, stepMs: 8_000 }),
    {
      at: 35_000,
      label: 'worker manifest gains a ConfigMap',
      apply: [
        configMap(NS, `worker-flags-${cycle}`, { FEATURE_X: 'on' }),
        fluxKustomization(
          'worker',
          [ref('ConfigMap', NS, 'worker-config'), ref('Pod', NS, 'worker-0'), ref('ConfigMap', NS, `worker-flags-${cycle}`)],
          `main@sha1:${String(cycle + 2).repeat(7)}`,
        ),
      ],
    },
  ];
}

/** One cycle on prod: a rollout of checkout and a short outage. */
function prodCycle(cycle: number): ScenarioStep[] {
  return [
    ...deploymentRollout({ name: 'checkout', namespace: NS, replicas: 2, image: `example/checkout:2.${4 + cycle}.0`, startAt: 5_000, stepMs: 5_000 }),
    ...clusterOutage({ at: 25_000, durationMs: 15_000 }),
  ];
}

/** Start the demo clusters and their scenario loop. */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const { log } = options;
  const speed = options.speed ?? 1;
  const controller = new AbortController();
  const emulators: Record<string, Emulator> = {};
  const clusters: ClusterHandle[] = [];
  const dir = path.join(options.stateDir, 'demo');
  mkdirSync(dir, { recursive: true });

  for (const name of ['staging', 'prod'] as const) {
    const em = await startEmulator({ port: 0, clusterName: `demo-${name}` });
    emulators[`demo-${name}`] = em;
    seedCluster(em, name);
    const loaded = loadKubeconfigClusters({ yaml: em.kubeconfig({ contextName: `demo-${name}` }), labels: { demo: 'true', env: name } });
    if (loaded.errors.length) throw new Error(`demo cluster demo-${name}: ${loaded.errors.map((e) => e.message).join('; ')}`);
    clusters.push(...loaded.clusters);
    await em.writeKubeconfig(path.join(dir, `demo-${name}.kubeconfig`), { contextName: `demo-${name}` });
  }

  const loop = async (em: Emulator, cycleSteps: (cycle: number) => ScenarioStep[], name: string) => {
    for (let cycle = 0; !controller.signal.aborted; cycle++) {
      const result = await runScenario(em, cycleSteps(cycle), { signal: controller.signal, speed });
      if (result.status === 'failed') log.warn({ cluster: name, error: result.error }, 'demo scenario step failed');
      await delay((options.cycleGapMs ?? 120_000) / speed, undefined, { signal: controller.signal }).catch(() => {});
    }
  };
  // Outages on demand, as `phaselog emulator` offers them: `phaselog emulator fault demo-prod refuse
  // --for 30s --control-file <state>/demo/emulator.control.json`.
  const control = await startFaultControl({ clusters: emulators });
  const controlFile = path.join(dir, 'emulator.control.json');
  await writeControlFile(controlFile, control, Object.keys(emulators));
  const health = await startDemoHealthEndpoint(120_000 / speed);
  const loops = [loop(emulators['demo-staging'] as Emulator, stagingCycle, 'demo-staging'), loop(emulators['demo-prod'] as Emulator, prodCycle, 'demo-prod')];
  log.info({ clusters: clusters.map((c) => c.name), kubeconfigs: dir, faultControl: controlFile }, 'demo clusters started (no kubeconfig or clusters configured)');

  return {
    clusters,
    emulators,
    kubeconfigPath: dir,
    checks: [health.check],
    async close() {
      controller.abort();
      await health.close();
      await Promise.allSettled(loops);
      await control.close();
      await rm(controlFile, { force: true });
      await Promise.all(Object.values(emulators).map((em) => em.close()));
    },
  };
}
