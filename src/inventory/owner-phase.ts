/**
 * Owner phases: every object of a configured owner kind (an operator's custom resource, such as the
 * OpenStack LCM operator's `OsPhase`) is a phase. Its members are the owner itself and every object
 * of the owned kinds whose `metadata.ownerReferences` lead to it, directly or through other owned
 * objects (a Pod owned by a Job owned by the owner). Pure: the objects come from the caller.
 *
 * Ownership is followed by uid, as the garbage collector does. Two faults make a phase's membership
 * uncertain, and each becomes an error of that phase (never a loop or a crash):
 * - a cycle: an object of the phase is, through ownerReferences, its own owner;
 * - a dangling reference: an object of the phase names an owner uid that does not exist, where the
 *   owner's kind is one phaselog read (so its absence is known, not guessed).
 *
 * Phase identity: `name` and `namespace` are the owner's; `id` is the owner's ref key
 * (`group/Kind/namespace/name`).
 */
import { buildPhase } from './build-phase.ts';
import { readOwnerHolder } from './holder.ts';
import { refKey } from './ref-key.ts';
import { isRecord, readIdentity, readString, readStringMap } from './object-fields.ts';
import type { GroupKind, InventoryError, ObjectRef, Phase } from './types.ts';

/** One `phases.owners` entry: the kind whose objects are phases, and the kinds they own. */
export interface OwnerKindSpec {
  kind: GroupKind;
  ownedKinds: GroupKind[];
  /** The owner's condition that says it is ready. @default 'Ready' */
  readyCondition?: string;
}

/** What an owner phase is made from, beside the phase itself: the owner object. */
export interface OwnerPhase {
  phase: Phase;
  owner: Record<string, unknown>;
}

interface Node {
  ref: ObjectRef;
  uid: string;
  /** Owner uids from ownerReferences, with the kind each reference names. */
  owners: { uid: string; group: string; kind: string; name: string }[];
}

/** Reads an object's identity, uid and ownerReferences; `undefined` without a name or uid. */
function readNode(object: unknown): Node | undefined {
  const identity = readIdentity(object);
  if (identity === undefined || identity.name === '' || !isRecord(object) || !isRecord(object.metadata))
    return undefined;
  const uid = readString(object.metadata.uid);
  if (uid === '') return undefined;
  const refs = Array.isArray(object.metadata.ownerReferences) ? object.metadata.ownerReferences : [];
  const owners: Node['owners'] = [];
  for (const ref of refs) {
    if (!isRecord(ref) || typeof ref.uid !== 'string' || ref.uid === '') continue;
    const apiVersion = readString(ref.apiVersion);
    const slash = apiVersion.indexOf('/');
    owners.push({
      uid: ref.uid,
      group: slash === -1 ? '' : apiVersion.slice(0, slash),
      kind: readString(ref.kind),
      name: readString(ref.name),
    });
  }
  return {
    ref: { group: identity.group, kind: identity.kind, namespace: identity.namespace, name: identity.name },
    uid,
    owners,
  };
}

function describe(ref: Pick<ObjectRef, 'group' | 'kind' | 'name'>): string {
  return `${ref.group === '' ? '' : `${ref.group}/`}${ref.kind} ${ref.name}`;
}

function sameKind(a: GroupKind, b: GroupKind): boolean {
  return a.group === b.group && a.kind === b.kind;
}

/**
 * Builds one phase per owner object. `owners` are the objects of `spec.kind`; `owned` the objects of
 * `spec.ownedKinds` (in the same namespaces). Objects without a uid cannot be followed and are left
 * out. Never throws.
 */
