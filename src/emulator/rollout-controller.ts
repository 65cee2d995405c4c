/**
 * Stand-ins for kube-controller-manager's workload controllers, for emulators that users drive with
 * kubectl: after an API write to a Deployment, StatefulSet or DaemonSet, its status reports the
 * rollout finished at once (observedGeneration caught up, every replica updated, ready and
 * available; a Deployment also gets `Available` and `Progressing=NewReplicaSetAvailable` True), so
 * `kubectl rollout status` and kstatus see Current. Behind them it keeps what the controllers
 * would ({@link rolloutChildren}): a Deployment's ReplicaSet and Pods (older ReplicaSets scaled to
 * 0), a StatefulSet's or DaemonSet's Pods, all running and Ready. Tests and scenarios that script
 * rollouts step by step leave it off.
 */
import type { KubeObject } from './types.ts';
import { buildPodStatus, hashName, ownerReference } from './workload-objects.ts';

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The status of a Deployment whose rollout has completed, or undefined when there is nothing to do
 * (being deleted, or the status already says so).
 */
export function completeDeploymentStatus(deployment: KubeObject, now: string): Record<string, unknown> | undefined {
  const meta = asRecord(deployment.metadata);
  if (meta['deletionTimestamp'] !== undefined) return undefined;
  const spec = asRecord(deployment['spec']);
  // spec.replicas defaults to 1 in the apiserver.
  const replicas = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const generation = typeof meta['generation'] === 'number' ? meta['generation'] : 1;
  const current = asRecord(deployment['status']);
  if (
    current['observedGeneration'] === generation &&
    current['updatedReplicas'] === replicas &&
    current['availableReplicas'] === replicas
  )
    return undefined;
  const name = String(meta['name'] ?? '');
  const conditions = [
    {
      type: 'Available',
      status: 'True',
      reason: 'MinimumReplicasAvailable',
      message: 'Deployment has minimum availability.',
      lastUpdateTime: now,
      lastTransitionTime: now,
    },
    {
      type: 'Progressing',
      status: 'True',
      reason: 'NewReplicaSetAvailable',
      message: `ReplicaSet "${name}" has successfully progressed.`,
      lastUpdateTime: now,
      lastTransitionTime: now,
    },
  ];
  const status: Record<string, unknown> = { observedGeneration: generation, conditions };
  if (replicas > 0)
    Object.assign(status, {
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
    });
  return status;
}

function revisionOf(meta: Record<string, unknown>): string {
  return `${String(meta['name'] ?? '')}-${String(meta['generation'] ?? 1)}`;
}

/** StatefulSet: every replica ready and on the update revision, which is also the current one. */
export function completeStatefulSetStatus(sts: KubeObject): Record<string, unknown> | undefined {
  const meta = asRecord(sts.metadata);
  if (meta['deletionTimestamp'] !== undefined) return undefined;
  const spec = asRecord(sts['spec']);
  const replicas = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const generation = typeof meta['generation'] === 'number' ? meta['generation'] : 1;
  const revision = revisionOf(meta);
  const current = asRecord(sts['status']);
  if (
    current['observedGeneration'] === generation &&
    current['readyReplicas'] === replicas &&
    current['updateRevision'] === revision
  )
    return undefined;
  return {
    observedGeneration: generation,
    replicas,
    readyReplicas: replicas,
    currentReplicas: replicas,
    updatedReplicas: replicas,
    availableReplicas: replicas,
    currentRevision: revision,
    updateRevision: revision,
  };
}

/** DaemonSet: scheduled on the emulator's one pretend node, updated and available there. */
export function completeDaemonSetStatus(ds: KubeObject): Record<string, unknown> | undefined {
  const meta = asRecord(ds.metadata);
  if (meta['deletionTimestamp'] !== undefined) return undefined;
  const generation = typeof meta['generation'] === 'number' ? meta['generation'] : 1;
  const current = asRecord(ds['status']);
  if (current['observedGeneration'] === generation && current['numberAvailable'] === 1) return undefined;
  return {
    observedGeneration: generation,
    currentNumberScheduled: 1,
    desiredNumberScheduled: 1,
    numberMisscheduled: 0,
    numberReady: 1,
    updatedNumberScheduled: 1,
    numberAvailable: 1,
  };
}

/** The finished-rollout status for a workload kind, or undefined (other kinds, or nothing to do). */
export function completeRolloutStatus(kind: string, obj: KubeObject, now: string): Record<string, unknown> | undefined {
  if (kind === 'Deployment') return completeDeploymentStatus(obj, now);
  if (kind === 'StatefulSet') return completeStatefulSetStatus(obj);
  if (kind === 'DaemonSet') return completeDaemonSetStatus(obj);
  return undefined;
}

