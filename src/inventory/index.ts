/** Phase inventories: pure parsers from every supported format to one normalised {@link Phase}. */
export * from './types.ts';
export { formatObjMetadata, parseObjMetadata, isRbacKind } from './obj-metadata.ts';
export type { ObjMetadataParseResult, ParseObjMetadataOptions } from './obj-metadata.ts';
export { refKey, compareRefs, normalizeRefs } from './ref-key.ts';
export { parseCliUtilsInventory, INVENTORY_ID_LABEL } from './cli-utils.ts';
export { parseResourceGroup } from './resource-group.ts';
export { parseFluxInventory, isFluxInventoryKind, FLUX_INVENTORY_KINDS } from './flux.ts';
export { parseArgoApplication } from './argocd.ts';
export { parseSelectorPhase, selectEntries, matchesSelector } from './selector.ts';
export { readGroupKind, readGroupKindRef } from './group-kind.ts';
export { parseConfigPhase } from './config-phase.ts';
export { detectPhaseSource, parseInventory, mergePhases } from './parse-inventory.ts';
export { entryDetailAt } from './build-phase.ts';
