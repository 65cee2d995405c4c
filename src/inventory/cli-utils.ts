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
    const detail = parseStatusValue(value);
    if (detail === undefined) {
      errors.push({
        code: 'MALFORMED_STATUS_VALUE',
        message: `${where}: value of "${key}" is not "" or a JSON object of strategy/actuation/reconcile`,
        entry: key,
      });
    } else if (!details.has(refKey(parsed.ref))) {
      details.set(refKey(parsed.ref), detail);
    }
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
function parseStatusValue(value: unknown): EntryDetail | undefined {
  if (value === '') return {};
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

/** Copies the string-valued actuation fields (`strategy`, `actuation`, `reconcile`). */
export function pickActuation(record: Record<string, unknown>): EntryDetail {
  const detail: EntryDetail = {};
  if (typeof record.strategy === 'string') detail.strategy = record.strategy;
  if (typeof record.actuation === 'string') detail.actuation = record.actuation;
  if (typeof record.reconcile === 'string') detail.reconcile = record.reconcile;
  return detail;
}
