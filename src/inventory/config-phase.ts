/**
 * Phases declared as plain lists in config: `{ name, namespace?, labels?, resources: [...] }`, each
 * resource an ObjMetadata string (`shop_frontend_apps_Deployment`) or `{group?, kind, namespace?,
 * name, version?}`. Bad entries become phase errors; the good ones are kept.
 *
 * Phase identity: `id` and `name` are the declared `name`.
 */
import { buildPhase, failParse } from './build-phase.ts';
import { describeValue, isRecord, readString, readStringMap } from './object-fields.ts';
import { parseObjMetadata } from './obj-metadata.ts';
import { readGroupKindRef } from './group-kind.ts';
import type { InventoryError, ObjectRef, PhaseParseResult } from './types.ts';

/** Parses a config-declared phase. Never throws. */
export function parseConfigPhase(def: unknown): PhaseParseResult {
  if (!isRecord(def))
    return failParse('MALFORMED_INVENTORY', `config phase must be an object, got ${describeValue(def)}`);
  const name = readString(def.name);
  if (name === '') return failParse('MALFORMED_INVENTORY', 'config phase needs a non-empty name');
  if (!Array.isArray(def.resources)) {
    return failParse(
      'MALFORMED_INVENTORY',
      `config phase "${name}": resources must be a list, got ${describeValue(def.resources)}`,
    );
  }
  const entries: ObjectRef[] = [];
  const errors: InventoryError[] = [];
  (def.resources as unknown[]).forEach((item, index) => {
    if (typeof item === 'string') {
      const parsed = parseObjMetadata(item);
      if (parsed.ok) entries.push(parsed.ref);
      else errors.push({ code: 'MALFORMED_ID', message: `config phase "${name}": ${parsed.message}`, entry: item });
      return;
    }
    const ref = readGroupKindRef(item);
    if (ref === undefined || !isRecord(item)) {
      errors.push({
        code: 'MALFORMED_ENTRY',
        message: `config phase "${name}": resources[${index}] needs string kind and name`,
        entry: `resources[${index}]`,
      });
      return;
    }
    entries.push(typeof item.version === 'string' && item.version !== '' ? { ...ref, version: item.version } : ref);
  });
  return {
    ok: true,
    phase: buildPhase({
      source: 'config',
      id: name,
      name,
      namespace: readString(def.namespace),
      labels: readStringMap(def.labels),
      entries,
      errors,
    }),
  };
}
