/**
 * kpt ResourceGroup inventories (`kpt.dev/v1alpha1`, kptdev/kpt `pkg/live/inventoryrg.go`).
 *
 * Phase identity: `id` is the `cli-utils.sigs.k8s.io/inventory-id` label (the Kptfile's
 * `inventoryID`), or `<namespace>/<name>` when the label is missing; `name` is the ResourceGroup's
 * name, which the user chose in the Kptfile.
 */
import { buildPhase, failParse } from './build-phase.ts';
import { INVENTORY_ID_LABEL, pickActuation } from './cli-utils.ts';
import { readGroupKindRef } from './group-kind.ts';
import { describeValue, isRecord, readIdentity } from './object-fields.ts';
import { refKey } from './ref-key.ts';
import type { EntryDetail, InventoryError, ObjectRef, PhaseParseResult } from './types.ts';

/** Parses a kpt ResourceGroup into a phase. Never throws. */
export function parseResourceGroup(obj: unknown): PhaseParseResult {
  const identity = readIdentity(obj);
  if (identity === undefined || !isRecord(obj)) {
    return failParse('MALFORMED_INVENTORY', `inventory must be a Kubernetes object, got ${describeValue(obj)}`);
  }
  if (identity.group !== 'kpt.dev' || identity.kind !== 'ResourceGroup') {
    return failParse(
      'UNSUPPORTED_OBJECT',
      `expected a kpt.dev ResourceGroup, got ${identity.apiVersion} ${identity.kind}`,
    );
  }
  const where = `ResourceGroup ${identity.namespace}/${identity.name}`;
  if (identity.name === '') return failParse('MALFORMED_INVENTORY', `${where} has no metadata.name`);
  const spec = obj.spec;
  if (spec !== undefined && spec !== null && !isRecord(spec)) {
    return failParse('MALFORMED_INVENTORY', `${where} has a spec that is ${describeValue(spec)}`);
  }
  const resources = isRecord(spec) ? spec.resources : undefined;
  if (resources !== undefined && resources !== null && !Array.isArray(resources)) {
    return failParse(
      'MALFORMED_INVENTORY',
      `${where} has spec.resources that is ${describeValue(resources)}, not a list`,
    );
  }
  const entries: ObjectRef[] = [];
  const errors: InventoryError[] = [];
  (Array.isArray(resources) ? resources : []).forEach((item: unknown, index) => {
    const ref = readGroupKindRef(item);
    if (ref === undefined) {
      errors.push({
        code: 'MALFORMED_ENTRY',
        message: `${where}: spec.resources[${index}] needs string kind and name (group and namespace may be "")`,
        entry: `spec.resources[${index}]`,
      });
    } else {
      entries.push(ref);
    }
  });
  const inventoryId = identity.labels[INVENTORY_ID_LABEL];
  return {
    ok: true,
    phase: buildPhase({
      source: 'resourcegroup',
      id: inventoryId !== undefined && inventoryId !== '' ? inventoryId : `${identity.namespace}/${identity.name}`,
      name: identity.name,
      namespace: identity.namespace,
      labels: identity.labels,
      entries,
      details: readResourceStatuses(obj.status, where, errors),
      errors,
      inventory: identity,
    }),
  };
}

/**
 * `status.resourceStatuses[]` carries the actuation data kpt recorded at apply time (and the
 * resource-group controller keeps): `{group, kind, namespace, name, strategy, actuation, reconcile}`.
 * A field that is not a string is reported on `errors` (MALFORMED_STATUS_VALUE); the others are kept.
 */
function readResourceStatuses(status: unknown, where: string, errors: InventoryError[]): Map<string, EntryDetail> {
  const details = new Map<string, EntryDetail>();
  if (!isRecord(status) || !Array.isArray(status.resourceStatuses)) return details;
  (status.resourceStatuses as unknown[]).forEach((item, index) => {
    const ref = readGroupKindRef(item);
    if (ref === undefined || !isRecord(item)) return;
    const picked = pickActuation(item);
    if (picked.malformed.length > 0)
      errors.push({
        code: 'MALFORMED_STATUS_VALUE',
        message: `${where}: status.resourceStatuses[${index}] has ${picked.malformed.join(', ')} that is not a string`,
        entry: `status.resourceStatuses[${index}]`,
      });
    details.set(refKey(ref), picked.detail);
  });
  return details;
}
