/**
 * The demo: phaselog's embedded default when no cluster is configured. Two emulated clusters
 * (`demo-staging`, `demo-prod`) serve phases of every inventory kind over the real Kubernetes
 * REST and watch protocol, and a scripted scenario keeps changing them: a rollout progressing to
 * Current, a crash-looping pod that recovers, a manifest change, an operator's phase whose task Jobs
 * run, complete, fail and are retried (an owner phase), and a short cluster outage. The scenario
 * repeats every few minutes so the history keeps growing.
 */
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { startEmulator } from '../emulator/index.ts';
import { startFaultControl, writeControlFile } from '../emulator/control.ts';
import type { Emulator, KubeObject } from '../emulator/index.ts';
import { clusterOutage, deploymentRollout, podCrashLoop, runScenario } from '../emulator/scenario.ts';
import { applyRolledOut } from '../emulator/workload-objects.ts';
import type { ScenarioStep } from '../emulator/scenario.ts';
import { loadKubeconfigClusters } from '../kube/clusters.ts';
import type { ClusterHandle } from '../kube/clusters.ts';
import type { CheckConfig } from '../checks/config.ts';
import type { OwnerKindSpec } from '../inventory/owner-phase.ts';
import { startDemoHealthEndpoint } from './health-endpoint.ts';
import {
  argoApplication,
  cliUtilsInventory,
  configMap,
  fluxKustomization,
  inPlan,
  jobPod,
  LCM_PHASE,
  lcmPhase,
  namespaceObject,
  ownedJob,
  ownedWorkflow,
  ownerPhaseCrds,
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
  /** The demo's owner kinds (`phases.owners`): its LCM Phase objects and their Jobs, Pods and Workflows. */
  owners: OwnerKindSpec[];
  close(): Promise<void>;
}

const NS = 'shop';
/** Namespace of the demo's operator-driven phase (staging only). */
const LCM_NS = 'openstack';

/** The LCM operator's phase on staging: its tasks are the Jobs, Pods and Workflows naming it as owner. */
const KEYSTONE = lcmPhase(LCM_NS, 'keystone-upgrade', 'demo-keystone-upgrade', 'upgrade');

/** `phases.owners` of the demo. */
export const DEMO_OWNERS: OwnerKindSpec[] = [
  {
    kind: { group: LCM_PHASE.group, kind: LCM_PHASE.kind },
    ownedKinds: [
      { group: 'batch', kind: 'Job' },
      { group: '', kind: 'Pod' },
      { group: 'argoproj.io', kind: 'Workflow' },
    ],
  },
];

/**
 * The demo's phase plan, declared by labels on staging's inventories: the shop's base, then api,
 * worker and checkout, in that order (`phaselog plan status demo-staging-rollout`). Its status walks
 * with the scenario: api's rollout holds it at step 2, worker-0's crash loop at step 3.
 */
export const DEMO_PLAN = 'demo-staging-rollout';

/** Staging's inventories carry the plan's labels; prod's do not. */
function planned(cluster: 'staging' | 'prod', object: KubeObject, order: number): KubeObject {
  return cluster === 'staging' ? inPlan(object, DEMO_PLAN, order) : object;
}

function seedCluster(em: Emulator, cluster: 'staging' | 'prod'): void {
  const shopRefs = [
    ref('Namespace', '', NS),
    ref('ConfigMap', NS, 'frontend'),
    ref('Service', NS, 'frontend'),
    ref('Deployment', NS, 'frontend'),
  ];
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
    planned(cluster, cliUtilsInventory(NS, `${cluster}-shop-base`, shopRefs), 1),
    planned(cluster, resourceGroup(NS, 'api', [ref('Service', NS, 'api'), ref('Deployment', NS, 'api')]), 2),
    planned(
      cluster,
      fluxKustomization(
        'worker',
        [ref('ConfigMap', NS, 'worker-config'), ref('Pod', NS, 'worker-0')],
        'main@sha1:1111111',
      ),
      3,
    ),
    planned(
      cluster,
      argoApplication('checkout', NS, [ref('Deployment', NS, 'checkout'), ref('Service', NS, 'checkout')]),
      4,
    ),
  ]);
  // What the controllers leave behind: each Deployment's ReplicaSet and Pods (`status --tree`).
  // The images match readyDeployment's, so a rollout scales these ReplicaSets down.
  applyRolledOut(
    em,
    { deployment: 'frontend', namespace: NS, image: 'nginx:1.27', container: 'main' },
    cluster === 'prod' ? 3 : 2,
  );
  applyRolledOut(em, { deployment: 'api', namespace: NS, image: 'example/api:1.0.0', container: 'main' }, 2);
  applyRolledOut(em, { deployment: 'checkout', namespace: NS, image: 'example/checkout:2.3.0', container: 'main' }, 2);
  if (cluster === 'staging') {
    // An operator-driven phase (owner phase): an LCM Phase and the task it ran before the demo began.
    const dbSync = ownedJob(KEYSTONE, 'keystone-db-sync', 'demo-keystone-db-sync', 'complete');
    em.apply([...ownerPhaseCrds(), namespaceObject(LCM_NS)]);
    em.apply([KEYSTONE, dbSync, jobPod(dbSync, 'keystone-db-sync-4m2xq', 'demo-keystone-db-sync-pod', 'complete')]);
  }
}

