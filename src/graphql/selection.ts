/**
 * Looking ahead at what a query selects below a field, so that a resolver can leave out of its read
 * what nobody asked for. Errs on the side of reading: fragments (inline and named) are followed
 * whatever their type condition, and `@skip`/`@include` are ignored, so a field that may be
 * selected counts as selected.
 */
import { Kind } from 'graphql';
import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';

/** The fields of `sets`, through fragments; undefined when a named fragment is unknown. */
function fieldsOf(
  sets: readonly SelectionSetNode[],
  info: Pick<GraphQLResolveInfo, 'fragments'>,
): FieldNode[] | undefined {
  const fields: FieldNode[] = [];
  const pending = [...sets];
  const seen = new Set<string>();
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) pending.push(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = info.fragments[selection.name.value];
        if (fragment === undefined) return undefined;
        pending.push(fragment.selectionSet);
      }
    }
  }
  return fields;
}

/**
 * Whether the query selects any field named in `names` below the field being resolved, at the end
 * of `path` (field names, e.g. `['edges', 'node']`). True when in doubt.
 */
export function selectsAnyBelow(
  info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>,
  path: readonly string[],
  names: ReadonlySet<string>,
): boolean {
  let sets = info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  for (const step of path) {
    const fields = fieldsOf(sets, info);
    if (fields === undefined) return true;
    sets = fields.filter((f) => f.name.value === step).flatMap((f) => (f.selectionSet ? [f.selectionSet] : []));
  }
  const fields = fieldsOf(sets, info);
  return fields === undefined || fields.some((f) => names.has(f.name.value));
}

/**
 * The fields named `name` selected right below the field being resolved (through fragments);
 * undefined when a named fragment is unknown.
 */
export function fieldsNamedBelow(
  info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>,
  name: string,
): FieldNode[] | undefined {
  const fields = fieldsOf(
    info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : [])),
    info,
  );
  return fields?.filter((f) => f.name.value === name);
}
