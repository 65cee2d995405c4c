/**
 * Group/kind references read from data phaselog does not control: inventory lists written by kpt and
 * Argo CD, and kinds declared in config. Versions never matter here, as in cli-utils' ObjMetadata.
 */
import { isRecord, readString } from './object-fields.ts';
import type { GroupKind, ObjectRef } from './types.ts';

/**
 * Reads a declared kind: `apps/Deployment`, `Service` (the core group) or `{group?, kind}` with a
 * non-empty kind. `undefined` when it is none of those.
 */
export function readGroupKind(item: unknown): GroupKind | undefined {
  if (typeof item === 'string') {
    const parts = item.split('/');
    if (parts.length === 1 && parts[0] !== '') return { group: '', kind: parts[0] ?? '' };
    if (parts.length === 2 && parts[1] !== '') return { group: parts[0] ?? '', kind: parts[1] ?? '' };
    return undefined;
  }
  if (isRecord(item) && typeof item.kind === 'string' && item.kind !== '') {
    return { group: readString(item.group), kind: item.kind };
  }
  return undefined;
}

/**
 * Reads `{group, kind, namespace, name}` as kpt and Argo CD write it: group and namespace may be
 * missing, null or empty, kind and name must be non-empty strings.
 */
export function readGroupKindRef(item: unknown): ObjectRef | undefined {
  if (!isRecord(item)) return undefined;
  const { name, group, namespace } = item;
  if (typeof name !== 'string' || name === '' || !isOptionalString(group) || !isOptionalString(namespace))
    return undefined;
  const groupKind = readGroupKind(item);
  return groupKind === undefined ? undefined : { ...groupKind, namespace: readString(namespace), name };
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}
