import { normalizeRefs, refKey } from './ref-key.ts';
import type { EntryDetail, InventoryError, ObjectRef, Phase, PhaseParseResult } from './types.ts';
import type { ObjectIdentity } from './object-fields.ts';

/** Fields a parser decides; the rest of the phase is derived. */
export interface PhaseDraft {
  source: Phase['source'];
  id: string;
  name: string;
  namespace: string;
  labels: Record<string, string>;
  entries: ObjectRef[];
  details?: Map<string, EntryDetail>;
  errors: InventoryError[];
  inventory?: ObjectIdentity;
  selector?: Phase['selector'];
  owner?: Phase['owner'];
}

/**
 * One copy of each group, kind and namespace string of the entries parsed: parsed phases are kept
 * from tick to tick (by watch-cache record or object version), and every entry's strings are new
 * ones cut from its inventory. Few distinct values; past {@link VOCABULARY_LIMIT} new ones are
 * kept as they come.
 */
const vocabulary = new Map<string, string>();
const VOCABULARY_LIMIT = 20_000;

function shared(value: string): string {
  const known = vocabulary.get(value);
  if (known !== undefined) return known;
  if (vocabulary.size < VOCABULARY_LIMIT) vocabulary.set(value, value);
  return value;
}

/** One frozen copy of each distinct entry detail (most entries of an inventory have the same one). */
const detailsSeen = new Map<string, EntryDetail>();

function sharedDetail(detail: EntryDetail): EntryDetail {
  const key = JSON.stringify(detail);
  const known = detailsSeen.get(key);
  if (known !== undefined) return known;
  const frozen = Object.freeze({ ...detail });
  if (detailsSeen.size < VOCABULARY_LIMIT) detailsSeen.set(key, frozen);
  return frozen;
}

/** The details of a phase none of whose entries has any (shared, so never modified). */
const NO_DETAILS: Record<string, EntryDetail> = Object.freeze({}) as Record<string, EntryDetail>;

/** Normalises entries (dedupe + sort) and keeps details only for entries that survived. */
export function buildPhase(draft: PhaseDraft): Phase {
  const entries = normalizeRefs(draft.entries);
  for (const entry of entries) {
    entry.group = shared(entry.group);
    entry.kind = shared(entry.kind);
    entry.namespace = shared(entry.namespace);
  }
  const entryDetails = detailsByPosition(entries, draft.details);
  // Most inventories have no entry details: those phases share one empty record. An object literal
  // with an accessor is a dictionary in V8 (about 400 bytes more per phase than a plain one), and
  // a worker keeps a phase per inventory from tick to tick.
  const phase: Phase =
    entryDetails === undefined
      ? { source: draft.source, id: draft.id, name: draft.name, namespace: draft.namespace, labels: draft.labels, entries, details: NO_DETAILS, errors: draft.errors }
      : {
          source: draft.source,
          id: draft.id,
          name: draft.name,
          namespace: draft.namespace,
          labels: draft.labels,
          entries,
          // Built on read: nothing in a worker reads details, and a record keyed by each entry's key
          // would cost memory for every entry of every phase kept from tick to tick.
          get details(): Record<string, EntryDetail> {
            return detailsRecord(entries, entryDetails);
          },
          set details(value: Record<string, EntryDetail>) {
            Object.defineProperty(this, 'details', { value, writable: true, enumerable: true, configurable: true });
          },
          errors: draft.errors,
        };
  if (draft.inventory !== undefined) {
    const inv = draft.inventory;
    phase.inventoryRef = { group: inv.group, kind: inv.kind, namespace: inv.namespace, name: inv.name };
  }
  if (draft.selector !== undefined) phase.selector = draft.selector;
  if (draft.owner !== undefined) phase.owner = draft.owner;
  return phase;
}

/** Each entry's non-empty detail (shared), by position in `entries`; `undefined` when none has one. */
function detailsByPosition(entries: readonly ObjectRef[], details: ReadonlyMap<string, EntryDetail> | undefined): (EntryDetail | undefined)[] | undefined {
  if (details === undefined || details.size === 0) return undefined;
  let byPosition: (EntryDetail | undefined)[] | undefined;
  entries.forEach((entry, index) => {
    const detail = details.get(refKey(entry));
    if (detail === undefined || Object.keys(detail).length === 0) return;
    byPosition ??= new Array<EntryDetail | undefined>(entries.length).fill(undefined);
    byPosition[index] = sharedDetail(detail);
  });
  return byPosition;
}

/** {@link Phase.details} of entries and their details by position. */
function detailsRecord(entries: readonly ObjectRef[], byPosition: readonly (EntryDetail | undefined)[] | undefined): Record<string, EntryDetail> {
  const record: Record<string, EntryDetail> = {};
  if (byPosition === undefined) return record;
  entries.forEach((entry, index) => {
    const detail = byPosition[index];
    if (detail !== undefined) record[refKey(entry)] = detail;
  });
  return record;
}

/** A whole-object failure as a parse result. */
export function failParse(code: InventoryError['code'], message: string): PhaseParseResult {
  return { ok: false, error: { code, message } };
}
