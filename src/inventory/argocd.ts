/**
 * Argo CD Applications (`argoproj.io/v1alpha1`): `.status.resources[]` lists every resource the
 * application manages, with `group` and `namespace` omitted for the core group and cluster-scoped
 * objects (argo-cd `pkg/apis/application/v1alpha1/types.go`, `ResourceStatus`).
 *
 * Phase identity: `id` is `<namespace>/<name>` of the Application, `name` its name. Hook resources
 * are kept as entries with `details[key].hook = true`, so a status layer can leave them out of the
 * aggregate the way Argo CD does.
 */
import { buildPhase, failParse } from './build-phase.ts';
import { describeValue, isRecord, readIdentity } from './object-fields.ts';
import { readGroupKindRef } from './group-kind.ts';
import { refKey } from './ref-key.ts';
import type { EntryDetail, InventoryError, ObjectRef, PhaseParseResult } from './types.ts';

/** Parses an Argo CD Application into a phase. Never throws. */
export function parseArgoApplication(obj: unknown): PhaseParseResult {
  const identity = readIdentity(obj);
  if (identity === undefined || !isRecord(obj)) {
    return failParse('MALFORMED_INVENTORY', `inventory must be a Kubernetes object, got ${describeValue(obj)}`);
  }
  if (identity.group !== 'argoproj.io' || identity.kind !== 'Application') {
    return failParse(
      'UNSUPPORTED_OBJECT',
      `expected an argoproj.io Application, got ${identity.apiVersion} ${identity.kind}`,
    );
  }
  const where = `Application ${identity.namespace}/${identity.name}`;
  if (identity.name === '') return failParse('MALFORMED_INVENTORY', `${where} has no metadata.name`);
  const resources = isRecord(obj.status) ? obj.status.resources : undefined;
  if (resources !== undefined && resources !== null && !Array.isArray(resources)) {
    return failParse(
      'MALFORMED_INVENTORY',
      `${where} has status.resources that is ${describeValue(resources)}, not a list`,
    );
  }
  const entries: ObjectRef[] = [];
  const details = new Map<string, EntryDetail>();
  const errors: InventoryError[] = [];
  (Array.isArray(resources) ? resources : []).forEach((item: unknown, index) => {
    const ref = readGroupKindRef(item);
    if (ref === undefined || !isRecord(item)) {
      errors.push({
        code: 'MALFORMED_ENTRY',
        message: `${where}: status.resources[${index}] needs string kind and name`,
        entry: `status.resources[${index}]`,
      });
      return;
    }
    const version = typeof item.version === 'string' && item.version !== '' ? item.version : undefined;
    entries.push(version === undefined ? ref : { ...ref, version });
    const detail: EntryDetail = {};
    if (typeof item.status === 'string') detail.syncStatus = item.status;
    else if (item.status !== undefined && item.status !== null)
      errors.push({
        code: 'MALFORMED_STATUS_VALUE',
        message: `${where}: status.resources[${index}].status (the sync status) is ${describeValue(item.status)}, not a string`,
        entry: `status.resources[${index}]`,
      });
    if (item.hook === true) detail.hook = true;
    if (!details.has(refKey(ref))) details.set(refKey(ref), detail);
  });
  return {
    ok: true,
    phase: buildPhase({
      source: 'argocd',
      id: `${identity.namespace}/${identity.name}`,
      name: identity.name,
      namespace: identity.namespace,
      labels: identity.labels,
      entries,
      details,
      errors,
      inventory: identity,
    }),
  };
}