/**
 * One run of the LCM operator on staging: the old tasks go, a migration Job runs and completes while
 * a smoke-test Workflow runs; a verify Job fails and is replaced by a retry that completes. The
 * phase goes InProgress, Failed, InProgress, then Current.
 */
function lcmRun(cycle: number): ScenarioStep[] {
  const migrate = (state: 'running' | 'complete') => {
    const job = ownedJob(KEYSTONE, `keystone-migrate-${cycle}`, `demo-migrate-${cycle}`, state);
    return [job, jobPod(job, `keystone-migrate-${cycle}-x7k2p`, `demo-migrate-${cycle}-pod`, state)];
  };
  const verify = (name: string, state: 'running' | 'complete' | 'failed') => {
    const job = ownedJob(KEYSTONE, name, `demo-${name}`, state);
    return [job, jobPod(job, `${name}-q9w4z`, `demo-${name}-pod`, state)];
  };
  const smoke = (phase: string, message: string) =>
    ownedWorkflow(KEYSTONE, `keystone-smoke-${cycle}`, `demo-smoke-${cycle}`, phase, message);
  const jobRef = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', namespace: LCM_NS, name });
  return [
    {
      at: 2_000,
      label: 'LCM phase starts a run: old tasks removed',
      do: (em) => {
        for (const kind of [
          { apiVersion: 'batch/v1', kind: 'Job' },
          { apiVersion: 'argoproj.io/v1alpha1', kind: 'Workflow' },
        ]) {
          for (const object of em.list({ ...kind, namespace: LCM_NS }))
            em.remove({ ...kind, namespace: LCM_NS, name: String((object.metadata as { name: string }).name) });
        }
      },
    },
    {
      at: 2_500,
      label: 'LCM migrate Job and smoke Workflow run',
      apply: [...migrate('running'), smoke('Running', 'step 1/2: keystone-api')],
    },
    { at: 10_000, label: 'LCM migrate Job completes', apply: migrate('complete') },
    { at: 18_000, label: 'LCM verify Job fails', apply: verify(`keystone-verify-${cycle}`, 'failed') },
    { at: 28_000, label: 'LCM verify Job replaced by a retry', remove: jobRef(`keystone-verify-${cycle}`) },
    { at: 28_500, label: 'LCM verify retry runs', apply: verify(`keystone-verify-${cycle}-retry`, 'running') },
    { at: 36_000, label: 'LCM verify retry completes', apply: verify(`keystone-verify-${cycle}-retry`, 'complete') },
    { at: 40_000, label: 'LCM smoke Workflow succeeds', apply: smoke('Succeeded', 'all smoke tests passed') },
  ];
}

/** One cycle of changes on staging: rollout, crash loop, manifest change. */
function stagingCycle(cycle: number): ScenarioStep[] {
  const version = `1.${cycle + 1}.0`;
  return [
    ...deploymentRollout({
      name: 'api',
      namespace: NS,
      replicas: 2,
      image: `example/api:${version}`,
      startAt: 3_000,
      stepMs: 4_000,
    }),
    ...podCrashLoop({ name: 'worker-0', namespace: NS, crashes: 2, startAt: 1_000, stepMs: 8_000 }),
    {
      at: 35_000,
      label: 'worker manifest gains a ConfigMap',
      apply: [
        configMap(NS, `worker-flags-${cycle}`, { FEATURE_X: 'on' }),
        planned(
          'staging',
          fluxKustomization(
            'worker',
            [
              ref('ConfigMap', NS, 'worker-config'),
              ref('Pod', NS, 'worker-0'),
              ref('ConfigMap', NS, `worker-flags-${cycle}`),
            ],
            `main@sha1:${String(cycle + 2).repeat(7)}`,
          ),
          3,
        ),
      ],
    },
    ...lcmRun(cycle),
  ];
}

/** One cycle on prod: a rollout of checkout and a short outage. */
function prodCycle(cycle: number): ScenarioStep[] {
  return [
    ...deploymentRollout({
      name: 'checkout',
      namespace: NS,
      replicas: 2,
      image: `example/checkout:2.${4 + cycle}.0`,
      startAt: 5_000,
      stepMs: 5_000,
    }),
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
    const loaded = loadKubeconfigClusters({
      yaml: em.kubeconfig({ contextName: `demo-${name}` }),
      labels: { demo: 'true', env: name },
    });
    if (loaded.errors.length)
      throw new Error(`demo cluster demo-${name}: ${loaded.errors.map((e) => e.message).join('; ')}`);
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
  const loops = [
    loop(emulators['demo-staging'] as Emulator, stagingCycle, 'demo-staging'),
    loop(emulators['demo-prod'] as Emulator, prodCycle, 'demo-prod'),
  ];
  log.info(
    { clusters: clusters.map((c) => c.name), kubeconfigs: dir, faultControl: controlFile },
    'demo clusters started (no kubeconfig or clusters configured)',
  );

  return {
    clusters,
    emulators,
    kubeconfigPath: dir,
    checks: [health.check],
    owners: DEMO_OWNERS,
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
