import { messageOf, reasonOf, statusOf, typeOf } from '../conditions.ts';
import type { ConditionList } from '../conditions.ts';
import { readInt } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

/** The Deployment controller's "no progress deadline" value (math.MaxInt32). */
const NO_DEADLINE = 2147483647;

const PROGRESS_DEADLINE = ['spec', 'progressDeadlineSeconds'] as const;
const SPEC_REPLICAS = ['spec', 'replicas'] as const;
const STATUS_REPLICAS = ['status', 'replicas'] as const;
const UPDATED = ['status', 'updatedReplicas'] as const;
const READY = ['status', 'readyReplicas'] as const;
const AVAILABLE = ['status', 'availableReplicas'] as const;

/**
 * kstatus `deploymentConditions` (apps and extensions Deployment).
 *
 * A `Progressing` condition with reason `ProgressDeadlineExceeded` (any status) makes it Failed,
 * `Progress deadline exceeded`, with the Progressing condition's reason and message in `Stalled`.
 * Otherwise replicas decide, in this order (spec.replicas defaults to 1, status counts to 0):
 * fewer than spec (`LessReplicas`), fewer updated (`LessUpdated`), more than spec (`ExtraPods`),
 * fewer available than updated (`LessAvailable`), fewer ready (`LessReady`); then it needs
 * `Progressing=True/NewReplicaSetAvailable` (unless no progress deadline is set) and
 * `Available=True` to be Current, `Deployment is available. Replicas: <n>`.
 */
export function computeDeploymentStatus(obj: JsonRecord, conditions: ConditionList): StatusResult {
  let progressing = readInt(obj, PROGRESS_DEADLINE, NO_DEADLINE) === NO_DEADLINE;
  let available = false;
  for (const c of conditions) {
    const type = typeOf(c);
    if (type === 'Progressing') {
      const reason = reasonOf(c);
      if (reason === 'ProgressDeadlineExceeded') {
        return {
          status: 'Failed',
          message: 'Progress deadline exceeded',
          conditions: [{ type: 'Stalled', status: 'True', reason, message: messageOf(c) }],
        };
      }
      if (statusOf(c) === 'True' && reason === 'NewReplicaSetAvailable') progressing = true;
    } else if (type === 'Available' && statusOf(c) === 'True') {
      available = true;
    }
  }

  const spec = readInt(obj, SPEC_REPLICAS, 1);
  const replicas = readInt(obj, STATUS_REPLICAS, 0);
  const updated = readInt(obj, UPDATED, 0);
  const ready = readInt(obj, READY, 0);
  const availableReplicas = readInt(obj, AVAILABLE, 0);

  if (spec > replicas) return inProgress('LessReplicas', `Replicas: ${replicas}/${spec}`);
  if (spec > updated) return inProgress('LessUpdated', `Updated: ${updated}/${spec}`);
  if (replicas > spec) return inProgress('ExtraPods', `Pending termination: ${replicas - spec}`);
  if (updated > availableReplicas) return inProgress('LessAvailable', `Available: ${availableReplicas}/${updated}`);
  if (spec > ready) return inProgress('LessReady', `Ready: ${ready}/${spec}`);
  if (!progressing) return inProgress('ReplicaSetNotAvailable', 'ReplicaSet not Available');
  if (!available) return inProgress('DeploymentNotAvailable', 'Deployment not Available');
  return current(`Deployment is available. Replicas: ${replicas}`);
}
