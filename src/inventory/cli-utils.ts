/**
 * cli-utils ConfigMap inventories (sigs.k8s.io/cli-utils `pkg/inventory/inventorycm.go`), as written
 * by `kapply`, older `kpt live` and airshipctl's KubernetesApply executor.
 *
 * Phase identity: `id` and `name` are both the `cli-utils.sigs.k8s.io/inventory-id` label. The
 * ConfigMap's own name is a random `inventory-<8 digits>` and carries no meaning. For airshipctl the
 * label value is the airshipctl phase name (the ConfigMap lives in `airshipit-<phase>`), so the
 * phase name here is exactly `airshipctl phase`'s name.
 */
import { buildPhase, failParse } from './build-phase.ts';
import { describeValue, isRecord, readIdentity } from './object-fields.ts';
import { parseObjMetadata } from './obj-metadata.ts';
import { refKey } from './ref-key.ts';
import type { EntryDetail, InventoryError, ObjectRef, PhaseParseResult } from './types.ts';

/** The label that marks a ConfigMap (or ResourceGroup) as an inventory and names the applied set. */
export const INVENTORY_ID_LABEL = 'cli-utils.sigs.k8s.io/inventory-id';

/** Parses a cli-utils inventory ConfigMap into a phase. Never throws. */
export function parseCliUtilsInventory(obj: unknown): PhaseParseResult {
  const identity = readIdentity(obj);
  if (identity === undefined || !isRecord(obj)) {
    return failParse('MALFORMED_INVENTORY', `inventory must be a Kubernetes object, got ${describeValue(obj)}`);
  }
  if (identity.apiVersion !== 'v1' || identity.kind !== 'ConfigMap') {
    return failParse(
      'UNSUPPORTED_OBJECT',
      `a cli-utils inventory is a v1 ConfigMap, got ${identity.apiVersion} ${identity.kind}`,
    );
  }
  const where = `ConfigMap ${identity.namespace}/${identity.name}`;
  const inventoryId = identity.labels[INVENTORY_ID_LABEL];
  if (inventoryId === undefined || inventoryId === '') {
    return failParse('MALFORMED_INVENTORY', `${where} has no ${INVENTORY_ID_LABEL} label`);
  }
  if (obj.data !== undefined && obj.data !== null && !isRecord(obj.data)) {
    return failParse('MALFORMED_INVENTORY', `${where} has data that is ${describeValue(obj.data)}, not a map`);
  }
  const entries: ObjectRef[] = [];
  const details = new Map<string, EntryDetail>();
  const errors: InventoryError[] = [];
  for (const [key, value] of Object.entries(isRecord(obj.data) ? obj.data : {})) {
    const parsed = parseObjMetadata(key);
    if (!parsed.ok) {
      errors.push({ code: 'MALFORMED_ID', message: `${where}: ${parsed.message}`, entry: key });
      continue;
    }
    entries.push(parsed.ref);
    const picked = parseStatusValue(value);
    if (picked === undefined) {
      errors.push({
        code: 'MALFORMED_STATUS_VALUE',
        message: `${where}: value of "${key}" is not "" or a JSON object of strategy/actuation/reconcile`,
        entry: key,
      });
      continue;
    }
    if (picked.malformed.length > 0) {
      errors.push({
        code: 'MALFORMED_STATUS_VALUE',
        message: `${where}: value of "${key}" has ${picked.malformed.join(', ')} that is not a string`,
        entry: key,
      });
    }
    if (!details.has(refKey(parsed.ref))) details.set(refKey(parsed.ref), picked.detail);
  }
  return {
    ok: true,
    phase: buildPhase({
      source: 'cli-utils',
      id: inventoryId,
      name: inventoryId,
      namespace: identity.namespace,
      labels: identity.labels,
      entries,
      details,
      errors,
      inventory: identity,
    }),
  };
}

/**
 * A data value is `""` (status recording off) or compact JSON of the actuation status
 * (cli-utils `pkg/apis/actuation/types.go`). `undefined` means the value is malformed.
 */
function parseStatusValue(value: unknown): PickedActuation | undefined {
  if (value === '') return { detail: {}, malformed: [] };
  if (typeof value !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  return pickActuation(parsed);
}

/** The actuation fields of an entry, and the names of those present with a value that is not a string. */
export interface PickedActuation {
  detail: EntryDetail;
  malformed: string[];
}

const ACTUATION_FIELDS = ['strategy', 'actuation', 'reconcile'] as const;

/**
 * Copies the actuation fields (`strategy`, `actuation`, `reconcile`, cli-utils
 * `pkg/apis/actuation/types.go`). A string is kept as written, even one cli-utils does not define
 * (a newer tool's value is still what it recorded); any other value is left out and named in
 * `malformed`, for the caller to report as MALFORMED_STATUS_VALUE.
 */
export function pickActuation(record: Record<string, unknown>): PickedActuation {
  const detail: EntryDetail = {};
  const malformed: string[] = [];
  for (const field of ACTUATION_FIELDS) {
    const value = record[field];
    if (typeof value === 'string') detail[field] = value;
    else if (value !== undefined && value !== null) malformed.push(field);
  }
  return { detail, malformed };
}
