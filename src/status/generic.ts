/**
 * kstatus' checks shared by every kind (cli-utils `generic.go` and `status.go` `Compute`): deletion,
 * observed generation, the standard `Reconciling`/`Stalled` conditions, and for kinds without a
 * built-in rule the `Ready` condition.
 */
import { messageOf, reasonOf, statusOf, typeOf } from './conditions.ts';
import type { ConditionList } from './conditions.ts';
import { FieldError, readStrictInt, readStrictString } from './read.ts';
import type { JsonRecord } from './read.ts';
import { current, inProgress, malformedStatus } from './result.ts';
import type { StatusResult } from './types.ts';

const DELETION_TIMESTAMP = ['metadata', 'deletionTimestamp'] as const;
const GENERATION = ['metadata', 'generation'] as const;
const OBSERVED_GENERATION = ['status', 'observedGeneration'] as const;

/** The object's `kind` as `u.GetKind()` reads it: `''` unless a string. */
export function kindOf(obj: JsonRecord): string {
  const kind = obj['kind'];
  return typeof kind === 'string' ? kind : '';
}

/**
 * kstatus: an object whose `metadata.deletionTimestamp` is a non-empty string is Terminating,
 * message `Resource scheduled for deletion`, before anything else is looked at. A deletionTimestamp
 * of another type is an error in kstatus (Unknown/MALFORMED_OBJECT here).
 */
export function checkDeletion(obj: JsonRecord): StatusResult | undefined {
  const ts = readStrictString(obj, DELETION_TIMESTAMP);
  if (ts === undefined || ts === '') return undefined;
  if (ts instanceof FieldError) {
    return malformedStatus(`looking up metadata.deletionTimestamp from resource: ${ts.message}`);
  }
  return { status: 'Terminating', message: 'Resource scheduled for deletion', conditions: [] };
}

/**
 * kstatus: when both `metadata.generation` and `status.observedGeneration` are present and differ,
 * the object is InProgress (`LatestGenerationNotObserved`). Skipped when either is absent; a
 * non-integer value of either is an error.
 */
export function checkGeneration(obj: JsonRecord): StatusResult | undefined {
  const generation = readStrictInt(obj, GENERATION);
  if (generation === undefined) return undefined;
  if (generation instanceof FieldError) {
    return malformedStatus(`looking up metadata.generation from resource: ${generation.message}`);
  }
  const observed = readStrictInt(obj, OBSERVED_GENERATION);
  if (observed === undefined) return undefined;
  if (observed instanceof FieldError) {
    return malformedStatus(`looking up status.observedGeneration from resource: ${observed.message}`);
  }
  if (observed === generation) return undefined;
  return inProgress(
    'LatestGenerationNotObserved',
    `${kindOf(obj)} generation is ${generation}, but latest observed generation is ${observed}`,
  );
}

/**
 * kstatus: the first condition (in list order) that is `Reconciling=True` makes the object
 * InProgress, or `Stalled=True` makes it Failed, with that condition's reason and message.
 */
export function checkStandardConditions(list: ConditionList): StatusResult | undefined {
  for (const c of list) {
    if (statusOf(c) !== 'True') continue;
    const type = typeOf(c);
    if (type === 'Reconciling') {
      const message = messageOf(c);
      return {
        status: 'InProgress',
        message,
        conditions: [{ type: 'Reconciling', status: 'True', reason: reasonOf(c), message }],
      };
    }
    if (type === 'Stalled') {
      const message = messageOf(c);
      return {
        status: 'Failed',
        message,
        conditions: [{ type: 'Stalled', status: 'True', reason: reasonOf(c), message }],
      };
    }
  }
  return undefined;
}

/**
 * kstatus, for kinds without a built-in rule: the first `Ready` condition whose status is `True`
 * makes the object Current (`Resource is Ready`); `False` or `Unknown` makes it InProgress with the
 * condition's reason and message. Other status values are skipped. No Ready condition: Current,
 * `Resource is current` (kstatus' documented limitation for custom resources).
 */
export function checkReadyOrDefault(list: ConditionList): StatusResult {
  for (const c of list) {
    if (typeOf(c) !== 'Ready') continue;
    const status = statusOf(c);
    if (status === 'True') return current('Resource is Ready');
    if (status === 'False' || status === 'Unknown') return inProgress(reasonOf(c), messageOf(c));
  }
  return current('Resource is current');
}
