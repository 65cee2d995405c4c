/**
 * How stored objects look on the wire: the apiVersion of the request's version, and list items
 * without apiVersion/kind for built-in kinds (as kube-apiserver serialises typed lists).
 * Serialisations are cached per stored object: stored objects are never mutated, so a LIST or a
 * watch fan-out serialises each object once, not once per item per client.
 */
import { formatApiVersion, type ResourceType } from './catalog.ts';
import type { KubeObject } from './types.ts';

const objectJson = new WeakMap<KubeObject, string>();
const itemJson = new WeakMap<KubeObject, string>();

/** The object as returned for a request at `version`. */
export function presentObject(type: ResourceType, obj: KubeObject, version: string): KubeObject {
  const apiVersion = formatApiVersion(type.group, version);
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

/** The object as an item of a list answer. */
export function presentListItem(type: ResourceType, obj: KubeObject, version: string): KubeObject {
  if (type.custom) return presentObject(type, obj, version);
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

function cached(cache: WeakMap<KubeObject, string>, key: KubeObject, make: () => KubeObject): string {
  let text = cache.get(key);
  if (text === undefined) {
    text = JSON.stringify(make());
    cache.set(key, text);
  }
  return text;
}

/** JSON of {@link presentObject}, cached when the stored object is served at its own version. */
export function serializeObject(type: ResourceType, obj: KubeObject, version: string): string {
  const shown = presentObject(type, obj, version);
  return shown === obj ? cached(objectJson, obj, () => obj) : JSON.stringify(shown);
}

/** JSON of {@link presentListItem}, cached likewise. */
export function serializeListItem(type: ResourceType, obj: KubeObject, version: string): string {
  if (type.custom) return serializeObject(type, obj, version);
  return cached(itemJson, obj, () => presentListItem(type, obj, version));
}

/** JSON of a list answer built from already serialised items. */
export function serializeList(
  kind: string,
  apiVersion: string,
  metadata: Record<string, unknown>,
  items: readonly string[],
): string {
  return `{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(metadata)},"items":[${items.join(',')}]}`;
}
