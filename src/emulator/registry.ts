/**
 * Which resource types are served, looked up the ways requests need: by URL (group, version,
 * plural or short forms) and by object (apiVersion + kind).
 */
import { listBuiltinTypes, typeKey, type ResourceType } from './catalog.ts';

/** Mutable set of served types. */
export class TypeRegistry {
  private readonly byKey = new Map<string, ResourceType>();
  private readonly byKind = new Map<string, ResourceType>();

  constructor() {
    for (const t of listBuiltinTypes()) this.add(t);
  }

  /** Serves a type (replacing one with the same group + plural). */
  add(type: ResourceType): void {
    const existing = this.byKey.get(typeKey(type.group, type.plural));
    if (existing) this.byKind.delete(`${existing.group}/${existing.kind}`);
    this.byKey.set(typeKey(type.group, type.plural), type);
    this.byKind.set(`${type.group}/${type.kind}`, type);
  }

  /** Stops serving a custom type. Built-in types cannot be removed. */
  removeCustom(group: string, plural: string): void {
    const t = this.byKey.get(typeKey(group, plural));
    if (!t || !t.custom) return;
    this.byKey.delete(typeKey(group, plural));
    this.byKind.delete(`${group}/${t.kind}`);
  }

  /** Type served at `/<group>/<version>/<plural>`, if any. */
  findByResource(group: string, version: string, plural: string): ResourceType | undefined {
    const t = this.byKey.get(typeKey(group, plural));
    return t && t.versions.includes(version) ? t : undefined;
  }

  /** Type of objects with this group and kind, served at `version` when given. */
  findByKind(group: string, kind: string, version?: string): ResourceType | undefined {
    const t = this.byKind.get(`${group}/${kind}`);
    if (!t) return undefined;
    return version === undefined || t.versions.includes(version) ? t : undefined;
  }

  /** All served types. */
  list(): ResourceType[] {
    return [...this.byKey.values()];
  }

  /** Groups with their versions, core ('') first, then in registration order. */
  listGroups(): { group: string; versions: string[] }[] {
    const groups = new Map<string, Set<string>>();
    for (const t of this.byKey.values()) {
      const set = groups.get(t.group) ?? new Set<string>();
      for (const v of t.versions) set.add(v);
      groups.set(t.group, set);
    }
    return [...groups.entries()].map(([group, versions]) => ({ group, versions: [...versions] }));
  }
}
