/**
 * Identity of an object listed in an inventory: cli-utils' ObjMetadata (group, kind, namespace,
 * name). `group` is '' for the core group and `namespace` is '' for cluster-scoped objects.
 */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  /** API version, when the inventory records it (Flux `v`, Argo `version`). */
  version?: string;
}
