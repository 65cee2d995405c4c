/**
 * `phaselog status <phase> --tree`: the phase's resources with the objects each owns (ReplicaSets,
 * Pods), as weave-gitops' CLI shows them: an indented tree with each object's status and message,
 * or in `-o json|yaml` each resource with its `children` nested. Trees are live: they come from the
 * worker that watches the cluster, so they exist now only (no `--at`).
 */
import type { CommandContext } from '../context.ts';
import { formatRef, paintStatus, renderData } from '../format.ts';
import type { DataFormat } from '../format.ts';
import { collectPages, type Connection } from '../paging.ts';

const TREE_RESOURCES = `query ResourceTrees($id: ID!, $after: String) {
  phase(id: $id) { resources(first: 100, after: $after) { edges { node {
    group kind namespace name status reason message
    children { omitted unknownReason changedAt items { group kind namespace name status message depth parentKey key } }
  } } pageInfo { hasNextPage endCursor } } }
}`;

interface ApiChild {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  status: string;
  message: string;
  depth: number;
  parentKey: string;
  key: string;
}

interface ApiTreeResource {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  status: string;
  reason: string | null;
  message: string;
  children: { omitted: number; unknownReason: string | null; changedAt: string | null; items: ApiChild[] } | null;
}

/** A node as `-o json|yaml` prints it: children nested. */
export interface TreeItem {
  ref: string;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  status: string;
  message: string;
  children?: TreeItem[];
  /** Owned objects the bounds left out. */
  omitted?: number;
  /** Why the tree is unknown (see the API's ResourceChildren.unknownReason). */
  treeUnknown?: string;
}

const UNKNOWN_TEXT: Record<string, string> = {
  NOT_PUBLISHED: 'no worker has published it lately (watch mode off, or the worker is down or starting)',
  NOT_LIVE: 'trees are live only',
  UNAVAILABLE: 'the API cannot read trees now',
  WITHHELD: "the namespace is outside this token's scope",
};

/** The resources of phase `id` with their trees, nested. */
export async function readTrees(ctx: CommandContext, id: string): Promise<TreeItem[]> {
  const resources = await collectPages<ApiTreeResource>(
    ctx.api,
    TREE_RESOURCES,
    { id },
    (d: { phase: { resources: Connection<ApiTreeResource> } | null }) => d.phase?.resources,
  );
  return resources.map((r) => {
    const item: TreeItem = {
      ref: formatRef(r),
      group: r.group,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
      status: r.status,
      message: r.message,
    };
    if (r.children === null) return item;
    if (r.children.unknownReason !== null) return { ...item, treeUnknown: r.children.unknownReason };
    return {
      ...item,
      children: nest(r.children.items, [r.group, r.kind, r.namespace, r.name].join('/')),
      ...(r.children.omitted > 0 ? { omitted: r.children.omitted } : {}),
    };
  });
}

function nest(items: readonly ApiChild[], rootKey: string): TreeItem[] {
  const byParent = new Map<string, ApiChild[]>();
  for (const c of items) byParent.set(c.parentKey, [...(byParent.get(c.parentKey) ?? []), c]);
  // The API lists each object once, after its parent; `seen` guards against a reply that does not.
  const seen = new Set<string>();
  const build = (key: string): TreeItem[] =>
    (byParent.get(key) ?? [])
      .filter((c) => !seen.has(c.key) && seen.add(c.key))
      .map((c) => {
        const below = build(c.key);
        return {
          ref: formatRef(c),
          group: c.group,
          kind: c.kind,
          namespace: c.namespace,
          name: c.name,
          status: c.status,
          message: c.message,
          ...(below.length > 0 ? { children: below } : {}),
        };
      });
  return build(rootKey);
}

/** The tree as text: one line per object, owned objects indented under their owner. */
export function renderTree(ctx: CommandContext, trees: readonly TreeItem[]): string {
  const lines: string[] = [];
  const line = (prefix: string, item: TreeItem): string => {
    const message = item.message === '' ? '' : `  ${item.message}`;
    return `${prefix}${item.ref}  ${paintStatus(item.status, ctx.paint, ctx.decorated)}${message}`;
  };
  const walk = (items: readonly TreeItem[], indent: string): void => {
    items.forEach((item, i) => {
      const last = i === items.length - 1;
      lines.push(line(`${indent}${last ? '└─ ' : '├─ '}`, item));
      walk(item.children ?? [], `${indent}${last ? '   ' : '│  '}`);
    });
  };
  for (const root of trees) {
    lines.push(line('', root));
    walk(root.children ?? [], '');
    if (root.omitted !== undefined) lines.push(`   … ${root.omitted} more owned objects not shown`);
    if (root.treeUnknown !== undefined)
      lines.push(`   (owned objects unknown: ${UNKNOWN_TEXT[root.treeUnknown] ?? root.treeUnknown})`);
  }
  return `${lines.join('\n')}\n`;
}

/** `-o json|yaml`: the phase item with its resources, each with its children nested. */
export function renderTreeData(phase: Record<string, unknown>, trees: readonly TreeItem[], output: DataFormat): string {
  return renderData({ ...phase, resources: trees }, output);
}
