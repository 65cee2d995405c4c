/**
 * How phaselog names an object to people, in the CLI and the web UI alike:
 * `[group/]Kind/namespace/name`, a core-group object without the empty group and a cluster-scoped
 * one without the empty namespace (`apps/Deployment/shop/web`, `Pod/shop/web-0`, `Namespace/shop`).
 * Pure, so the browser bundle can share it.
 */

export interface ObjectRefParts {
  group?: string | null;
  kind: string;
  namespace?: string | null;
  name: string;
}

export function formatRef(ref: ObjectRefParts): string {
  return `${ref.group ? `${ref.group}/` : ''}${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

/**
 * A stored resource key (`group/Kind/namespace/name`, group and namespace possibly empty) in the ref
 * format. Keys are split from the left: the name is the rest.
 */
export function formatResourceKey(key: string): string {
  const [group = '', kind = '', namespace = '', ...name] = key.split('/');
  if (name.length === 0) return key;
  return formatRef({ group, kind, namespace, name: name.join('/') });
}
