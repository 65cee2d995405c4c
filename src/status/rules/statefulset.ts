import { readInt, readString } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

const STRATEGY = ['spec', 'updateStrategy', 'type'] as const;
const SPEC_REPLICAS = ['spec', 'replicas'] as const;
const READY = ['status', 'readyReplicas'] as const;
const CURRENT = ['status', 'currentReplicas'] as const;
const UPDATED = ['status', 'updatedReplicas'] as const;
const STATUS_REPLICAS = ['status', 'replicas'] as const;
const PARTITION = ['spec', 'updateStrategy', 'rollingUpdate', 'partition'] as const;
const CURRENT_REVISION = ['status', 'currentRevision'] as const;
const UPDATE_REVISION = ['status', 'updateRevision'] as const;

/**
 * kstatus `stsConditions` (apps StatefulSet). The controller sets no conditions, so no rule here
 * returns Failed.
 *
 * `OnDelete` update strategy: Current. Otherwise (spec.replicas defaults to 1): fewer replicas
 * (`LessReplicas`), fewer ready (`LessReady`), more than spec (`ExtraPods`). With a rolling-update
 * partition set, fewer updated than `spec - partition` is `PartitionRollout`, else Current
 * `Partition rollout complete. updated: <n>` (API servers default the partition to 0, so real
 * objects take this branch). Without one: fewer current (`LessCurrent`), differing
 * current/update revisions (`RevisionMismatch`), else Current.
 */
export function computeStatefulSetStatus(obj: JsonRecord): StatusResult {
  if (readString(obj, STRATEGY, '') === 'OnDelete') {
    return current('StatefulSet is using the ondelete update strategy');
  }
  const spec = readInt(obj, SPEC_REPLICAS, 1);
  const ready = readInt(obj, READY, 0);
  const currentReplicas = readInt(obj, CURRENT, 0);
  const updated = readInt(obj, UPDATED, 0);
  const replicas = readInt(obj, STATUS_REPLICAS, 0);
  const partition = readInt(obj, PARTITION, -1);

  if (spec > replicas) return inProgress('LessReplicas', `Replicas: ${replicas}/${spec}`);
  if (spec > ready) return inProgress('LessReady', `Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress('ExtraPods', `Pending termination: ${replicas - spec}`);
  if (partition !== -1) {
    if (updated < spec - partition) {
      return inProgress('PartitionRollout', `updated: ${updated}/${spec - partition}`);
    }
    return current(`Partition rollout complete. updated: ${updated}`);
  }
  if (spec > currentReplicas) return inProgress('LessCurrent', `current: ${currentReplicas}/${spec}`);
  if (readString(obj, CURRENT_REVISION, '') !== readString(obj, UPDATE_REVISION, '')) {
    return inProgress('RevisionMismatch', 'Waiting for updated revision to match current');
  }
  return current(`All replicas scheduled as expected. Replicas: ${replicas}`);
}
