/**
 * Reads owner phases from a cluster (see src/inventory/owner-phase.ts): one paginated LIST of each
 * owner kind, then one LIST of each owned kind per namespace that holds owners (ownerReferences
 * never cross namespaces, so nothing elsewhere can join), all namespaces when an owner is
 * cluster-scoped. Listed, not read from the watch caches: their views keep neither uids nor
 * ownerReferences. A kind that cannot be listed is data: an owner kind's error is returned, an
 * owned kind's becomes an error of each phase it could have joined.
 */
import { buildOwnerPhases, type OwnerKindSpec, type OwnerPhase } from '../inventory/owner-phase.ts';
import type { GroupKind, InventoryError } from '../inventory/types.ts';
import type { ClusterClient } from './cluster-client.ts';
import { collectionPath, isKubeError } from './discovery.ts';
import type { KubeError } from './errors.ts';
import { listCollection } from './list-collection.ts';
import type { KindReadError } from './read-objects.ts';
import { slimObject, type KubeObject } from './slim.ts';

/** What reading the owner phases of a cluster found. */
export interface ReadOwnerPhasesResult {
  phases: OwnerPhase[];
  /** Owner kinds that could not be listed (a kind the cluster does not serve is no error: no phases). */
  errors: KindReadError[];
}

/** Lists `kind` in each of `namespaces` (`undefined`: all of them). */
async function listKind(
  cluster: ClusterClient,
  kind: GroupKind,
  namespaces: readonly (string | undefined)[],
  pageSize: number | undefined,
): Promise<{ objects: KubeObject[]; error?: KubeError; served: boolean }> {
  const resolved = await cluster.discovery.resolve(kind.group, kind.kind);
  if (isKubeError(resolved))
    return resolved.kind === 'KIND_NOT_FOUND'
      ? { objects: [], served: false }
      : { objects: [], error: resolved, served: false };
  const apiVersion = resolved.group === '' ? resolved.version : `${resolved.group}/${resolved.version}`;
  const objects: KubeObject[] = [];
  for (const namespace of resolved.namespaced ? namespaces : [undefined]) {
    const batch: KubeObject[] = [];
    const outcome = await listCollection(
      cluster.transport,
      collectionPath(resolved, namespace),
      { apiVersion, kind: resolved.kind, ...(pageSize !== undefined ? { pageSize } : {}) },
      (item) => batch.push(slimObject(item)),
      () => batch.splice(0),
    );
    if (!outcome.ok) return { objects, error: outcome.error, served: true };
    objects.push(...batch);
  }
  return { objects, served: true };
}

function namespaceOf(object: KubeObject): string {
  const meta = object.metadata as { namespace?: unknown } | undefined;
  return typeof meta?.namespace === 'string' ? meta.namespace : '';
}

/** Reads every owner phase of `specs` in `cluster`. Never throws. */
export async function readOwnerPhases(
  cluster: ClusterClient,
  specs: readonly OwnerKindSpec[],
  options: { pageSize?: number } = {},
): Promise<ReadOwnerPhasesResult> {
  const result: ReadOwnerPhasesResult = { phases: [], errors: [] };
  for (const spec of specs) {
    const owners = await listKind(cluster, spec.kind, [undefined], options.pageSize);
    if (owners.error !== undefined) {
      result.errors.push({ group: spec.kind.group, kind: spec.kind.kind, error: owners.error, refs: [] });
      continue;
    }
    if (owners.objects.length === 0) continue;
    const clusterScoped = owners.objects.some((o) => namespaceOf(o) === '');
    const namespaces = clusterScoped ? [undefined] : [...new Set(owners.objects.map(namespaceOf))].sort();
    const owned: KubeObject[] = [];
    const unread: InventoryError[] = [];
    for (const kind of spec.ownedKinds) {
      const listed = await listKind(cluster, kind, namespaces, options.pageSize);
      owned.push(...listed.objects);
      if (listed.error !== undefined) {
        const name = `${kind.group === '' ? '' : `${kind.group}/`}${kind.kind}`;
        unread.push({
          code: 'OWNED_READ_FAILED',
          message: `cannot list ${name} to find what the owner owns: ${listed.error.kind}: ${listed.error.message}`,
          entry: name,
        });
      }
    }
    for (const built of buildOwnerPhases(spec, owners.objects, owned)) {
      if (unread.length > 0) built.phase.errors = [...built.phase.errors, ...unread];
      result.phases.push(built);
    }
  }
  result.phases = keepFirstByName(result.phases);
  return result;
}

/**
 * Owner phases are named by their owner's namespace and name, so objects of two owner kinds with the
 * same namespace and name would be one phase: the first kind in `phases.owners` keeps the name, and
 * its phase says which owner was left out (recording both would write one phase twice).
 */
function keepFirstByName(phases: readonly OwnerPhase[]): OwnerPhase[] {
  const kept = new Map<string, OwnerPhase>();
  for (const candidate of phases) {
    const key = `${candidate.phase.namespace}/${candidate.phase.name}`;
    const first = kept.get(key);
    if (first === undefined) {
      kept.set(key, candidate);
      continue;
    }
    const owner = candidate.phase.owner?.kind;
    const name = `${owner?.group === '' ? '' : `${owner?.group ?? ''}/`}${owner?.kind ?? ''} ${key}`;
    first.phase.errors = [
      ...first.phase.errors,
      {
        code: 'OWNER_NAME_TAKEN',
        message: `${name} is an owner too but its phase would have this phase's name, so it is not recorded: rename one of them`,
        entry: name,
      },
    ];
  }
  return [...kept.values()];
}
