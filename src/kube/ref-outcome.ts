/**
 * What a read says about one ref, in the vocabulary the status layer needs: the object, NotFound,
 * or Unknown with a reason. Lets a service combine reads and statuses without re-deriving which
 * error covers which ref.
 */
import { keyOf } from './ref-keys.ts';
import type { ObjectRef } from '../inventory/types.ts';
import type { UnknownReason } from '../status/types.ts';
import { readView, type CachedObject } from './compact.ts';
import type { ReadObjectsResult } from './read-objects.ts';
import type { KubeObject } from './slim.ts';

/** The fate of one ref in one read. */
export type RefOutcome =
  /** `record` is set when a watch cache answered; `object` (its status view) is then parsed on first read. */
  | { kind: 'found'; object: KubeObject; record?: CachedObject }
  | { kind: 'missing' }
  | { kind: 'unknown'; reason: UnknownReason; message: string; retryAfterMs?: number };

/** Indexes a read so each ref's outcome is one map lookup. */
export function indexOutcomes(result: ReadObjectsResult): (ref: ObjectRef) => RefOutcome {
  const failures = new Map<string, RefOutcome>();
  for (const failure of result.errors) {
    const outcome: RefOutcome = { kind: 'unknown', reason: failure.error.kind, message: failure.error.message };
    if (failure.error.retryAfterMs !== undefined) outcome.retryAfterMs = failure.error.retryAfterMs;
    for (const ref of failure.refs) if (!failures.has(keyOf(ref))) failures.set(keyOf(ref), outcome);
  }
  const missing = new Set(result.missing.map(keyOf));
  const clusterError = result.clusterError;
  return (ref) => {
    const key = keyOf(ref);
    const object = result.objects.get(key);
    if (object !== undefined) return { kind: 'found', object };
    const record = result.records.get(key);
    if (record !== undefined) return foundInCache(record);
    const failure = failures.get(key);
    if (failure !== undefined) return failure;
    if (clusterError !== undefined)
      return { kind: 'unknown', reason: clusterError.kind, message: clusterError.message };
    if (missing.has(key)) return { kind: 'missing' };
    // A ref that was not part of this read: nothing is known about it.
    return { kind: 'unknown', reason: 'NOT_OBSERVED', message: 'not read in this tick' };
  };
}

/** A found outcome whose object is the record's status view, parsed on first read. */
class CachedOutcome {
  readonly kind = 'found';
  #object: KubeObject | undefined;
  constructor(readonly record: CachedObject) {}
  get object(): KubeObject {
    return (this.#object ??= readView(this.record));
  }
}

function foundInCache(record: CachedObject): RefOutcome {
  return new CachedOutcome(record);
}
