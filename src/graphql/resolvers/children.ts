/**
 * `Resource.children`: the tree a worker published for a phase member (src/pubsub/resource-trees.ts),
 * flattened depth first. Only resources read as a phase's (which the caller may see) have one, and
 * a member in a namespace the token may not read is withheld, as its revision is.
 */
import { canSee } from '../../auth/principal.ts';
import type { ResourceChild, ResourceChildren } from '../../generated/graphql.ts';
import { OWNER_KINDS, type ChildNode } from '../../status/children.ts';
import type { ResourceRecord } from '../../store/read-types.ts';
import type { GraphqlContext } from '../context.ts';
import { toStatus } from './shapes.ts';

/** Most items one resource's children list returns (the worker's bound; a hostile Redis value is cut here too). */
export const MAX_CHILD_ITEMS = 200;
/** Deepest level returned below a resource. */
export const MAX_CHILD_DEPTH = 4;

function unknown(reason: string): ResourceChildren {
  return { items: [], omitted: 0, changedAt: null, unknownReason: reason };
}

/** Depth-first items of `nodes`, within the bounds; returns how many were left out. */
function flatten(nodes: readonly ChildNode[], parentKey: string, depth: number, into: ResourceChild[]): number {
  let omitted = 0;
  for (const node of nodes) {
    if (into.length >= MAX_CHILD_ITEMS || depth > MAX_CHILD_DEPTH) {
      omitted += 1 + countAll(node.children);
      continue;
    }
    const key = [node.group, node.kind, node.namespace, node.name].join('/');
    into.push({
      group: node.group,
      kind: node.kind,
      namespace: node.namespace,
      name: node.name,
      status: toStatus(node.status),
      message: node.message,
      depth,
      parentKey,
      key,
    });
    omitted += flatten(node.children, key, depth + 1, into);
  }
  return omitted;
}

function countAll(nodes: readonly ChildNode[]): number {
  let n = 0;
  const stack = [...nodes];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    n++;
    // A hostile value could nest without end; what is counted is bounded by what was parsed.
    stack.push(...node.children);
  }
  return n;
}

export async function resourceChildren(r: ResourceRecord, ctx: GraphqlContext): Promise<ResourceChildren | null> {
  const [group = '', kind = '', namespace = ''] = r.key.split('/');
  if (!OWNER_KINDS.has(`${group}/${kind}`) || r.view === undefined) return null;
  if (!canSee(ctx.principal, r.view.cluster, namespace === '' ? null : namespace)) return unknown('WITHHELD');
  if (r.view.live !== true || r.to !== null) return unknown('NOT_LIVE');
  if (ctx.read.trees === undefined) return unknown('UNAVAILABLE');
  let tree;
  try {
    tree = await ctx.loaders.tree.load({ cluster: r.view.cluster, memberKey: r.key });
  } catch (err) {
    ctx.log.warn({ err }, 'reading a resource tree from Redis failed');
    return unknown('UNAVAILABLE');
  }
  if (tree === undefined) return unknown('NOT_PUBLISHED');
  const items: ResourceChild[] = [];
  const omitted = flatten(tree.children, r.key, 1, items);
  return { items, omitted: tree.omitted + omitted, changedAt: tree.changedAt, unknownReason: null };
}
