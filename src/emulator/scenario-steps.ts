/**
 * Ready-made scenario steps: a Deployment rollout that ends Current, a Pod that crash-loops and
 * recovers, and a cluster that goes away and comes back. Status fields follow what the
 * Deployment controller and kubelet write, so kstatus reads them as it would on a real cluster.
 */
import type { ScenarioStep } from './scenario.ts';
import type { Emulator, EmulatorObjectRef, KubeObject } from './types.ts';
import {
  buildEvent,
  buildPod,
  buildPodStatus,
  buildReplicaSet,
  formatNow,
  podName,
  templateHash,
  type TemplateInfo,
} from './workload-objects.ts';

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
  /**
   * Also write what the controllers would: a ReplicaSet owned by the Deployment, one Pod per ready
   * replica owned by it, and the previous image's ReplicaSet scaled down with its Pods removed.
   * @default true
   */
  pods?: boolean;
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string): Record<string, string> {
  const t = formatNow();
  return { type, status, reason, message, lastUpdateTime: t, lastTransitionTime: t };
}

function generationOf(em: Emulator, ref: EmulatorObjectRef): number {
  const g = em.get(ref)?.metadata?.['generation'];
  return typeof g === 'number' ? g : 1;
}

// Applies a controller-owned object and marks its status as observing its (possibly bumped) generation.
function applyObserved(em: Emulator, obj: KubeObject): void {
  em.apply(obj);
  const ref = {
    apiVersion: String(obj.apiVersion),
    kind: String(obj.kind),
    namespace: String(obj.metadata?.['namespace'] ?? ''),
    name: String(obj.metadata?.['name'] ?? ''),
  };
  em.patchStatus(ref, { observedGeneration: generationOf(em, ref) });
}

function readImage(obj: KubeObject | undefined): string | undefined {
  const containers = (obj?.['spec'] as { template?: { spec?: { containers?: { image?: unknown }[] } } } | undefined)
    ?.template?.spec?.containers;
  const image = containers?.[0]?.image;
  return typeof image === 'string' ? image : undefined;
}

function rolloutStatus(
  em: Emulator,
  ref: EmulatorObjectRef,
  replicas: number,
  ready: number,
  rsName: string,
): Record<string, unknown> {
  const done = ready === replicas;
  return {
    observedGeneration: generationOf(em, ref),
    replicas: ready,
    updatedReplicas: ready,
    readyReplicas: ready,
    availableReplicas: ready,
    unavailableReplicas: replicas - ready === 0 ? null : replicas - ready,
    conditions: done
      ? [
          condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
          condition(
            'Progressing',
            'True',
            'NewReplicaSetAvailable',
            `ReplicaSet "${rsName}" has successfully progressed.`,
          ),
        ]
      : [
          condition(
            'Available',
            'False',
            'MinimumReplicasUnavailable',
            'Deployment does not have minimum availability.',
          ),
          condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`),
        ],
  };
}

/**
 * A Deployment rolled out one replica at a time: created (or updated) with Progressing=True
 * ReplicaSetUpdated and Available=False, then updated/ready/available replicas step up (with a
 * ReplicaSet and Pods unless `pods: false`), and the last step sets Available=True
 * MinimumReplicasAvailable and Progressing=True NewReplicaSetAvailable (kstatus: Current).
 */
export function deploymentRollout(opts: DeploymentRolloutOptions): ScenarioStep[] {
  const namespace = opts.namespace ?? 'default';
  const replicas = opts.replicas ?? 3;
  const start = opts.startAt ?? 0;
  const stepMs = opts.stepMs ?? 200;
  const withPods = opts.pods ?? true;
  const tmpl: TemplateInfo = { deployment: opts.name, namespace, image: opts.image ?? 'nginx:1.27', container: 'main' };
  const ref: EmulatorObjectRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: opts.name };
  const rsName = `${opts.name}-${templateHash(tmpl)}`;
  let previous: { tmpl: TemplateInfo; replicas: number } | undefined;
  const manifest: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: opts.name, namespace, labels: { app: opts.name } },
    spec: {
      replicas,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: opts.name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: opts.name } },
        spec: { containers: [{ name: tmpl.container, image: tmpl.image }] },
      },
    },
  };
  const scaleDownPrevious = (em: Emulator, ready: number): void => {
    if (!previous) return;
    const owner = em.get(ref) as KubeObject;
    const left = Math.max(0, previous.replicas - ready);
    for (let i = left + 1; i <= previous.replicas; i++)
      em.remove({ apiVersion: 'v1', kind: 'Pod', namespace, name: podName(previous.tmpl, i) });
    const oldName = `${opts.name}-${templateHash(previous.tmpl)}`;
    const oldRs = em.get({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace, name: oldName });
    const was = (oldRs?.['spec'] as { replicas?: number } | undefined)?.replicas;
    if (oldRs && was !== left) {
      applyObserved(em, buildReplicaSet(previous.tmpl, owner, left, left));
      em.apply(
        buildEvent(owner, 'ScalingReplicaSet', `Scaled down replica set ${oldName} to ${left} from ${String(was)}`),
      );
    }
  };
  const steps: ScenarioStep[] = [
    {
      at: start,
      label: `rollout ${namespace}/${opts.name} starts`,
      do: (em) => {
        const current = em.get(ref);
        const oldImage = readImage(current);
        const oldReplicas = (current?.['spec'] as { replicas?: unknown } | undefined)?.replicas;
        previous =
          oldImage !== undefined && oldImage !== tmpl.image
            ? { tmpl: { ...tmpl, image: oldImage }, replicas: typeof oldReplicas === 'number' ? oldReplicas : 1 }
            : undefined;
        em.apply(manifest);
        if (withPods) applyObserved(em, buildReplicaSet(tmpl, em.get(ref) as KubeObject, replicas, 0));
        em.apply(
          buildEvent(em.get(ref) as KubeObject, 'ScalingReplicaSet', `Scaled up replica set ${rsName} to ${replicas}`),
        );
        em.patchStatus(ref, rolloutStatus(em, ref, replicas, 0, rsName));
      },
    },
  ];
  for (let ready = 1; ready <= replicas; ready++) {
    steps.push({
      at: start + ready * stepMs,
      label: `${ready}/${replicas} replicas ready`,
      do: (em) => {
        if (withPods) {
          applyObserved(em, buildReplicaSet(tmpl, em.get(ref) as KubeObject, replicas, ready));
          em.apply(
            buildPod(
              tmpl,
              em.get({ apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace, name: rsName }) as KubeObject,
              ready,
            ),
          );
          scaleDownPrevious(em, ready === replicas ? Number.MAX_SAFE_INTEGER : ready);
        }
        em.patchStatus(ref, rolloutStatus(em, ref, replicas, ready, rsName));
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
        status: buildPodStatus(container, image, 'running', 0),
      },
    },
  ];
  for (let n = 1; n <= crashes; n++) {
    steps.push({
      at: start + n * stepMs,
      label: `crash ${n}`,
      do: (em) => {
        em.patchStatus(ref, buildPodStatus(container, image, 'crashing', n));
        const pod = em.get(ref) as KubeObject;
        em.apply(
          buildEvent(
            pod,
            'BackOff',
            `Back-off restarting failed container ${container} in pod ${opts.name}_${namespace}(${String(pod.metadata?.['uid'])})`,
            { type: 'Warning', count: n, component: 'kubelet' },
          ),
        );
      },
    });
  }
  if (opts.recover ?? true) {
    steps.push({
      at: start + (crashes + 1) * stepMs,
      label: 'recovered',
      patchStatus: { ref, status: buildPodStatus(container, image, 'running', crashes) },
    });
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
