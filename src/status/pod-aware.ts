/**
 * Kinds whose status depends on more than the object itself, so whoever reads a cluster must read
 * Pods next to them and must not reuse a status computed on an earlier tick.
 *
 * - StatefulSet and ReplicaSet: kstatus' pod-controller readers turn them Failed when a pod they
 *   select has failed (see `applyPodRule`). The `extensions` ReplicaSet of old clusters is listed
 *   too, so its pods are read and it is recomputed like the `apps` one; the rule itself follows
 *   kstatus and only escalates `apps` kinds.
 * - Pod: its status changes with time alone, when its unschedulable window ends (see
 *   `findRecheckTime`).
 */

/** A group and kind, as in an ObjectRef. */
interface GroupKindLike {
  readonly group: string;
  readonly kind: string;
}

/** Kinds whose status depends on the Pods they select. */
export const POD_AWARE_KINDS: readonly GroupKindLike[] = [
  { group: 'apps', kind: 'StatefulSet' },
  { group: 'apps', kind: 'ReplicaSet' },
  { group: 'extensions', kind: 'ReplicaSet' },
];

// Looked up with a ref's own strings: callers ask once per entry of every phase, so no key is built.
const POD_AWARE_BY_GROUP: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const byGroup = new Map<string, Set<string>>();
  for (const { group, kind } of POD_AWARE_KINDS) byGroup.set(group, (byGroup.get(group) ?? new Set()).add(kind));
  return byGroup;
})();

/** True for a kind whose status depends on the Pods it selects ({@link POD_AWARE_KINDS}). */
export function isPodAwareKind(group: string, kind: string): boolean {
  return POD_AWARE_BY_GROUP.get(group)?.has(kind) === true;
}

/** True for the core Pod, whose status can change with time alone. */
export function isPodKind(group: string, kind: string): boolean {
  return group === '' && kind === 'Pod';
}

/**
 * True when a status computed earlier cannot be reused for an unchanged object: the kind depends
 * on Pods ({@link isPodAwareKind}) or on time (the Pod itself).
 */
export function dependsOnPodsOrTime(group: string, kind: string): boolean {
  return isPodKind(group, kind) || isPodAwareKind(group, kind);
}
