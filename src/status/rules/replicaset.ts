import { statusOf, typeOf } from '../conditions.ts';
import type { ConditionList } from '../conditions.ts';
import { readInt } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

const SPEC_REPLICAS = ['spec', 'replicas'] as const;
const STATUS_REPLICAS = ['status', 'replicas'] as const;
const READY = ['status', 'readyReplicas'] as const;
const AVAILABLE = ['status', 'availableReplicas'] as const;
const LABELLED = ['status', 'fullyLabeledReplicas'] as const;

/**
 * kstatus `replicasetConditions` (apps and extensions ReplicaSet).
 *
 * A `ReplicaFailure=True` condition is InProgress (not Failed) `ReplicaFailure`. Otherwise
 * (spec.replicas defaults to 1): fewer fully labelled (`LessLabelled`), fewer available
 * (`LessAvailable`), fewer ready (`LessReady`), more than spec (`ExtraPods`), else Current
 * `ReplicaSet is available. Replicas: <n>`. Pod failures are the reading layer's business
 * (see `applyPodRule`).
 */
export function computeReplicaSetStatus(obj: JsonRecord, conditions: ConditionList): StatusResult {
  for (const c of conditions) {
    if (typeOf(c) === 'ReplicaFailure' && statusOf(c) === 'True') {
      return inProgress('ReplicaFailure', 'Replica Failure condition. Check Pods');
    }
  }
  const spec = readInt(obj, SPEC_REPLICAS, 1);
  const replicas = readInt(obj, STATUS_REPLICAS, 0);
  const ready = readInt(obj, READY, 0);
  const available = readInt(obj, AVAILABLE, 0);
  const labelled = readInt(obj, LABELLED, 0);

  if (spec > labelled) return inProgress('LessLabelled', `Labelled: ${labelled}/${spec}`);
  if (spec > available) return inProgress('LessAvailable', `Available: ${available}/${spec}`);
  if (spec > ready) return inProgress('LessReady', `Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress('ExtraPods', `Pending termination: ${replicas - spec}`);
  return current(`ReplicaSet is available. Replicas: ${replicas}`);
}
