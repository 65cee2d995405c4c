/**
 * A stand-in for kube-controller-manager's Deployment controller, for emulators that users drive
 * with kubectl: after an API write to a Deployment, its status reports the rollout finished at once
 * (observedGeneration caught up, every replica updated, ready and available, `Available` and
 * `Progressing=NewReplicaSetAvailable` True), so `kubectl rollout status` and kstatus see Current.
 * Tests and scenarios that script rollouts step by step leave it off.
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
