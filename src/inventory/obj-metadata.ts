/**
 * cli-utils' ObjMetadata string form `<namespace>_<name>_<group>_<kind>`, as written into ConfigMap
 * inventory keys and Flux `.status.inventory.entries[].id` (sigs.k8s.io/cli-utils
 * `pkg/object/objmetadata.go`).
 */
import type { ObjectRef } from './types.ts';

const SEPARATOR = '_';
const COLON_TRANSCODED = '__';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

/** Result of {@link parseObjMetadata}. */
export type ObjMetadataParseResult = { ok: true; ref: ObjectRef } | { ok: false; message: string };

/** Options for {@link parseObjMetadata}. */
export interface ParseObjMetadataOptions {
  /**
   * Reject names that still contain `_` after decoding, as upstream cli-utils does. Flux's fork
   * (fluxcd/cli-utils, "Add support for RBAC names with underscores") accepts them, and so do we
   * by default because a reader should not drop objects a tool has applied.
   * @default false
   */
  strict?: boolean;
}

/** True for the four RBAC kinds whose names may contain `:` (written as `__`). */
export function isRbacKind(group: string, kind: string): boolean {
  return group === RBAC_GROUP && RBAC_KINDS.has(kind);
}

/**
 * Writes a ref as cli-utils does: colons in RBAC names become `__`, an empty namespace leaves a
 * leading `_`, and the core group leaves `__` before the kind.
 */
export function formatObjMetadata(ref: ObjectRef): string {
  const name = isRbacKind(ref.group, ref.kind) ? ref.name.split(':').join(COLON_TRANSCODED) : ref.name;
  return [ref.namespace, name, ref.group, ref.kind].join(SEPARATOR);
}

/**
 * Parses an ObjMetadata string exactly as cli-utils splits it: namespace before the first `_`,
 * kind after the last, group after the second-to-last, and the rest is the name with every `__`
 * turned back into `:`. Returns a message instead of throwing.
 */
export function parseObjMetadata(id: string, options: ParseObjMetadataOptions = {}): ObjMetadataParseResult {
  if (typeof id !== 'string') return { ok: false, message: `object id must be a string, got ${typeof id}` };
  const first = id.indexOf(SEPARATOR);
  if (first === -1) return tooFewFields(id);
  const namespace = id.slice(0, first);
  let rest = id.slice(first + 1);
  const last = rest.lastIndexOf(SEPARATOR);
  if (last === -1) return tooFewFields(id);
  const kind = rest.slice(last + 1);
  rest = rest.slice(0, last);
  const groupAt = rest.lastIndexOf(SEPARATOR);
  if (groupAt === -1) return tooFewFields(id);
  const group = rest.slice(groupAt + 1);
  const cut = rest.slice(0, groupAt);
  const name = cut.includes(COLON_TRANSCODED) ? cut.split(COLON_TRANSCODED).join(':') : ownCopy(cut);
  if (name === '') return { ok: false, message: `object id "${id}" has an empty name` };
  if (kind === '') return { ok: false, message: `object id "${id}" has an empty kind` };
  if (options.strict === true && name.includes(SEPARATOR)) {
    return { ok: false, message: `object id "${id}" has too many fields (name "${name}" contains "_")` };
  }
  return { ok: true, ref: { group, kind, namespace, name } };
}

/**
 * `cut` in a string of its own. V8 keeps a cut of 13 or more characters as a slice that holds the
 * whole id alive (a ConfigMap data key, a Flux entry id), and parsed phases are kept from tick to
 * tick: a flat copy of the name costs what the slice does, without the id behind it. Joining two
 * parts always copies (a lone part would be returned as is).
 */
function ownCopy(cut: string): string {
  return cut.length < 13 ? cut : [cut.charAt(0), cut.slice(1)].join('');
}

function tooFewFields(id: string): ObjMetadataParseResult {
  return {
    ok: false,
    message: `object id "${id}" is not <namespace>_<name>_<group>_<kind>: too few "_"-separated fields`,
  };
}