export function buildOwnerPhases(
  spec: OwnerKindSpec,
  owners: readonly unknown[],
  owned: readonly unknown[],
): OwnerPhase[] {
  const ownerNodes: { node: Node; object: Record<string, unknown> }[] = [];
  for (const object of owners) {
    const node = readNode(object);
    if (node !== undefined && isRecord(object)) ownerNodes.push({ node, object });
  }
  const ownedNodes = owned.map(readNode).filter((n): n is Node => n !== undefined);
  const byUid = new Map<string, Node>();
  for (const node of [...ownerNodes.map((o) => o.node), ...ownedNodes]) byUid.set(node.uid, node);
  // owner uid -> owned objects naming it (only owned kinds are walked through).
  const dependents = new Map<string, Node[]>();
  for (const node of ownedNodes) {
    for (const owner of node.owners) {
      const list = dependents.get(owner.uid);
      if (list === undefined) dependents.set(owner.uid, [node]);
      else list.push(node);
    }
  }
  // Kinds whose every object was read: a reference to one of them that finds no uid dangles.
  const readKinds = [spec.kind, ...spec.ownedKinds];
  return ownerNodes.map(({ node, object }) => {
    const { members, errors } = collectMembers(node, dependents, byUid, readKinds);
    const metadata = isRecord(object.metadata) ? object.metadata : {};
    const phase = buildPhase({
      source: 'owner',
      id: refKey(node.ref),
      name: node.ref.name,
      namespace: node.ref.namespace,
      labels: readStringMap(metadata.labels),
      entries: members.map((m) => m.ref),
      errors,
      inventory: {
        apiVersion: readString(object.apiVersion),
        kind: node.ref.kind,
        group: node.ref.group,
        name: node.ref.name,
        namespace: node.ref.namespace,
        labels: {},
      },
      owner: { kind: { group: node.ref.group, kind: node.ref.kind }, ownedKinds: spec.ownedKinds },
    });
    const holder = `${node.ref.kind} ${node.ref.namespace === '' ? '' : `${node.ref.namespace}/`}${node.ref.name}`;
    // The owner itself is the first member; every other member is a task it started.
    phase.holder = readOwnerHolder(object, holder, {
      readyCondition: spec.readyCondition ?? 'Ready',
      tasks: members.length - 1,
    });
    return { phase, owner: object };
  });
}

/**
 * The owner and everything that leads to it, depth first with the path kept, so a reference back
 * into the path is reported as a cycle instead of followed.
 */
function collectMembers(
  root: Node,
  dependents: ReadonlyMap<string, Node[]>,
  byUid: ReadonlyMap<string, Node>,
  readKinds: readonly GroupKind[],
): { members: Node[]; errors: InventoryError[] } {
  const members: Node[] = [];
  const errors: InventoryError[] = [];
  const seen = new Set<string>();
  const reported = new Set<string>();
  const report = (key: string, error: InventoryError): void => {
    if (reported.has(key)) return;
    reported.add(key);
    errors.push(error);
  };
  const path: Node[] = [];
  const parent = new Map<string, Node>();
  const cycle = (loop: Node[]): void => {
    const first = loop[0] as Node;
    report(`cycle:${first.uid}`, {
      code: 'OWNER_REFERENCE_CYCLE',
      message: `ownerReferences form a cycle: ${[...loop, first].map((n) => describe(n.ref)).join(' owns ')}; the cycle is not followed further`,
      entry: describe(first.ref),
    });
  };
  // Depth first with an explicit stack, not recursion: a chain of owned objects as deep as a
  // cluster holds must not overflow the call stack.
  const onPath = new Map<string, number>();
  const enter = (node: Node): boolean => {
    const at = onPath.get(node.uid);
    if (at !== undefined) {
      cycle(path.slice(at));
      return false;
    }
    if (seen.has(node.uid)) return false;
    seen.add(node.uid);
    members.push(node);
    for (const owner of node.owners) {
      if (byUid.has(owner.uid)) continue;
      if (!readKinds.some((k) => sameKind(k, owner))) continue;
      report(`dangling:${node.uid}:${owner.uid}`, {
        code: 'DANGLING_OWNER_REFERENCE',
        message: `${describe(node.ref)} names an owner that does not exist: ${describe(owner)} (uid ${owner.uid}); the garbage collector may delete it`,
        entry: describe(node.ref),
      });
    }
    onPath.set(node.uid, path.length);
    path.push(node);
    return true;
  };
  const next: number[] = [];
  if (enter(root)) next.push(0);
  while (path.length > 0) {
    const node = path[path.length - 1] as Node;
    const children = dependents.get(node.uid) ?? [];
    const index = next[next.length - 1] as number;
    if (index >= children.length) {
      path.pop();
      next.pop();
      onPath.delete(node.uid);
      continue;
    }
    next[next.length - 1] = index + 1;
    const dependent = children[index] as Node;
    // Kubernetes treats a reference to a namespaced owner in another namespace as absent: such an
    // object never joins the phase (it would show one namespace's object to readers of another).
    if (node.ref.namespace !== '' && dependent.ref.namespace !== node.ref.namespace) continue;
    if (!parent.has(dependent.uid)) parent.set(dependent.uid, node);
    if (enter(dependent)) next.push(0);
  }
  // The owner owned by one of its own members: the walk above never goes up, so close that loop here.
  for (const owner of root.owners) {
    const member = byUid.get(owner.uid);
    if (member === undefined || member === root || !seen.has(member.uid)) continue;
    const loop: Node[] = [member];
    for (let up = parent.get(member.uid); up !== undefined && up !== root; up = parent.get(up.uid)) loop.unshift(up);
    cycle([root, ...loop]);
  }
  if (root.owners.some((o) => o.uid === root.uid)) cycle([root]);
  return { members, errors };
}
