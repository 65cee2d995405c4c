/**
 * What kstatus' cluster-reading layer adds for pod controllers (cli-utils
 * `polling/statusreaders/pod_controller.go`, `deployment.go`, `common.go`).
 */
import { matchesSelector } from '../inventory/selector.ts';
import { checkDeletion } from './generic.ts';
import { computeAfterDeletion, toMillis } from './kstatus.ts';
import { isPodAwareKind } from './pod-aware.ts';
import { isRecord } from './read.ts';
import type { JsonRecord } from './read.ts';
import { failed, malformedStatus } from './result.ts';
import { readGroupKind } from './rules/index.ts';
import { parseObjectSelector } from './selector.ts';
import type { StatusResult } from './types.ts';

/** Kinds kstatus' poller reads through a pod-aware reader (apps group only, not extensions). */
const POD_CONTROLLERS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'ReplicaSet']);

function namespaceOf(obj: JsonRecord): string {
  const metadata = obj['metadata'];
  const ns = isRecord(metadata) ? metadata['namespace'] : undefined;
  return typeof ns === 'string' ? ns : '';
}

/**
 * The pods an object's `spec.selector` selects, in the object's namespace, in input order.
 * Returns `{ ok: false, error }` when the object has no usable selector (kstatus: `no selector found`).
 */
export function selectPods(
  object: unknown,
  pods: readonly unknown[],
): { ok: true; pods: JsonRecord[] } | { ok: false; error: string } {
  if (!isRecord(object)) return { ok: false, error: 'object is not a JSON object' };
  const parsed = parseObjectSelector(object);
  if (!parsed.ok) return parsed;
  const namespace = namespaceOf(object);
  const selected: JsonRecord[] = [];
  for (const pod of Array.isArray(pods) ? pods : []) {
    if (!isRecord(pod) || namespaceOf(pod) !== namespace) continue;
    const metadata = pod['metadata'];
    const labels = isRecord(metadata) ? metadata['labels'] : undefined;
    if (matchesSelector(isRecord(labels) ? labels : undefined, parsed.selector)) selected.push(pod);
  }
  return { ok: true, pods: selected };
}

/** A pod's plain kstatus status, as the poller's generic reader computes it. */
function computePlainStatus(pod: JsonRecord, nowMs: number): StatusResult {
  return checkDeletion(pod) ?? computeAfterDeletion(pod, nowMs);
}

/**
 * kstatus' pod-controller reading layer, applied to an already computed `result`:
 * - apps Deployment, StatefulSet and ReplicaSet need a usable `spec.selector`, or they are Unknown
 *   (MALFORMED_OBJECT, `no selector found`) as kstatus' readers make them;
 * - an InProgress StatefulSet or ReplicaSet with at least one selected pod whose own status is Failed
 *   (crash-looping, unschedulable past 15 s) becomes Failed, `<n> pods have failed`, with a
 *   `Stalled` condition whose reason is phaselog's `PodsFailed`;
 * - a Deployment's status never escalates (kstatus' Deployment reader only attaches its ReplicaSets);
 * - results decided by a custom health check, and every other kind, are returned unchanged.
 *
 * `pods` are the pods the caller listed (any namespace; only the object's namespace is used).
 */
export function applyPodRule(
  result: StatusResult,
  object: unknown,
  pods: readonly unknown[],
  now: Date | number,
): StatusResult {
  if (result.customHealth !== undefined || !isRecord(object)) return result;
  const { group, kind } = readGroupKind(object);
  if (group !== 'apps' || !POD_CONTROLLERS.has(kind)) return result;
  const selected = selectPods(object, pods);
  if (!selected.ok) return malformedStatus(selected.error);
  // Of those, only the pod-aware ones escalate from their pods (the Deployment reader does not).
  if (!isPodAwareKind(group, kind) || result.status !== 'InProgress') return result;
  const nowMs = toMillis(now);
  let failedPods = 0;
  for (const pod of selected.pods) {
    if (computePlainStatus(pod, nowMs).status === 'Failed') failedPods++;
  }
  return failedPods > 0 ? failed('PodsFailed', `${failedPods} pods have failed`) : result;
}
