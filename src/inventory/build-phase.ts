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
  errors: readonly InventoryError[];
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

/**
 * The errors of a phase without any (shared and frozen: most phases have none, and an array each
 * would be kept from tick to tick). A phase's errors are replaced, never added to.
 */
const NO_ERRORS: readonly InventoryError[] = Object.freeze([]);

/** Where a phase whose entries carry details keeps them (not enumerable: not part of the phase's value). */
const ENTRY_DETAILS = Symbol('entryDetails');

/**
 * Entry details by position, or the one detail every entry has: tools record the same detail for
 * all entries of most inventories, and an array per phase would be kept from tick to tick.
 */
type KeptDetails = readonly (EntryDetail | undefined)[] | EntryDetail;

interface WithEntryDetails {
  entries: readonly ObjectRef[];
  [ENTRY_DETAILS]?: KeptDetails;
}

/**
 * `details` of a phase whose entries carry some: built on read, since nothing in a worker reads
 * details, and a record keyed by each entry's key would cost memory for every entry of every phase
 * kept from tick to tick. One getter and setter for all such phases: an accessor made per object
 * gives each its own hidden class (V8 turns the object into a dictionary, ~450 bytes more per phase).
 */
const DETAILS_ACCESSOR: PropertyDescriptor = {
  get(this: WithEntryDetails): Record<string, EntryDetail> {
    return detailsRecord(this.entries, this[ENTRY_DETAILS]);
  },
  set(this: object, value: Record<string, EntryDetail>) {
    Object.defineProperty(this, 'details', { value, writable: true, enumerable: true, configurable: true });
  },
  enumerable: true,
  configurable: true,
};

/** Normalises entries (dedupe + sort) and keeps details only for entries that survived. */
export function buildPhase(draft: PhaseDraft): Phase {
  const entries = normalizeRefs(draft.entries);
  for (const entry of entries) {
    entry.group = shared(entry.group);
    entry.kind = shared(entry.kind);
    entry.namespace = shared(entry.namespace);
  }
  const entryDetails = detailsByPosition(entries, draft.details);
  let phase: Phase;
  if (entryDetails === undefined) {
    // Most inventories have no entry details: those phases share one empty record.
    phase = {
      source: draft.source,
      id: draft.id,
      name: draft.name,
      namespace: draft.namespace,
      labels: draft.labels,
      entries,
      details: NO_DETAILS,
      errors: errorsOf(draft),
    };
  } else {
    // Properties added in one order, the accessor as a new property (redefining an existing one
    // would turn the object into a dictionary), so all such phases share one hidden class.
    const partial: Omit<Phase, 'details' | 'errors'> = {
      source: draft.source,
      id: draft.id,
      name: draft.name,
      namespace: draft.namespace,
      labels: draft.labels,
      entries,
    };
    Object.defineProperty(partial, 'details', DETAILS_ACCESSOR);
    phase = partial as Phase;
    phase.errors = errorsOf(draft);
    Object.defineProperty(phase, ENTRY_DETAILS, { value: entryDetails });
  }
  if (draft.inventory !== undefined) {
    const inv = draft.inventory;
    phase.inventoryRef = { group: inv.group, kind: inv.kind, namespace: inv.namespace, name: inv.name };
  }
  if (draft.selector !== undefined) phase.selector = draft.selector;
  if (draft.owner !== undefined) phase.owner = draft.owner;
  return phase;
}

function errorsOf(draft: PhaseDraft): readonly InventoryError[] {
  return draft.errors.length === 0 ? NO_ERRORS : draft.errors;
}

/**
 * Each entry's non-empty detail (shared), by position in `entries`, or the one detail all entries
 * have; `undefined` when none has one.
 */
function detailsByPosition(
  entries: readonly ObjectRef[],
  details: ReadonlyMap<string, EntryDetail> | undefined,
): KeptDetails | undefined {
  if (details === undefined || details.size === 0) return undefined;
  let byPosition: (EntryDetail | undefined)[] | undefined;
  entries.forEach((entry, index) => {
    const detail = details.get(refKey(entry));
    if (detail === undefined || Object.keys(detail).length === 0) return;
    byPosition ??= new Array<EntryDetail | undefined>(entries.length).fill(undefined);
    byPosition[index] = sharedDetail(detail);
  });
  const first = byPosition?.[0];
  // Shared details are one object per distinct value, so one value means one object.
  return first !== undefined && byPosition?.every((d) => d === first) === true ? first : byPosition;
}

/**
 * The detail the tool recorded for the phase's `index`-th entry, without building the whole
 * {@link Phase.details} record (a snapshot asks for each entry of every phase on every tick).
 */
export function entryDetailAt(phase: Phase, index: number): EntryDetail | undefined {
  // The kept details first: reading `details` of such a phase builds the whole record.
  const kept = (phase as unknown as WithEntryDetails)[ENTRY_DETAILS];
  if (kept !== undefined)
    return Array.isArray(kept) ? (kept as readonly (EntryDetail | undefined)[])[index] : (kept as EntryDetail);
  if (phase.details === NO_DETAILS) return undefined;
  // A phase not made by buildPhase: its record, by the entry's key.
  const entry = phase.entries[index];
  return entry === undefined ? undefined : phase.details[refKey(entry)];
}

/** {@link Phase.details} of entries and their kept details. */
function detailsRecord(entries: readonly ObjectRef[], kept: KeptDetails | undefined): Record<string, EntryDetail> {
  const record: Record<string, EntryDetail> = {};
  if (kept === undefined) return record;
  entries.forEach((entry, index) => {
    const detail = Array.isArray(kept) ? (kept as readonly (EntryDetail | undefined)[])[index] : (kept as EntryDetail);
    if (detail !== undefined) record[refKey(entry)] = detail;
  });
  return record;
}

/** A whole-object failure as a parse result. */
export function failParse(code: InventoryError['code'], message: string): PhaseParseResult {
  return { ok: false, error: { code, message } };
}
