/** phaselog's history core: observations diffed into intervals and status changes, redaction, hashing. Pure. */
export * from './types.ts';
export { canonicalJson, hashDocument, hashStrings } from './canonical-hash.ts';
export { hashRedacted, LAST_APPLIED_ANNOTATION, redactObject } from './redact.ts';
export type { RedactionOptions } from './redact.ts';
export { isVisibleChange } from './fingerprints.ts';
export {
  formatConditionTime,
  messageDetail,
  phaseDetail,
  resourceDetail,
  withConditionTimes,
} from './status-detail.ts';
export type { StatusDetailDoc } from './status-detail.ts';
export { hashObservation, phaseKey, planSnapshot, planUnchangedTick } from './plan-snapshot.ts';
export type {
  OpenedResource,
  PhaseIntervalInput,
  PhaseWrite,
  PlannedChange,
  ResourceIntervalRef,
  SnapshotPlan,
} from './plan-snapshot.ts';
