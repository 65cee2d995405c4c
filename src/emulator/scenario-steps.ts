/**
 * Ready-made scenario steps: a Deployment rollout that ends Current, a Pod that crash-loops and
 * recovers, and a cluster that goes away and comes back. Status fields follow what the
 * Deployment controller and kubelet write, so kstatus reads them as it would on a real cluster.
 */
import type { ScenarioStep } from './scenario.ts';
import type { Emulator, EmulatorObjectRef, KubeObject } from './types.ts';

/** Options of {@link deploymentRollout}. */
export interface DeploymentRolloutOptions {
  name: string;
  /** @default 'default' */
  namespace?: string;
  /** @default 3 */
  replicas?: number;
  /** Image of the single container; a new image on an existing Deployment bumps its generation. @default 'nginx:1.27' */
  image?: string;
  /** When the rollout starts. @default 0 */
  startAt?: number;
  /** Time between status updates (one more replica ready each). @default 200 */
  stepMs?: number;
}

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string): Record<string, string> {
  const t = now();
  return { type, status, reason, message, lastUpdateTime: t, lastTransitionTime: t };
}

function generationOf(em: Emulator, ref: EmulatorObjectRef): number {
  const g = em.get(ref)?.metadata?.['generation'];
  return typeof g === 'number' ? g : 1;
}

/**
 * A Deployment rolled out one replica at a time: created (or updated) with Progressing=True
 * ReplicaSetUpdated and Available=False, then updated/ready/available replicas step up, and the
 * last step sets Available=True MinimumReplicasAvailable and Progressing=True
 * NewReplicaSetAvailable (kstatus: Current).
 */
export function deploymentRollout(opts: DeploymentRolloutOptions): ScenarioStep[] {
  const namespace = opts.namespace ?? 'default';
  const replicas = opts.replicas ?? 3;
  const image = opts.image ?? 'nginx:1.27';
  const start = opts.startAt ?? 0;
  const stepMs = opts.stepMs ?? 200;
  const ref: EmulatorObjectRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: opts.name };
  const rsName = `${opts.name}-${Buffer.from(image).toString('hex').slice(-10)}`;
  const manifest: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: opts.name, namespace, labels: { app: opts.name } },
    spec: {
      replicas,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: opts.name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: { metadata: { labels: { app: opts.name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
  const steps: ScenarioStep[] = [
    {
      at: start,
      label: `rollout ${namespace}/${opts.name} starts`,
      do: (em) => {
        const current = em.get(ref);
        em.apply({ ...manifest, ...(current?.['status'] !== undefined ? { status: current['status'] } : {}) });
        em.patchStatus(ref, {
          observedGeneration: generationOf(em, ref),
          replicas: 0,
          updatedReplicas: 0,
          readyReplicas: 0,
          availableReplicas: 0,
          unavailableReplicas: replicas,
          conditions: [
            condition('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
            condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`),
          ],
        });
      },
    },
  ];
  for (let ready = 1; ready <= replicas; ready++) {
    const done = ready === replicas;
    steps.push({
      at: start + ready * stepMs,
      label: `${ready}/${replicas} replicas ready`,
      do: (em) => {
        em.patchStatus(ref, {
          observedGeneration: generationOf(em, ref),
          replicas: ready,
          updatedReplicas: ready,
          readyReplicas: ready,
          availableReplicas: ready,
          unavailableReplicas: replicas - ready === 0 ? null : replicas - ready,
          conditions: done
            ? [
                condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
                condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`),
              ]
            : [
                condition('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
                condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`),
              ],
        });
      },
    });
  }
  return steps;
}

/** Options of {@link podCrashLoop}. */
export interface PodCrashLoopOptions {
  name: string;
  /** @default 'default' */
  namespace?: string;
  /** @default 'main' */
  container?: string;
  /** How many crashes (each bumps restartCount and waits in CrashLoopBackOff). @default 3 */
  crashes?: number;
  /** Whether the pod ends Running and Ready. @default true */
  recover?: boolean;
  /** @default 0 */
  startAt?: number;
  /** @default 200 */
  stepMs?: number;
}

function podStatus(container: string, image: string, state: 'running' | 'crashing', restartCount: number): Record<string, unknown> {
  const ready = state === 'running';
  const t = now();
  return {
    phase: 'Running',
    startTime: t,
    conditions: [
      { type: 'Initialized', status: 'True', lastTransitionTime: t },
      { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: t, ...(ready ? {} : { reason: 'ContainersNotReady', message: `containers with unready status: [${container}]` }) },
      { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: t },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: t },
    ],
    containerStatuses: [
      {
        name: container,
        image,
        imageID: '',
        ready,
        started: ready,
        restartCount,
        state: ready
          ? { running: { startedAt: t } }
          : { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${10 * 2 ** Math.min(restartCount, 5)}s restarting failed container=${container}` } },
        ...(restartCount > 0 ? { lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: t } } } : {}),
      },
    ],
  };
}

/** A Pod that starts Running, crashes `crashes` times (CrashLoopBackOff, restartCount rising) and, unless `recover: false`, runs again. */
export function podCrashLoop(opts: PodCrashLoopOptions): ScenarioStep[] {
  const namespace = opts.namespace ?? 'default';
  const container = opts.container ?? 'main';
  const crashes = opts.crashes ?? 3;
  const start = opts.startAt ?? 0;
  const stepMs = opts.stepMs ?? 200;
  const image = 'busybox:1.36';
  const ref: EmulatorObjectRef = { apiVersion: 'v1', kind: 'Pod', namespace, name: opts.name };
  const steps: ScenarioStep[] = [
    {
      at: start,
      label: `pod ${namespace}/${opts.name} running`,
      apply: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: opts.name, namespace, labels: { app: opts.name } },
        spec: { containers: [{ name: container, image }], restartPolicy: 'Always' },
        status: podStatus(container, image, 'running', 0),
      },
    },
  ];
  for (let n = 1; n <= crashes; n++) {
    steps.push({ at: start + n * stepMs, label: `crash ${n}`, patchStatus: { ref, status: podStatus(container, image, 'crashing', n) } });
  }
  if (opts.recover ?? true) {
    steps.push({ at: start + (crashes + 1) * stepMs, label: 'recovered', patchStatus: { ref, status: podStatus(container, image, 'running', crashes) } });
  }
  return steps;
}

/** Options of {@link clusterOutage}. */
export interface ClusterOutageOptions {
  /** When the cluster goes away. @default 0 */
  at?: number;
  /** How long it stays away. */
  durationMs: number;
  /** `reset` (connection refused-like resets, the default) or `hang` (requests never answered). */
  effect?: 'reset' | 'hang';
}

/** Every request fails (connection reset, or hangs) from `at` for `durationMs`; open watches are cut. */
export function clusterOutage(opts: ClusterOutageOptions): ScenarioStep[] {
  const at = opts.at ?? 0;
  let remove: (() => void) | undefined;
  return [
    {
      at,
      label: 'cluster goes away',
      do: (em) => {
        remove = em.injectFault({ effect: opts.effect ?? 'reset' });
        em.closeWatches();
      },
    },
    {
      at: at + opts.durationMs,
      label: 'cluster comes back',
      do: () => {
        remove?.();
        remove = undefined;
      },
    },
  ];
}
