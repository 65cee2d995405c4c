/**
 * Resource trees: the objects a phase member owns (Deployment -> ReplicaSets -> Pods, StatefulSet,
 * DaemonSet or Job -> Pods), found by their ownerReferences, each with its kstatus status and
 * message. PURE: the caller hands in the objects it already holds (a worker's watch caches), so a
 * tree never costs a request to the API server.
 *
 * Objects are matched to owners the way the garbage collector does, by the owner's uid within the
 * owner's namespace; an owner whose uid is unknown (a member whose cached view was dropped) is
 * matched by kind and name in its namespace. Trees are bounded in depth and size, and an
 * ownerReference cycle (only possible in a malformed or hostile cluster) ends at the object seen
 * twice instead of looping.
 */
import { computeStatus } from './compute.ts';
import type { ResourceStatus } from './types.ts';

/** An object that may own or be owned, as a cache holds it. */
export interface OwnedObject {
  /** The object: apiVersion, kind, metadata (name, namespace, uid, ownerReferences) and what status rules read. */
  readonly object: Record<string, unknown>;
}

/** One node of a resource tree. */
export interface ChildNode {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  status: ResourceStatus;
  message: string;
  children: ChildNode[];
}

/** A member's tree: its children, and whether a bound cut it. */
export interface ChildTree {
  children: ChildNode[];
  /** Nodes left out because of {@link TreeLimits} (0 when complete). */
  omitted: number;
}

/** Bounds of one tree. */
export interface TreeLimits {
  /** Deepest level below the member (Deployment -> ReplicaSet -> Pod is 2). @default 4 */
  maxDepth?: number;
  /** Most nodes in one tree; a Deployment with thousands of Pods shows the first ones and a count. @default 200 */
  maxNodes?: number;
}

export const DEFAULT_TREE_LIMITS: Required<TreeLimits> = { maxDepth: 4, maxNodes: 200 };

/** Kinds whose objects own the objects a tree shows, by `group/kind`. */
export const OWNER_KINDS: ReadonlySet<string> = new Set([
  'apps/Deployment',
  'apps/ReplicaSet',
  'apps/StatefulSet',
  'apps/DaemonSet',
  'batch/Job',
]);

/**
 * The kinds a tree's children are (what a worker watches to build trees). Both keep their status
 * view in the clear in the caches (their status depends on Pods or time), so a tree reads them
 * without unpacking; a CronJob's Jobs are left out for that reason (a Job's view is packed).
 */
export const CHILD_KINDS: readonly { group: string; kind: string }[] = [
  { group: 'apps', kind: 'ReplicaSet' },
  { group: '', kind: 'Pod' },
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function groupOf(apiVersion: unknown): string {
  const text = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = text.indexOf('/');
  return slash < 0 ? '' : text.slice(0, slash);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

interface Indexed {
  object: Record<string, unknown>;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

/** An index of owned objects by owner, built once per cluster and read for every member. */
export interface OwnerIndex {
  /** Objects owned by the owner with this uid, or (uid unknown) this kind and name, in `namespace`. */
  childrenOf(owner: { namespace: string; kind: string; name: string; uid?: string }): readonly Indexed[];
}

/** Indexes `objects` by their ownerReferences (by owner uid, and by namespace/kind/name). */
export function indexOwners(objects: Iterable<Record<string, unknown>>): OwnerIndex {
  const byUid = new Map<string, Indexed[]>();
  const byName = new Map<string, Indexed[]>();
  const push = (map: Map<string, Indexed[]>, key: string, item: Indexed): void => {
    const list = map.get(key);
    if (list) list.push(item);
    else map.set(key, [item]);
  };
  for (const object of objects) {
    const meta = isRecord(object['metadata']) ? object['metadata'] : {};
    const refs = meta['ownerReferences'];
    if (!Array.isArray(refs)) continue;
    const item: Indexed = {
      object,
      group: groupOf(object['apiVersion']),
      kind: str(object['kind']),
      namespace: str(meta['namespace']),
      name: str(meta['name']),
      uid: str(meta['uid']),
    };
    for (const ref of refs) {
      if (!isRecord(ref)) continue;
      const uid = str(ref['uid']);
      if (uid !== '') push(byUid, uid, item);
      push(byName, `${item.namespace}/${str(ref['kind'])}/${str(ref['name'])}`, item);
    }
  }
  return {
    childrenOf(owner) {
      const list =
        owner.uid !== undefined && owner.uid !== ''
          ? byUid.get(owner.uid)
          : byName.get(`${owner.namespace}/${owner.kind}/${owner.name}`);
      // ownerReferences name owners in the dependent's own namespace (cluster-scoped owners aside).
      return (list ?? []).filter((c) => owner.namespace === '' || c.namespace === owner.namespace);
    },
  };
}

function byName(a: Indexed, b: Indexed): number {
  return a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind < b.kind ? -1 : 1;
}

/**
 * The tree of objects `member` owns, with each node's kstatus status computed at `now` (a
 * ReplicaSet's with its own Pods, as kstatus' pod-controller reader does).
 */
export function buildChildTree(
  member: { namespace: string; kind: string; name: string; uid?: string },
  index: OwnerIndex,
  now: number,
  limits: TreeLimits = {},
): ChildTree {
  const maxDepth = Math.max(1, limits.maxDepth ?? DEFAULT_TREE_LIMITS.maxDepth);
  const maxNodes = Math.max(1, limits.maxNodes ?? DEFAULT_TREE_LIMITS.maxNodes);
  let count = 0;
  let omitted = 0;
  // Every object shows once: a cycle of ownerReferences, or an object with two owners in the tree, stops there.
  const seen = new Set<string>([`${member.namespace}/${member.kind}/${member.name}`]);
  const walk = (owner: { namespace: string; kind: string; name: string; uid?: string }, depth: number): ChildNode[] => {
    const found = index.childrenOf(owner).slice().sort(byName);
    const nodes: ChildNode[] = [];
    for (const child of found) {
      const key = `${child.namespace}/${child.kind}/${child.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (count >= maxNodes) {
        omitted++;
        continue;
      }
      count++;
      const below =
        depth < maxDepth
          ? walk({ namespace: child.namespace, kind: child.kind, name: child.name, uid: child.uid }, depth + 1)
          : [];
      if (depth >= maxDepth) omitted += index.childrenOf(child).length;
      const pods =
        child.kind === 'ReplicaSet'
          ? index
              .childrenOf(child)
              .filter((c) => c.kind === 'Pod')
              .map((c) => c.object)
          : undefined;
      const result = computeStatus(child.object, { now, ...(pods !== undefined ? { pods } : {}) });
      nodes.push({
        group: child.group,
        kind: child.kind,
        namespace: child.namespace,
        name: child.name,
        status: result.status,
        message: result.message,
        children: below,
      });
    }
    return nodes;
  };
  const children = walk(member, 1);
  return { children, omitted };
}
