/**
 * Objects the workload controllers and the kubelet would write, for scenario builders: ReplicaSets
 * owned by Deployments, Pods owned by ReplicaSets, and Pod statuses (running or crash-looping).
 * Names follow the controllers' shapes (`<deployment>-<pod-template-hash>-<5 chars>`).
 */
import type { KubeObject } from './types.ts';

// The alphabet Kubernetes uses for generated name suffixes (no vowels, no confusable digits).
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A deterministic name-safe hash of some text, `length` characters from Kubernetes' alphabet. */
export function hashName(text: string, length: number): string {
  let h = 0x811c9dc5;
  let out = '';
  for (let round = 0; out.length < length; round++) {
    for (const ch of `${text}#${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    out += ALPHABET[h % ALPHABET.length];
  }
  return out;
}

/** RFC 3339 timestamp with second precision, as the apiserver writes them. */
export function formatNow(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** An ownerReference to `owner` (which must carry apiVersion, kind, metadata.name and uid). */
export function ownerReference(owner: KubeObject): Record<string, unknown> {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata?.['name'],
    uid: owner.metadata?.['uid'],
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** A Pod status: `running` (Ready) or `crashing` (waiting in CrashLoopBackOff after `restartCount` crashes). */
export function buildPodStatus(
  container: string,
  image: string,
  state: 'running' | 'crashing',
  restartCount: number,
): Record<string, unknown> {
  const ready = state === 'running';
  const t = formatNow();
  return {
    phase: 'Running',
    startTime: t,
    conditions: [
      { type: 'Initialized', status: 'True', lastTransitionTime: t },
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        lastTransitionTime: t,
        ...(ready ? {} : { reason: 'ContainersNotReady', message: `containers with unready status: [${container}]` }),
      },
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
          : {
              waiting: {
                reason: 'CrashLoopBackOff',
                message: `back-off ${10 * 2 ** Math.min(restartCount, 5)}s restarting failed container=${container}`,
              },
            },
        ...(restartCount > 0 ? { lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: t } } } : {}),
      },
    ],
  };
}

/** What a ReplicaSet or Pod of a Deployment needs to know. */
export interface TemplateInfo {
  deployment: string;
  namespace: string;
  image: string;
  container: string;
}

/** The pod-template-hash of a Deployment's template (stands in for the controller's hash). */
export function templateHash(t: TemplateInfo): string {
  return hashName(`${t.deployment}/${t.container}/${t.image}`, 10);
}

/** A ReplicaSet of a Deployment's template, with `replicas` desired and `ready` of them ready. */
export function buildReplicaSet(t: TemplateInfo, owner: KubeObject, replicas: number, ready: number): KubeObject {
  const hash = templateHash(t);
  const labels = { app: t.deployment, 'pod-template-hash': hash };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${t.deployment}-${hash}`,
      namespace: t.namespace,
      labels,
      ownerReferences: [ownerReference(owner)],
      annotations: { 'deployment.kubernetes.io/desired-replicas': String(replicas) },
    },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: t.container, image: t.image }] } },
    },
    status: { replicas: ready, fullyLabeledReplicas: ready, readyReplicas: ready, availableReplicas: ready },
  };
}

/** Name of the `index`th Pod of a Deployment's template. */
export function podName(t: TemplateInfo, index: number): string {
  return `${t.deployment}-${templateHash(t)}-${hashName(`${templateHash(t)}/${index}`, 5)}`;
}

/** A running, Ready Pod owned by a ReplicaSet. */
export function buildPod(t: TemplateInfo, owner: KubeObject, index: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(t, index),
      namespace: t.namespace,
      labels: { app: t.deployment, 'pod-template-hash': templateHash(t) },
      ownerReferences: [ownerReference(owner)],
    },
    spec: { containers: [{ name: t.container, image: t.image }], restartPolicy: 'Always', nodeName: 'emulated-node' },
    status: buildPodStatus(t.container, t.image, 'running', 0),
  };
}

/**
 * What the Deployment and ReplicaSet controllers leave behind a finished rollout: a ReplicaSet of
 * the Deployment's template with every replica ready, and its running Pods. `deployment` must be
 * stored (it needs a uid); in-process writes, so the objects keep their statuses.
 */
export function applyRolledOut(
  em: {
    apply(obj: object | object[]): void;
    get(ref: { apiVersion: string; kind: string; namespace: string; name: string }): KubeObject | undefined;
  },
  t: TemplateInfo,
  replicas: number,
): void {
  const owner = em.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: t.namespace, name: t.deployment });
  if (!owner) throw new Error(`Deployment ${t.namespace}/${t.deployment} is not stored`);
  const rs = buildReplicaSet(t, owner, replicas, replicas);
  em.apply({ ...rs, status: { ...(rs['status'] as object), observedGeneration: 1 } });
  const storedRs = em.get({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    namespace: t.namespace,
    name: String(rs.metadata?.['name']),
  }) as KubeObject;
  for (let i = 1; i <= replicas; i++) em.apply(buildPod(t, storedRs, i));
}

/** A core/v1 Event about `involved`, as controllers and the kubelet record them; `count` repeats of the same event share its name. */
export function buildEvent(
  involved: KubeObject,
  reason: string,
  message: string,
  opts: { type?: 'Normal' | 'Warning'; count?: number; component?: string } = {},
): KubeObject {
  const meta = involved.metadata ?? {};
  const t = formatNow();
  const name = String(meta['name'] ?? '');
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${name}.${hashName(`${name}/${reason}/${message}`, 10)}`,
      namespace: meta['namespace'] ?? 'default',
    },
    involvedObject: {
      apiVersion: involved.apiVersion,
      kind: involved.kind,
      namespace: meta['namespace'],
      name,
      uid: meta['uid'],
    },
    reason,
    message,
    type: opts.type ?? 'Normal',
    count: opts.count ?? 1,
    firstTimestamp: t,
    lastTimestamp: t,
    source: { component: opts.component ?? 'deployment-controller' },
    reportingComponent: opts.component ?? 'deployment-controller',
    reportingInstance: '',
  };
}