/**
 * The objects the workload controllers keep behind a finished rollout, built from the owner's
 * template: for a Deployment, a ReplicaSet named `<deployment>-<pod-template-hash>` with every
 * replica ready, and its running Pods; for a StatefulSet, Pods `<name>-0..n-1`; for a DaemonSet,
 * one Pod on the emulator's one pretend node. Older ReplicaSets of a Deployment are scaled to 0 by
 * the caller, and Pods no longer wanted are deleted.
 */
export interface RolloutChildren {
  /** Objects to create or update (in-process: their status is kept). */
  objects: KubeObject[];
  /** The Deployment's current ReplicaSet name (others it owns are scaled to 0), when a Deployment. */
  replicaSet?: string;
}

const POD_STATUS_CONTAINER = 'main';

function templateOf(owner: KubeObject): { labels: Record<string, string>; spec: Record<string, unknown> } {
  const template = asRecord(asRecord(owner['spec'])['template']);
  const labels = asRecord(asRecord(template['metadata'])['labels']) as Record<string, string>;
  return { labels, spec: asRecord(template['spec']) };
}

function firstContainer(spec: Record<string, unknown>): { name: string; image: string } {
  const containers = Array.isArray(spec['containers']) ? (spec['containers'] as unknown[]) : [];
  const c = asRecord(containers[0]);
  return {
    name: typeof c['name'] === 'string' ? c['name'] : POD_STATUS_CONTAINER,
    image: typeof c['image'] === 'string' ? c['image'] : '',
  };
}

function runningPod(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  spec: Record<string, unknown>,
  owner: KubeObject,
): KubeObject {
  const c = firstContainer(spec);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels, ownerReferences: [ownerReference(owner)] },
    spec: { ...spec, nodeName: 'emulated-node' },
    status: buildPodStatus(c.name, c.image, 'running', 0),
  };
}

/** What the controllers would keep for `owner` after its rollout completed; undefined for other kinds or while deleting. */
export function rolloutChildren(kind: string, owner: KubeObject): RolloutChildren | undefined {
  const meta = asRecord(owner.metadata);
  if (meta['deletionTimestamp'] !== undefined || typeof meta['uid'] !== 'string') return undefined;
  const name = String(meta['name'] ?? '');
  const namespace = String(meta['namespace'] ?? 'default');
  const spec = asRecord(owner['spec']);
  const replicas = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const template = templateOf(owner);
  if (kind === 'Deployment') {
    // Stands in for the controller's hash of the pod template: equal templates, equal names.
    const hash = hashName(JSON.stringify(template), 10);
    const labels = { ...template.labels, 'pod-template-hash': hash };
    const rsName = `${name}-${hash}`;
    const rs: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: rsName,
        namespace,
        labels,
        ownerReferences: [ownerReference(owner)],
        annotations: { 'deployment.kubernetes.io/desired-replicas': String(replicas) },
      },
      spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: template.spec } },
      status: {
        observedGeneration: 1,
        replicas,
        fullyLabeledReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
      },
    };
    return { objects: [rs], replicaSet: rsName };
  }
  if (kind === 'StatefulSet') {
    return {
      objects: Array.from({ length: replicas }, (_, i) =>
        runningPod(`${name}-${i}`, namespace, template.labels, template.spec, owner),
      ),
    };
  }
  if (kind === 'DaemonSet') {
    return {
      objects: [
        runningPod(`${name}-${hashName(`${name}/emulated-node`, 5)}`, namespace, template.labels, template.spec, owner),
      ],
    };
  }
  return undefined;
}

/** The running Pods of a ReplicaSet the Deployment controller created (`replicas` of them). */
export function replicaSetPods(rs: KubeObject): KubeObject[] {
  const meta = asRecord(rs.metadata);
  const spec = asRecord(rs['spec']);
  const replicas = typeof spec['replicas'] === 'number' ? spec['replicas'] : 0;
  const template = asRecord(spec['template']);
  const labels = asRecord(asRecord(template['metadata'])['labels']) as Record<string, string>;
  const name = String(meta['name'] ?? '');
  return Array.from({ length: replicas }, (_, i) =>
    runningPod(
      `${name}-${hashName(`${name}/${i}`, 5)}`,
      String(meta['namespace'] ?? 'default'),
      labels,
      asRecord(template['spec']),
      rs,
    ),
  );
}
