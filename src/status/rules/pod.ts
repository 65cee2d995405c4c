import { findCondition, reasonOf } from '../conditions.ts';
import type { ConditionList } from '../conditions.ts';
import { describeGoValue, goTypeName, isRecord, MISSING, readPath, readString, readTimestampMillis } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, failed, inProgress, malformedStatus } from '../result.ts';
import type { StatusResult } from '../types.ts';
import type { RuleContext } from './rule.ts';

/** kstatus `ScheduleWindow`: how long a Pod may stay unschedulable before it counts as Failed. */
export const SCHEDULE_WINDOW_MS = 15_000;

const PHASE = ['status', 'phase'] as const;
const CONTAINER_STATUSES = ['status', 'containerStatuses'] as const;
const CREATION_TIMESTAMP = ['metadata', 'creationTimestamp'] as const;

/**
 * kstatus `podConditions` (core Pod), by `status.phase`:
 * - `Succeeded`: Current `Pod has completed successfully`; `Failed`: Current too (the Pod finished).
 * - `Running`: Current with a `Ready=True` condition; else Failed `ContainerCrashLooping` when a
 *   container waits in `CrashLoopBackOff` (names joined by ","); else InProgress `PodRunningNotReady`.
 * - `Pending`: with `PodScheduled=False` reason `Unschedulable`, InProgress `PodNotScheduled` for
 *   the first 15 s after `metadata.creationTimestamp` (measured against `context.nowMs`, never the
 *   wall clock) and Failed `PodUnschedulable` after that or when the timestamp is missing; any other
 *   Pending is InProgress `PodPending`.
 * - missing phase: InProgress `PodNotObserved`; any other phase is kstatus' error `unknown phase <p>`.
 */
export function computePodStatus(obj: JsonRecord, conditions: ConditionList, context: RuleContext): StatusResult {
  const phase = readString(obj, PHASE, '');
  switch (phase) {
    case 'Succeeded':
      return current('Pod has completed successfully');
    case 'Failed':
      return current('Pod has completed, but not successfully');
    case 'Running': {
      if (findCondition(conditions, 'Ready', 'True') !== undefined) return current('Pod is Ready');
      const crashing = findCrashLoopingContainers(obj);
      if (typeof crashing === 'string') return malformedStatus(crashing);
      if (crashing.length > 0) {
        return failed('ContainerCrashLooping', `Containers in CrashLoop state: ${crashing.join(',')}`);
      }
      return inProgress('PodRunningNotReady', 'Pod is running but is not Ready');
    }
    case 'Pending': {
      const scheduled = findCondition(conditions, 'PodScheduled', 'False');
      if (scheduled !== undefined && reasonOf(scheduled) === 'Unschedulable') {
        const created = readTimestampMillis(obj, CREATION_TIMESTAMP);
        if (created !== undefined && context.nowMs - SCHEDULE_WINDOW_MS < created) {
          return inProgress('PodNotScheduled', 'Pod has not been scheduled');
        }
        return failed('PodUnschedulable', 'Pod could not be scheduled');
      }
      return inProgress('PodPending', 'Pod is in the Pending phase');
    }
    case '':
      return inProgress('PodNotObserved', 'Pod phase not available');
    default:
      return malformedStatus(`unknown phase ${phase}`);
  }
}

function wrongType(path: string, value: unknown, expected: string): string {
  return `${path} accessor error: ${describeGoValue(value)} is of the type ${goTypeName(value)}, expected ${expected}`;
}

/**
 * Names of containers waiting in CrashLoopBackOff (init containers are not inspected), or an error
 * text. kstatus errors on a non-list `containerStatuses` and panics on wrong-typed entries; both are
 * reported here as errors naming the offending field.
 */
function findCrashLoopingContainers(obj: JsonRecord): string[] | string {
  const list = readPath(obj, CONTAINER_STATUSES);
  if (list === MISSING) return [];
  if (!Array.isArray(list)) return wrongType('.status.containerStatuses', list, '[]interface{}');
  const names: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const at = `.status.containerStatuses[${i}]`;
    const item: unknown = list[i];
    if (!isRecord(item)) return wrongType(at, item, 'map[string]interface{}');
    if (!('name' in item)) continue;
    const name = item['name'];
    if (typeof name !== 'string') return wrongType(`${at}.name`, name, 'string');
    if (!('state' in item)) continue;
    const state = item['state'];
    if (!isRecord(state)) return wrongType(`${at}.state`, state, 'map[string]interface{}');
    if (!('waiting' in state)) continue;
    const waiting = state['waiting'];
    if (!isRecord(waiting)) return wrongType(`${at}.state.waiting`, waiting, 'map[string]interface{}');
    if (!('reason' in waiting)) continue;
    const reason = waiting['reason'];
    if (typeof reason !== 'string') return wrongType(`${at}.state.waiting.reason`, reason, 'string');
    if (reason === 'CrashLoopBackOff') names.push(name);
  }
  return names;
}
