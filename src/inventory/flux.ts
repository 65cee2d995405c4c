/**
 * Flux inventories: `.status.inventory.entries[] {id, v}` of Kustomizations
 * (kustomize-controller `api/v1/inventory_types.go`) and HelmReleases (helm-controller
 * `api/v2/inventory_types.go`). `id` is an ObjMetadata string, `v` the API version only.
 *
 * Phase identity: `id` is `<Kind>/<namespace>/<name>` (Flux itself identifies the owner by the
 * `kustomize.toolkit.fluxcd.io/name` + `/namespace` labels it stamps on applied objects); `name` is
 * the object's name. A Flux object that has not applied anything yet has no inventory: that is an
 * empty phase, not an error.
 */
import { buildPhase, failParse } from './build-phase.ts';
import { describeValue, isRecord, readIdentity } from './object-fields.ts';
import { parseObjMetadata } from './obj-metadata.ts';
import type { InventoryError, ObjectRef, PhaseParseResult } from './types.ts';

/** The Flux kinds that carry an inventory, by API group. */
export const FLUX_INVENTORY_KINDS: ReadonlyArray<{ group: string; kind: string }> = [
  { group: 'kustomize.toolkit.fluxcd.io', kind: 'Kustomization' },
  { group: 'helm.toolkit.fluxcd.io', kind: 'HelmRelease' },
];

/** True when the group/kind is a Flux Kustomization or HelmRelease. */
export function isFluxInventoryKind(group: string, kind: string): boolean {
  return FLUX_INVENTORY_KINDS.some((gk) => gk.group === group && gk.kind === kind);
}

/** Parses a Flux Kustomization or HelmRelease into a phase. Never throws. */
export function parseFluxInventory(obj: unknown): PhaseParseResult {
  const identity = readIdentity(obj);
  if (identity === undefined || !isRecord(obj)) {
    return failParse('MALFORMED_INVENTORY', `inventory must be a Kubernetes object, got ${describeValue(obj)}`);
  }
  if (!isFluxInventoryKind(identity.group, identity.kind)) {
    return failParse(
      'UNSUPPORTED_OBJECT',
      `expected a Flux Kustomization or HelmRelease, got ${identity.apiVersion} ${identity.kind}`,
    );
  }
  const where = `${identity.kind} ${identity.namespace}/${identity.name}`;
  if (identity.name === '') return failParse('MALFORMED_INVENTORY', `${where} has no metadata.name`);
  const inventory = isRecord(obj.status) ? obj.status.inventory : undefined;
  if (inventory !== undefined && inventory !== null && !isRecord(inventory)) {
    return failParse('MALFORMED_INVENTORY', `${where} has status.inventory that is ${describeValue(inventory)}`);
  }
  const rawEntries = isRecord(inventory) ? inventory.entries : undefined;
  if (rawEntries !== undefined && rawEntries !== null && !Array.isArray(rawEntries)) {
    return failParse(
      'MALFORMED_INVENTORY',
      `${where} has status.inventory.entries that is ${describeValue(rawEntries)}, not a list`,
    );
  }
  const entries: ObjectRef[] = [];
  const errors: InventoryError[] = [];
  (Array.isArray(rawEntries) ? rawEntries : []).forEach((item: unknown, index) => {
    const id = isRecord(item) ? item.id : undefined;
    if (typeof id !== 'string') {
      errors.push({
        code: 'MALFORMED_ENTRY',
        message: `${where}: status.inventory.entries[${index}] has no string id`,
        entry: `entries[${index}]`,
      });
      return;
    }
    const parsed = parseObjMetadata(id);
    if (!parsed.ok) {
      errors.push({ code: 'MALFORMED_ID', message: `${where}: ${parsed.message}`, entry: id });
      return;
    }
    const version = isRecord(item) && typeof item.v === 'string' && item.v !== '' ? item.v : undefined;
    entries.push(version === undefined ? parsed.ref : { ...parsed.ref, version });
  });
  return {
    ok: true,
    phase: buildPhase({
      source: 'flux',
      id: `${identity.kind}/${identity.namespace}/${identity.name}`,
      name: identity.name,
      namespace: identity.namespace,
      labels: identity.labels,
      entries,
      errors,
      inventory: identity,
    }),
  };
}
