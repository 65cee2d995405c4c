/**
 * How stored objects look on the wire: the apiVersion of the request's version, and list items
 * without apiVersion/kind for built-in kinds (as kube-apiserver serialises typed lists).
 */
import { formatApiVersion, type ResourceType } from './catalog.ts';
import type { KubeObject } from './types.ts';

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
