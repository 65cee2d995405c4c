import { kindOf } from '../generic.ts';
import { FieldError, readInt, readStrictInt } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, inProgress, malformedStatus } from '../result.ts';
import type { StatusResult } from '../types.ts';

const GENERATION = ['metadata', 'generation'] as const;
const OBSERVED_GENERATION = ['status', 'observedGeneration'] as const;
const DESIRED = ['status', 'desiredNumberScheduled'] as const;
const CURRENT = ['status', 'currentNumberScheduled'] as const;
const UPDATED = ['status', 'updatedNumberScheduled'] as const;
const AVAILABLE = ['status', 'numberAvailable'] as const;
const READY = ['status', 'numberReady'] as const;

/**
 * kstatus `daemonsetConditions` (apps and extensions DaemonSet).
 *
 * Unlike the generic check, it requires both generations: no `metadata.generation` is
 * InProgress `NoGeneration`, no `status.observedGeneration` is InProgress `NoObservedGeneration`.
 * Then `status.desiredNumberScheduled` must be present (`NoDesiredNumber`), and current, updated,
 * available and ready counts must each reach it (`LessCurrent`, `LessUpdated`, `LessAvailable`,
 * `LessReady`) before it is Current `All replicas scheduled as expected. Replicas: <desired>`.
 */
export function computeDaemonSetStatus(obj: JsonRecord): StatusResult {
  const kind = kindOf(obj);
  const generation = readStrictInt(obj, GENERATION);
  if (generation instanceof FieldError) {
    return malformedStatus(`looking up metadata.generation from resource: ${generation.message}`);
  }
  if (generation === undefined) return inProgress('NoGeneration', `${kind} metadata.generation not found`);
  const observed = readStrictInt(obj, OBSERVED_GENERATION);
  if (observed instanceof FieldError) {
    return malformedStatus(`looking up status.observedGeneration from resource: ${observed.message}`);
  }
  if (observed === undefined) {
    return inProgress('NoObservedGeneration', `${kind} status.observedGeneration not found`);
  }

  const desired = readInt(obj, DESIRED, -1);
  const currentNumber = readInt(obj, CURRENT, 0);
  const updated = readInt(obj, UPDATED, 0);
  const available = readInt(obj, AVAILABLE, 0);
  const ready = readInt(obj, READY, 0);

  if (desired === -1) return inProgress('NoDesiredNumber', 'Missing .status.desiredNumberScheduled');
  if (desired > currentNumber) return inProgress('LessCurrent', `Current: ${currentNumber}/${desired}`);
  if (desired > updated) return inProgress('LessUpdated', `Updated: ${updated}/${desired}`);
  if (desired > available) return inProgress('LessAvailable', `Available: ${available}/${desired}`);
  if (desired > ready) return inProgress('LessReady', `Ready: ${ready}/${desired}`);
  return current(`All replicas scheduled as expected. Replicas: ${desired}`);
}
