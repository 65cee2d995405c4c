/**
 * The in-process write path used by tests and scenarios: create-or-replace keeping every given
 * field (status included), with the same revision, generation and watch semantics as API writes.
 */
import type { ResourceType } from './catalog.ts';
import { parseApiVersion } from './catalog.ts';
import type { ClusterState } from './cluster-state.ts';
import { applyMergePatch } from './patch.ts';
import { matchesLabels, parseLabelSelector } from './selectors.ts';
import type { EmulatorObjectRef, KubeObject, RemoveOptions } from './types.ts';

/** Error for in-process calls with bad input (unknown kinds, missing names, absent objects). */
export class EmulatorInputError extends Error {
  override name = 'EmulatorInputError';
}

/** Finds the type and effective namespace of a ref, or throws EmulatorInputError. */
export function resolveRef(state: ClusterState, ref: EmulatorObjectRef): { type: ResourceType; namespace: string } {
  if (
    typeof ref?.apiVersion !== 'string' ||
    typeof ref.kind !== 'string' ||
    typeof ref.name !== 'string' ||
    ref.name === ''
  ) {
    throw new EmulatorInputError('an object reference needs apiVersion, kind and name');
  }
  const { group, version } = parseApiVersion(ref.apiVersion);
  const type = state.registry.findByKind(group, ref.kind, version);
  if (!type)
    throw new EmulatorInputError(
      `the emulator does not serve ${ref.kind} in ${ref.apiVersion}; add a CRD for it first`,
    );
  return { type, namespace: type.namespaced ? ref.namespace || 'default' : '' };
}

/** Creates or replaces one object in-process; throws EmulatorInputError when the API would refuse it. */
export function applyInProcess(state: ClusterState, obj: KubeObject): KubeObject {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    throw new EmulatorInputError('apply() takes Kubernetes objects');
  const meta = obj.metadata ?? {};
  const name = typeof meta['name'] === 'string' ? meta['name'] : '';
  const { type, namespace } = resolveRef(state, {
    apiVersion: String(obj.apiVersion ?? ''),
    kind: String(obj.kind ?? ''),
    name: name === '' ? '?' : name,
    ...(typeof meta['namespace'] === 'string' ? { namespace: meta['namespace'] } : {}),
  });
  if (name === '') throw new EmulatorInputError(`${String(obj.kind)} without metadata.name cannot be applied`);
  const copy = structuredClone(obj);
  const existing = state.get(type, namespace, name);
  const copyMeta = { ...(copy.metadata ?? {}) };
  // In-process apply is "last write wins": drop any resourceVersion precondition.
  delete copyMeta['resourceVersion'];
  const body = { ...copy, metadata: copyMeta };
  const result = existing
    ? state.update(type, namespace, name, body, { inProcess: true })
    : state.create(type, namespace, body, { inProcess: true });
  if (!result.ok) throw new EmulatorInputError(String(result.failure.body['message']));
  return result.object;
}

/** Merge-patches `.status` of an existing object; throws EmulatorInputError when it does not exist. */
export function patchStatusInProcess(
  state: ClusterState,
  ref: EmulatorObjectRef,
  status: Record<string, unknown>,
): void {
  const { type, namespace } = resolveRef(state, ref);
  const current = state.get(type, namespace, ref.name);
  if (!current)
    throw new EmulatorInputError(`${ref.kind} ${namespace === '' ? '' : namespace + '/'}${ref.name} does not exist`);
  const next = applyMergePatch(current['status'] ?? {}, status);
  const result = state.update(type, namespace, ref.name, { ...current, status: next } as KubeObject, {
    inProcess: true,
  });
  if (!result.ok) throw new EmulatorInputError(String(result.failure.body['message']));
}

/** Deletes with API semantics; returns whether the object existed. */
export function removeInProcess(state: ClusterState, ref: EmulatorObjectRef, opts?: RemoveOptions): boolean {
  const { type, namespace } = resolveRef(state, ref);
  return state.delete(
    type,
    namespace,
    ref.name,
    opts?.propagationPolicy !== undefined ? { propagationPolicy: opts.propagationPolicy } : {},
  ).ok;
}

/** A deep copy of the stored object, so callers cannot change stored state by accident. */
export function getInProcess(state: ClusterState, ref: EmulatorObjectRef): KubeObject | undefined {
  const { type, namespace } = resolveRef(state, ref);
  const obj = state.get(type, namespace, ref.name);
  return obj ? structuredClone(obj) : undefined;
}

/** Copies of a kind's objects in namespace/name order, optionally filtered by a label selector. */
export function listInProcess(
  state: ClusterState,
  query: { apiVersion: string; kind: string; namespace?: string; labelSelector?: string },
): KubeObject[] {
  const { type } = resolveRef(state, { apiVersion: query.apiVersion, kind: query.kind, name: '*' });
  const selector = parseLabelSelector(query.labelSelector ?? '');
  if (!selector.ok)
    throw new EmulatorInputError(`invalid label selector "${query.labelSelector ?? ''}": ${selector.message}`);
  const namespace =
    type.namespaced && query.namespace !== undefined && query.namespace !== '' ? query.namespace : undefined;
  return state.store
    .listSorted(type, namespace)
    .filter((o) => matchesLabels(selector.value, o.metadata?.['labels'] as Record<string, string> | undefined))
    .map((o) => structuredClone(o));
}
