/**
 * Stand-ins for kube-controller-manager's workload controllers, for emulators that users drive with
 * kubectl: after an API write to a Deployment, StatefulSet or DaemonSet, its status reports the
 * rollout finished at once (observedGeneration caught up, every replica updated, ready and
 * available; a Deployment also gets `Available` and `Progressing=NewReplicaSetAvailable` True), so
 * `kubectl rollout status` and kstatus see Current. Tests and scenarios that script rollouts step
 * by step leave it off.
 */
import type { KubeObject } from './types.ts';

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
  if (current['observedGeneration'] === generation && current['updatedReplicas'] === replicas && current['availableReplicas'] === replicas) return undefined;
  const name = String(meta['name'] ?? '');
  const conditions = [
    { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.', lastUpdateTime: now, lastTransitionTime: now },
    { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${name}" has successfully progressed.`, lastUpdateTime: now, lastTransitionTime: now },
  ];
  const status: Record<string, unknown> = { observedGeneration: generation, conditions };
  if (replicas > 0) Object.assign(status, { replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas });
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
  if (current['observedGeneration'] === generation && current['readyReplicas'] === replicas && current['updateRevision'] === revision) return undefined;
  return { observedGeneration: generation, replicas, readyReplicas: replicas, currentReplicas: replicas, updatedReplicas: replicas, availableReplicas: replicas, currentRevision: revision, updateRevision: revision };
}

/** DaemonSet: scheduled on the emulator's one pretend node, updated and available there. */
export function completeDaemonSetStatus(ds: KubeObject): Record<string, unknown> | undefined {
  const meta = asRecord(ds.metadata);
  if (meta['deletionTimestamp'] !== undefined) return undefined;
  const generation = typeof meta['generation'] === 'number' ? meta['generation'] : 1;
  const current = asRecord(ds['status']);
  if (current['observedGeneration'] === generation && current['numberAvailable'] === 1) return undefined;
  return { observedGeneration: generation, currentNumberScheduled: 1, desiredNumberScheduled: 1, numberMisscheduled: 0, numberReady: 1, updatedNumberScheduled: 1, numberAvailable: 1 };
}

/** The finished-rollout status for a workload kind, or undefined (other kinds, or nothing to do). */
export function completeRolloutStatus(kind: string, obj: KubeObject, now: string): Record<string, unknown> | undefined {
  if (kind === 'Deployment') return completeDeploymentStatus(obj, now);
  if (kind === 'StatefulSet') return completeStatefulSetStatus(obj);
  if (kind === 'DaemonSet') return completeDaemonSetStatus(obj);
  return undefined;
}
