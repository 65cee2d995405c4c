/**
 * Which phases a set of changed objects can affect, so a live snapshot observes and records only
 * those instead of the whole cluster. Pure.
 *
 * A phase is affected by a change to:
 * - one of its entries;
 * - its inventory object (a Flux Kustomization's or an Argo CD Application's status, a cli-utils
 *   ConfigMap's entries);
 * - a Pod in the namespace of one of its StatefulSets or ReplicaSets (kstatus' pod-aware rules read
 *   those pods);
 * - for a selector phase, any object of a kind it selects, in a namespace it looks in (the object
 *   may have started or stopped matching the selector).
 *
 * A changed inventory object that belongs to no known phase (created as invalid, deleted, or one of
 * several ConfigMaps merged into one phase) cannot be placed: the answer is then "observe the whole
 * cluster", which also records deleted phases.
 */
import { isPodAwareKind, isPodKind } from '../status/pod-aware.ts';
import { refKey } from './ref-key.ts';
import type { ObjectRef, Phase } from './types.ts';

/** What changed in a cluster since its last snapshot. */
export interface ChangedObjects {
  /** Objects of the kinds the phases use (entries, pods). */
  objects: readonly ObjectRef[];
  /** Inventory objects (from the inventory watches). */
  inventories: readonly ObjectRef[];
}

/** The phases a change affects, by index into the phases given; or the whole cluster, and why. */
export type AffectedPhases = { whole: false; indices: number[] } | { whole: true; reason: string };

/** The phases of `phases` that `changed` can affect (see the module comment for the rules). */
export function findAffectedPhases(phases: readonly Phase[], changed: ChangedObjects): AffectedPhases {
  const byEntry = new Map<string, number[]>();
  const byInventory = new Map<string, number[]>();
  const podNamespaces = new Map<string, number[]>();
  const selectorPhases: number[] = [];
  const ownerPhases: number[] = [];
  const add = (map: Map<string, number[]>, key: string, index: number): void => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [index]);
    else if (list[list.length - 1] !== index) list.push(index);
  };
  phases.forEach((phase, index) => {
    for (const ref of phase.entries) {
      add(byEntry, refKey(ref), index);
      if (isPodAwareKind(ref.group, ref.kind)) add(podNamespaces, ref.namespace, index);
    }
    if (phase.inventoryRef !== undefined) add(byInventory, refKey(phase.inventoryRef), index);
    if (phase.selector !== undefined) selectorPhases.push(index);
    if (phase.owner !== undefined) ownerPhases.push(index);
  });
  const affected = new Set<number>();
  for (const ref of changed.inventories) {
    const key = refKey(ref);
    const owners = byInventory.get(key);
    if (owners === undefined) return { whole: true, reason: `inventory ${key} belongs to no known phase` };
    for (const index of owners) affected.add(index);
    // An inventory can be another phase's entry too (Flux Kustomizations applying Kustomizations).
    for (const index of byEntry.get(key) ?? []) affected.add(index);
  }
  for (const ref of changed.objects) {
    for (const index of byEntry.get(refKey(ref)) ?? []) affected.add(index);
    if (isPodKind(ref.group, ref.kind)) for (const index of podNamespaces.get(ref.namespace) ?? []) affected.add(index);
    for (const index of selectorPhases) if (selects(phases[index] as Phase, ref)) affected.add(index);
    for (const index of ownerPhases) if (mayOwn(phases[index] as Phase, ref)) affected.add(index);
    if (!byEntry.has(refKey(ref)) && ownerPhases.some((index) => isOwnerKind(phases[index] as Phase, ref))) {
      return { whole: true, reason: `${refKey(ref)} is a new owner` };
    }
  }
  return { whole: false, indices: [...affected].sort((a, b) => a - b) };
}

function selects(phase: Phase, ref: ObjectRef): boolean {
  const selector = phase.selector;
  if (selector === undefined) return false;
  if (!selector.kinds.some((k) => k.group === ref.group && k.kind === ref.kind)) return false;
  return selector.namespaces.length === 0 || ref.namespace === '' || selector.namespaces.includes(ref.namespace);
}

function isOwnerKind(phase: Phase, ref: ObjectRef): boolean {
  return phase.owner !== undefined && phase.owner.kind.group === ref.group && phase.owner.kind.kind === ref.kind;
}

function mayOwn(phase: Phase, ref: ObjectRef): boolean {
  const owner = phase.owner;
  if (owner === undefined) return false;
  if (!isOwnerKind(phase, ref) && !owner.ownedKinds.some((k) => k.group === ref.group && k.kind === ref.kind))
    return false;
  return phase.namespace === '' || ref.namespace === phase.namespace;
}
