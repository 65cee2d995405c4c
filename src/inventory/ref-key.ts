import type { ObjectRef } from './types.ts';

/**
 * A stable map key for a ref: `<group>/<kind>/<namespace>/<name>`. Version is left out on purpose,
 * because the API server serves one object under every version (cli-utils ObjMetadata does the same).
 * `/` cannot appear in group, kind, namespace or name, so the key is unambiguous.
 */
export function refKey(ref: ObjectRef): string {
  // One flat string: a template literal builds a tree of 32-byte concatenation cells, kept with
  // the key, and a flat key hashes and compares faster (keys are mostly used to look up maps).
  return [ref.group, ref.kind, ref.namespace, ref.name].join('/');
}

/** Orders refs by group, kind, namespace, name (plain code-unit order, locale-independent). */
export function compareRefs(a: ObjectRef, b: ObjectRef): number {
  return (
    compareStrings(a.group, b.group) ||
    compareStrings(a.kind, b.kind) ||
    compareStrings(a.namespace, b.namespace) ||
    compareStrings(a.name, b.name)
  );
}

function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/**
 * De-duplicates refs by {@link refKey} and sorts them. When duplicates differ only in version, the
 * first one that records a version wins.
 */
export function normalizeRefs(refs: readonly ObjectRef[]): ObjectRef[] {
  const byKey = new Map<string, ObjectRef>();
  for (const ref of refs) {
    const key = refKey(ref);
    const seen = byKey.get(key);
    if (seen === undefined || (seen.version === undefined && ref.version !== undefined)) byKey.set(key, ref);
  }
  return [...byKey.values()].sort(compareRefs);
}
