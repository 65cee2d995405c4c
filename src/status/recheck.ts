/**
 * When a status changes by the passing of time alone. kstatus' watcher re-computes a status that is
 * InProgress because a pod is unschedulable once the 15 s window has passed (cli-utils
 * `watcher/unschedulable.go`); this gives a reading layer the moment to do the same.
 */
import { checkDeletion } from './generic.ts';
import { computeAfterDeletion, toMillis } from './kstatus.ts';
import { isPodAwareKind, isPodKind } from './pod-aware.ts';
import { selectPods } from './pods.ts';
import { isRecord, readTimestampMillis } from './read.ts';
import type { JsonRecord } from './read.ts';
import { readGroupKind } from './rules/index.ts';
import { SCHEDULE_WINDOW_MS } from './rules/pod.ts';

const CREATION_TIMESTAMP = ['metadata', 'creationTimestamp'] as const;

/** For a Pod inside its unschedulable grace period, the epoch ms at which it turns Failed. */
function findPodDeadline(pod: JsonRecord, nowMs: number): number | undefined {
  const result = checkDeletion(pod) ?? computeAfterDeletion(pod, nowMs);
  if (result.conditions[0]?.reason !== 'PodNotScheduled') return undefined;
  const created = readTimestampMillis(pod, CREATION_TIMESTAMP);
  return created === undefined ? undefined : created + SCHEDULE_WINDOW_MS;
}

/**
 * The earliest time (epoch ms) after `now` at which `computeStatus` could give a different answer
 * without the object changing: a Pod's own grace period, or (with `pods`) that of any selected pod
 * of an apps StatefulSet or ReplicaSet. `undefined` when time alone changes nothing.
 */
export function findRecheckTime(
  object: unknown,
  options: { now: Date | number; pods?: readonly unknown[] },
): number | undefined {
  try {
    if (!isRecord(object)) return undefined;
    const nowMs = toMillis(options.now);
    const { group, kind } = readGroupKind(object);
    if (isPodKind(group, kind)) return findPodDeadline(object, nowMs);
    // kstatus' pod-controller readers know only the apps group.
    if (options.pods === undefined || group !== 'apps' || !isPodAwareKind(group, kind)) return undefined;
    const selected = selectPods(object, options.pods);
    if (!selected.ok) return undefined;
    let earliest: number | undefined;
    for (const pod of selected.pods) {
      const deadline = findPodDeadline(pod, nowMs);
      if (deadline !== undefined && (earliest === undefined || deadline < earliest)) earliest = deadline;
    }
    return earliest;
  } catch {
    // Exotic input (throwing getters): nothing sensible to schedule.
    return undefined;
  }
}
