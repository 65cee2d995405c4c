/**
 * `computeStatus`: one resource's kstatus status, with phaselog's additions (custom health hook,
 * pod-aware rule, never throwing).
 */
import { checkDeletion } from './generic.ts';
import { computeAfterDeletion, describeNonObject, toMillis } from './kstatus.ts';
import { applyPodRule } from './pods.ts';
import { isRecord } from './read.ts';
import { malformedStatus, unknownStatus } from './result.ts';
import { isResourceStatus } from './types.ts';
import type { StatusResult } from './types.ts';

/**
 * A user-supplied health check (Flux CEL, Argo CD Lua). Returns the final result for objects it
 * covers, `undefined` for objects it does not cover.
 */
export type CustomHealthHook = (object: Record<string, unknown>) => StatusResult | undefined;

/** Options of {@link computeStatus}. */
export interface ComputeStatusOptions {
  /**
   * The evaluation time (Date or epoch milliseconds). Only the Pod unschedulable grace period
   * (15 s after creation) reads it; the wall clock is never consulted.
   */
  now: Date | number;
  /**
   * Pods the caller listed, to apply kstatus' pod-controller reading layer ({@link applyPodRule}).
   * Omit it for plain `Compute` (what kpt's ResourceGroup controller and Flux use).
   * @default undefined
   */
  pods?: readonly unknown[];
  /** A custom health check; see {@link computeStatus} for its precedence. @default undefined */
  customHealth?: CustomHealthHook;
}

/** The text of anything thrown, without ever throwing itself. */
function describeThrown(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'an unprintable error';
  }
}

function runCustomHealth(hook: CustomHealthHook, object: Record<string, unknown>): StatusResult | undefined {
  let outcome: unknown;
  try {
    outcome = hook(object);
  } catch (error) {
    return unknownStatus('HEALTH_CHECK_ERROR', `custom health check failed: ${describeThrown(error)}`);
  }
  if (outcome === undefined) return undefined;
  if (!isRecord(outcome) || !isResourceStatus(outcome['status'])) {
    return unknownStatus('HEALTH_CHECK_ERROR', 'custom health check returned no valid status');
  }
  const result = outcome as unknown as StatusResult;
  if (typeof result.message === 'string' && Array.isArray(result.conditions)) return result;
  return {
    ...result,
    message: typeof result.message === 'string' ? result.message : '',
    conditions: Array.isArray(result.conditions) ? result.conditions : [],
  };
}

function computeUnguarded(object: unknown, options: ComputeStatusOptions): StatusResult {
  if (!isRecord(object)) {
    return malformedStatus(`expected a Kubernetes object (a JSON object), got ${describeNonObject(object)}`);
  }
  const terminating = checkDeletion(object);
  if (terminating !== undefined) return terminating;
  if (typeof options.customHealth === 'function') {
    const custom = runCustomHealth(options.customHealth, object);
    if (custom !== undefined) return custom;
  }
  const result = computeAfterDeletion(object, toMillis(options.now));
  return options.pods === undefined ? result : applyPodRule(result, object, options.pods, options.now);
}

/**
 * Computes one resource's status exactly as kstatus' `Compute` does (cli-utils
 * `pkg/kstatus/status`), in kstatus' order:
 * 1. deletion: a non-empty `metadata.deletionTimestamp` is Terminating;
 * 2. custom health: if `options.customHealth` returns a result, it is final (Flux's behaviour: it
 *    replaces the generation, condition and built-in checks; a throwing hook gives Unknown
 *    `HEALTH_CHECK_ERROR`);
 * 3. generation: `metadata.generation` != `status.observedGeneration` is InProgress;
 * 4. `Reconciling=True` / `Stalled=True` conditions, first in list order;
 * 5. the built-in rule for the group and kind (Deployment, StatefulSet, DaemonSet, ReplicaSet, Pod,
 *    PersistentVolumeClaim, Service, Job, CronJob, PodDisruptionBudget, CustomResourceDefinition,
 *    Secret, ConfigMap);
 * 6. kinds without a rule: the `Ready` condition, else Current `Resource is current`;
 * 7. with `options.pods`, kstatus' pod-controller reading layer ({@link applyPodRule}).
 *
 * Never throws. Where kstatus' `Compute` returns an error (wrong-typed deletionTimestamp or
 * generations, undecodable conditions, unknown Pod phase), and for input that is not an object at
 * all, the result is Unknown with reason `MALFORMED_OBJECT` and the error text as message.
 */
export function computeStatus(object: unknown, options: ComputeStatusOptions): StatusResult {
  try {
    return computeUnguarded(object, options ?? { now: Number.NaN });
  } catch (error) {
    // Only reachable through exotic input (throwing getters, proxies): plain JSON never throws.
    return malformedStatus(`could not read the object: ${describeThrown(error)}`);
  }
}
