/** One entry point for every inventory format: detect the source, then parse. */
import { failParse, buildPhase } from './build-phase.ts';
import { INVENTORY_ID_LABEL, parseCliUtilsInventory } from './cli-utils.ts';
import { parseConfigPhase } from './config-phase.ts';
import { isFluxInventoryKind, parseFluxInventory } from './flux.ts';
import { parseArgoApplication } from './argocd.ts';
import { describeValue, isRecord, readIdentity, type JsonRecord } from './object-fields.ts';
import {
  readArgoHolder,
  readCliUtilsHolder,
  readFluxHolder,
  readResourceGroupHolder,
  type AppliedEntry,
  type HolderReading,
} from './holder.ts';
import { refKey } from './ref-key.ts';
import { parseResourceGroup } from './resource-group.ts';
import { parseSelectorPhase } from './selector.ts';
import type { EntryDetail, Phase, PhaseParseResult, PhaseSource } from './types.ts';

/**
 * Says which inventory format an object is, or `undefined` when it is none. Cluster objects are
 * recognised by apiVersion/kind (and the inventory-id label for ConfigMaps); config declarations
 * have no apiVersion and are recognised by `selector` or `resources`.
 */
export function detectPhaseSource(obj: unknown): Exclude<PhaseSource, 'owner'> | undefined {
  const identity = readIdentity(obj);
  if (identity === undefined || !isRecord(obj)) return undefined;
  if (identity.apiVersion === '' && identity.kind === '') {
    if (obj.selector !== undefined) return 'selector';
    if (obj.resources !== undefined) return 'config';
    return undefined;
  }
  if (identity.apiVersion === 'v1' && identity.kind === 'ConfigMap') {
    return identity.labels[INVENTORY_ID_LABEL] !== undefined ? 'cli-utils' : undefined;
  }
  if (identity.group === 'kpt.dev' && identity.kind === 'ResourceGroup') return 'resourcegroup';
  if (isFluxInventoryKind(identity.group, identity.kind)) return 'flux';
  if (identity.group === 'argoproj.io' && identity.kind === 'Application') return 'argocd';
  return undefined;
}

// Owner phases are not parsed from one object: they are built from an owner and what it owns.
const PARSERS: Record<Exclude<PhaseSource, 'owner'>, (obj: unknown) => PhaseParseResult> = {
  'cli-utils': parseCliUtilsInventory,
  resourcegroup: parseResourceGroup,
  flux: parseFluxInventory,
  argocd: parseArgoApplication,
  selector: parseSelectorPhase,
  config: parseConfigPhase,
};

/** Parses any supported inventory object or config declaration into a phase. Never throws. */
export function parseInventory(obj: unknown): PhaseParseResult {
  if (!isRecord(obj)) return failParse('MALFORMED_INVENTORY', `inventory must be an object, got ${describeValue(obj)}`);
  const source = detectPhaseSource(obj);
  if (source === undefined) {
    const identity = readIdentity(obj);
    const what =
      identity === undefined
        ? describeValue(obj)
        : `${identity.apiVersion || '(no apiVersion)'} ${identity.kind || '(no kind)'} ${identity.namespace}/${identity.name}`;
    return failParse('UNSUPPORTED_OBJECT', `not an inventory phaselog understands: ${what}`);
  }
  const parsed = PARSERS[source](obj);
  if (parsed.ok) {
    const holder = readHolder(source, obj, parsed.phase);
    if (holder !== undefined) parsed.phase.holder = holder;
  }
  return parsed;
}

/** The entries of a phase with what the applier recorded of each. */
export function appliedEntries(phase: Phase): AppliedEntry[] {
  const details = phase.details;
  return phase.entries.flatMap((ref) => {
    const detail = details[refKey(ref)];
    return detail === undefined ? [] : [{ ref, detail }];
  });
}

/** What the object holding a phase's inventory says (see src/inventory/holder.ts). */
function readHolder(source: PhaseSource, obj: JsonRecord, phase: Phase): HolderReading | undefined {
  const identity = readIdentity(obj);
  if (identity === undefined) return undefined;
  const holder = `${identity.kind} ${identity.namespace === '' ? '' : `${identity.namespace}/`}${identity.name}`;
  switch (source) {
    case 'flux':
      return readFluxHolder(obj, holder);
    case 'argocd':
      return readArgoHolder(obj, holder);
    case 'resourcegroup':
      return readResourceGroupHolder(obj, appliedEntries(phase), holder);
    case 'cli-utils':
      return readCliUtilsHolder(appliedEntries(phase), holder);
    default:
      return undefined;
  }
}

/**
 * Merges phases that share source and id into one, as cli-utils' label strategy merges every
 * ConfigMap carrying the same inventory-id. Order of the result follows first appearance.
 */
export function mergePhases(phases: readonly Phase[]): Phase[] {
  const merged = new Map<string, Phase>();
  for (const phase of phases) {
    const key = `${phase.source}\u0000${phase.id}`;
    const seen = merged.get(key);
    if (seen === undefined) {
      merged.set(key, phase);
      continue;
    }
    const details = new Map<string, EntryDetail>(Object.entries({ ...phase.details, ...seen.details }));
    const combined = buildPhase({
      ...seen,
      entries: [...seen.entries, ...phase.entries],
      details,
      errors: [...seen.errors, ...phase.errors],
    });
    if (seen.inventoryRef !== undefined) combined.inventoryRef = seen.inventoryRef;
    // The applier's verdict is over every merged object's entries.
    const holder =
      seen.holder !== undefined || phase.holder !== undefined
        ? readCliUtilsHolder(
            appliedEntries(combined),
            seen.inventoryRef === undefined
              ? `ConfigMap ${combined.name}`
              : `ConfigMap ${seen.inventoryRef.namespace}/${seen.inventoryRef.name}`,
          )
        : undefined;
    if (holder !== undefined) combined.holder = holder;
    merged.set(key, combined);
  }
  return [...merged.values()];
}
