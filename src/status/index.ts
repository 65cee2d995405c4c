/**
 * phaselog's status engine: a faithful port of kstatus (cli-utils `pkg/kstatus`), its aggregate
 * rule, and phase summaries. Pure: no I/O, no clock, never throws on object input.
 */
export { computeStatus } from './compute.ts';
export type { ComputeStatusOptions, CustomHealthHook } from './compute.ts';
export { applyPodRule, selectPods } from './pods.ts';
export { findRecheckTime } from './recheck.ts';
export { aggregateStatus } from './aggregate.ts';
export { describeRef, summarizePhase } from './phase-summary.ts';
export { severityOf, STATUSES_BY_SEVERITY } from './severity.ts';
export { dependsOnPodsOrTime, isPodAwareKind, isPodKind, POD_AWARE_KINDS } from './pod-aware.ts';
export type {
  ImportantMember,
  MemberRef,
  PhaseCondition,
  PhaseMember,
  PhaseSummary,
  SummarizePhaseOptions,
} from './phase-summary.ts';
export { augmentConditions } from './augment.ts';
export type { AugmentOutcome } from './augment.ts';
export { failed, inProgress, malformedStatus, notFoundStatus, presenceOf, unknownStatus } from './result.ts';
export { readIntField, readStringField } from './read.ts';
export { parseLabelSelector } from './selector.ts';
export type { SelectorParse } from './selector.ts';
export { SCHEDULE_WINDOW_MS } from './rules/pod.ts';
export { isResourceStatus, RESOURCE_STATUSES } from './types.ts';
export type {
  CustomHealthDetail,
  Presence,
  ResourceStatus,
  StatusCondition,
  StatusResult,
  UnknownReason,
} from './types.ts';
