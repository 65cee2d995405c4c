/**
 * The status vocabulary shared by every part of phaselog. The six resource statuses are kstatus'
 * own (sigs.k8s.io/cli-utils `pkg/kstatus/status`), so Flux, kpt and weave-gitops users read the
 * same words here.
 */

/** kstatus status of one resource. */
export type ResourceStatus = 'Current' | 'InProgress' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';

/** All six statuses, in kstatus' declaration order plus NotFound (which kstatus' own list omits). */
export const RESOURCE_STATUSES: readonly ResourceStatus[] = [
  'InProgress',
  'Failed',
  'Current',
  'Terminating',
  'NotFound',
  'Unknown',
] as const;

export function isResourceStatus(value: unknown): value is ResourceStatus {
  return typeof value === 'string' && (RESOURCE_STATUSES as readonly string[]).includes(value);
}

/** A Kubernetes-style condition as kstatus reports it (`type,status,reason,message`). */
export interface StatusCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * Why a resource's status is Unknown. Set by the status engine (malformed object, custom health
 * error) or by the cluster-reading layer (everything about reaching the object).
 */
export type UnknownReason =
  | 'MALFORMED_OBJECT'
  | 'KIND_NOT_FOUND'
  | 'UNREACHABLE'
  | 'TIMEOUT'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'THROTTLED'
  | 'SERVER_ERROR'
  | 'HEALTH_CHECK_ERROR'
  | 'NOT_OBSERVED';

/** EMCO-style presence of a resource in its cluster. */
export type Presence = 'Present' | 'NotPresent' | 'Unknown';

/** What a user-supplied health check (Flux CEL or Argo CD Lua) said, kept verbatim for the API. */
export interface CustomHealthDetail {
  engine: 'cel' | 'lua';
  /** Where the rule came from: a file path, an argocd-cm key, or `healthChecks[3]` in config. */
  source: string;
  /** The original health value: Argo's Healthy/Progressing/... or Flux's current/inProgress/failed. */
  health: string;
  message: string;
}

/** The result of computing one resource's status. */
export interface StatusResult {
  status: ResourceStatus;
  message: string;
  /** kstatus result conditions: Reconciling=True for InProgress, Stalled=True for Failed. */
  conditions: StatusCondition[];
  /** Set when status is Unknown, or when a custom health check gave a reason (e.g. `Suspended`). */
  reason?: UnknownReason | string;
  /** Present when a custom health check decided the status. */
  customHealth?: CustomHealthDetail;
}
