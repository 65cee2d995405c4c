/**
 * The PATCH flavours kube-apiserver accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902),
 * strategic merge patch and server-side apply. Strategic merge is implemented for the common
 * cases (lists merged by their Kubernetes merge key, `$patch`, `$retainKeys`,
 * `$deleteFromPrimitiveList`, `$setElementOrder`); server-side apply merges the applied
 * configuration strategically without field-ownership tracking. Results are new values; inputs are
 * never mutated.
 */

import { isJsonEqual } from './json-equal.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Outcome of applying a patch: the new document, or why it could not be applied. */
export type PatchResult = { ok: true; value: JsonObject } | { ok: false; message: string };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386 JSON merge patch. */
export function applyMergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return patch as Json;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

function decodePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const deepEqual = isJsonEqual;

interface Located {
  parent: JsonObject | Json[];
  key: string;
}

function locate(doc: Json, path: string[]): Located | string {
  let cur: Json = doc;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i] as string;
    if (Array.isArray(cur)) cur = cur[Number(seg)] as Json;
    else if (isObject(cur)) cur = cur[seg] as Json;
    else return `doc is missing path: /${path.join('/')}`;
    if (cur === undefined) return `doc is missing path: /${path.join('/')}`;
  }
  if (!Array.isArray(cur) && !isObject(cur)) return `doc is missing path: /${path.join('/')}`;
  return { parent: cur, key: path[path.length - 1] as string };
}

function readAt(doc: Json, path: string[]): Json | undefined {
  let cur: Json | undefined = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isObject(cur)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}

function removeAt(doc: Json, path: string[]): string | undefined {
  const loc = locate(doc, path);
  if (typeof loc === 'string') return loc;
  if (Array.isArray(loc.parent)) {
    const i = Number(loc.key);
    if (!Number.isInteger(i) || i < 0 || i >= loc.parent.length) return `unable to remove nonexistent index ${loc.key}`;
    loc.parent.splice(i, 1);
  } else {
    if (!(loc.key in loc.parent)) return `unable to remove nonexistent key: ${loc.key}: missing value`;
    delete loc.parent[loc.key];
  }
  return undefined;
}

function addAt(doc: Json, path: string[], value: Json, replace: boolean): string | undefined {
  const loc = locate(doc, path);
  if (typeof loc === 'string') return loc;
  if (Array.isArray(loc.parent)) {
    const i = loc.key === '-' ? loc.parent.length : Number(loc.key);
    if (!Number.isInteger(i) || i < 0 || i > loc.parent.length || (replace && i === loc.parent.length))
      return `index out of range: ${loc.key}`;
    if (replace) loc.parent[i] = value;
    else loc.parent.splice(i, 0, value);
  } else {
    if (replace && !(loc.key in loc.parent))
      return `replace operation does not apply: doc is missing key: /${path.join('/')}: missing value`;
    loc.parent[loc.key] = value;
  }
  return undefined;
}

/** RFC 6902 JSON patch. */
export function applyJsonPatch(target: JsonObject, ops: unknown): PatchResult {
  if (!Array.isArray(ops))
    return { ok: false, message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch' };
  const doc = structuredClone(target) as Json;
  for (const raw of ops) {
    if (!isObject(raw)) return { ok: false, message: 'invalid JSON patch operation' };
    const op = raw['op'];
    const path = decodePointer(String(raw['path'] ?? ''));
    if (path === undefined) return { ok: false, message: `invalid JSON pointer: ${String(raw['path'])}` };
    if (path.length === 0) return { ok: false, message: 'patching the document root is not supported' };
    let err: string | undefined;
    switch (op) {
      case 'add':
        err = addAt(doc, path, structuredClone(raw['value'] ?? null), false);
        break;
      case 'replace':
        err = addAt(doc, path, structuredClone(raw['value'] ?? null), true);
        break;
      case 'remove':
        err = removeAt(doc, path);
        break;
      case 'test':
        if (!deepEqual(readAt(doc, path), raw['value'])) err = `testing value /${path.join('/')} failed: test failed`;
        break;
      case 'move':
      case 'copy': {
        const from = decodePointer(String(raw['from'] ?? ''));
        const value = from === undefined ? undefined : readAt(doc, from);
        if (from === undefined || value === undefined) {
          err = `unable to ${op}: missing from path ${String(raw['from'])}`;
          break;
        }
        if (op === 'move') err = removeAt(doc, from);
        err = err ?? addAt(doc, path, structuredClone(value), false);
        break;
      }
      default:
        err = `Unexpected kind: ${String(op)}`;
    }
    if (err !== undefined) return { ok: false, message: err };
  }
  return isObject(doc) ? { ok: true, value: doc } : { ok: false, message: 'patch result is not an object' };
}

// Merge keys of the list fields users patch most, from the Kubernetes API types' patchMergeKey tags.
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  imagePullSecrets: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  conditions: 'type',
  ownerReferences: 'uid',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
};

// Primitive lists whose patch strategy is "merge" (union), not replace.
const MERGED_PRIMITIVE_LISTS = new Set(['finalizers']);

function mergeKeyFor(field: string, items: Json[]): string | undefined {
  if (field === 'ports') {
    const first = items.find(isObject);
    if (first && 'containerPort' in first) return 'containerPort';
    if (first && 'port' in first) return 'port';
    return undefined;
  }
  return MERGE_KEYS[field];
}

function mergeList(field: string, current: Json | undefined, patch: Json[]): Json[] {
  const base = Array.isArray(current) ? current : [];
  if (MERGED_PRIMITIVE_LISTS.has(field) && patch.every((v) => !isObject(v))) {
    const out = [...base];
    for (const v of patch) if (!out.some((o) => deepEqual(o, v))) out.push(v);
    return out;
  }
  const key = mergeKeyFor(field, [...patch, ...base]);
  if (key === undefined || !patch.every(isObject)) return patch.map((v) => stripDirectives(v));
  if (patch.some((p) => isObject(p) && p['$patch'] === 'replace')) {
    return patch.filter((p) => !(isObject(p) && p['$patch'] === 'replace')).map((v) => stripDirectives(v));
  }
  const out: Json[] = [...base];
  for (const item of patch as JsonObject[]) {
    const idx = out.findIndex((o) => isObject(o) && deepEqual(o[key], item[key]));
    if (item['$patch'] === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
    } else if (idx >= 0) {
      out[idx] = applyStrategicMergePatch(out[idx], item);
    } else {
      out.push(stripDirectives(item));
    }
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}

/** Strategic merge patch (see the module comment for what is covered). */
export function applyStrategicMergePatch(target: unknown, patch: unknown): Json {
  if (!isObject(patch)) return patch as Json;
  if (patch['$patch'] === 'replace') return stripDirectives({ ...patch, $patch: null });
  let out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.some((d) => deepEqual(d, x)));
      continue;
    }
    if (k.startsWith('$')) continue;
    if (v === null) delete out[k];
    else if (isObject(v) && v['$patch'] === 'delete') delete out[k];
    else if (Array.isArray(v)) out[k] = mergeList(k, out[k], v);
    else if (isObject(v)) out[k] = applyStrategicMergePatch(out[k], v);
    else out[k] = v;
  }
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    const keep = new Set(retain.filter((x): x is string => typeof x === 'string'));
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  return out;
}
