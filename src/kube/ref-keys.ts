/**
 * {@link refKey} remembered per ref object. A tick looks a ref's key up several times (grouping,
 * cache lookup, outcome, observation), and phases parsed from unchanged inventories keep the same
 * ref objects from tick to tick, so in watch mode most keys are never built again. Refs are never
 * modified after parsing anywhere in phaselog; this relies on that.
 */
import { refKey } from '../inventory/ref-key.ts';
import type { ObjectRef } from '../inventory/types.ts';

const keys = new WeakMap<ObjectRef, string>();

/** The {@link refKey} of `ref`, built once per ref object. */
export function keyOf(ref: ObjectRef): string {
  let key = keys.get(ref);
  if (key === undefined) {
    key = refKey(ref);
    keys.set(ref, key);
  }
  return key;
}
