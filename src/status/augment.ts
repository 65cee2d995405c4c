/**
 * kstatus `Augment` (cli-utils `status.go`): writes the computed standard conditions into the
 * object's `status.conditions`. Unlike kstatus, the input is never mutated; a changed copy is returned.
 */
import { checkDeletion } from './generic.ts';
import { computeAfterDeletion, describeNonObject, toMillis } from './kstatus.ts';
import { describeGoValue, FieldError, goTypeName, isRecord, MISSING, readPath } from './read.ts';
import type { JsonRecord } from './read.ts';
import type { StatusResult } from './types.ts';

/** The augmented copy and the result it was built from, or kstatus' error text. */
export type AugmentOutcome = { ok: true; object: JsonRecord; result: StatusResult } | { ok: false; error: string };

const CONDITIONS = ['status', 'conditions'] as const;

/** `time.Now().UTC().Format(time.RFC3339)`: second precision, `Z`. */
function formatRfc3339(ms: number): string {
  return `${new Date(Number.isNaN(ms) ? 0 : ms).toISOString().slice(0, 19)}Z`;
}

/**
 * kstatus `Augment`: for each condition of the computed result, an existing condition of the same
 * type gets the new status, reason, message and `lastUpdateTime = now`, and `lastTransitionTime =
 * now` only if its status changed; otherwise the condition is appended with both times `now`.
 * Conditions are never removed, so a resource that became Current keeps an old `Reconciling`.
 * A Current or Terminating result has no conditions, so the object comes back unchanged apart from
 * an empty `status.conditions` list where it had none (as kstatus writes one).
 */
export function augmentConditions(object: unknown, options: { now: Date | number }): AugmentOutcome {
  if (!isRecord(object)) return { ok: false, error: `expected a Kubernetes object, got ${describeNonObject(object)}` };
  const nowMs = toMillis(options.now);
  const result = checkDeletion(object) ?? computeAfterDeletion(object, nowMs);
  if (result.status === 'Unknown') return { ok: false, error: result.message };

  const raw = readPath(object, CONDITIONS);
  if (raw instanceof FieldError) return { ok: false, error: raw.message };
  let conditions: unknown[];
  if (raw === MISSING) conditions = [];
  else if (Array.isArray(raw)) conditions = raw.map((c: unknown) => (isRecord(c) ? { ...c } : c));
  else {
    return {
      ok: false,
      error: `.status.conditions accessor error: ${describeGoValue(raw)} is of the type ${goTypeName(raw)}, expected []interface{}`,
    };
  }

  const now = formatRfc3339(nowMs);
  for (const wanted of result.conditions) {
    let present = false;
    for (const c of conditions) {
      if (!isRecord(c)) return { ok: false, error: 'condition does not have the expected structure' };
      if (typeof c['type'] !== 'string') return { ok: false, error: 'condition type does not have the expected type' };
      if (c['type'] !== wanted.type) continue;
      if (typeof c['status'] !== 'string') {
        return { ok: false, error: 'condition status does not have the expected type' };
      }
      if (c['status'] !== wanted.status) c['lastTransitionTime'] = now;
      c['status'] = wanted.status;
      c['lastUpdateTime'] = now;
      c['reason'] = wanted.reason;
      c['message'] = wanted.message;
      present = true;
    }
    if (!present) {
      conditions.push({
        lastTransitionTime: now,
        lastUpdateTime: now,
        message: wanted.message,
        reason: wanted.reason,
        status: wanted.status,
        type: wanted.type,
      });
    }
  }

  const status = object['status'];
  if (status !== undefined && !isRecord(status)) {
    return { ok: false, error: 'value cannot be set because .status is not a map[string]interface{}' };
  }
  return { ok: true, object: { ...object, status: { ...status, conditions } }, result };
}
