import type { CustomHealthDetail, ResourceStatus, StatusCondition, StatusResult } from '../types.ts';

/** Argo CD health codes (gitops-engine `pkg/health.HealthStatusCode`). */
export type ArgoHealthStatus = 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';

const ARGO_HEALTH: readonly string[] = ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'];

/** True when `value` is one of Argo CD's six health codes (case-sensitive, as Argo checks). */
export function isArgoHealthStatus(value: unknown): value is ArgoHealthStatus {
  return typeof value === 'string' && ARGO_HEALTH.includes(value);
}

/**
 * Builds kstatus-shaped conditions: kstatus sets Reconciling=True for InProgress and Stalled=True
 * for Failed, and no condition for the other statuses.
 */
function buildConditions(status: ResourceStatus, reason: string, message: string): StatusCondition[] {
  if (status === 'InProgress') return [{ type: 'Reconciling', status: 'True', reason, message }];
  if (status === 'Failed') return [{ type: 'Stalled', status: 'True', reason, message }];
  return [];
}

/** Builds the final result of a custom check, keeping what the check said in `customHealth`. */
export function buildCustomResult(
  status: ResourceStatus,
  reason: string | undefined,
  detail: CustomHealthDetail,
): StatusResult {
  const result: StatusResult = {
    status,
    message: detail.message,
    conditions: buildConditions(status, reason ?? detail.health, detail.message),
    customHealth: detail,
  };
  if (reason !== undefined) result.reason = reason;
  return result;
}

/**
 * Maps an Argo CD health code to a phaselog status: Healthy -> Current, Progressing -> InProgress,
 * Degraded -> Failed, Suspended -> InProgress (reason `Suspended`), Missing -> NotFound,
 * Unknown -> Unknown.
 */
export function mapArgoHealth(health: ArgoHealthStatus): { status: ResourceStatus; reason?: string } {
  switch (health) {
    case 'Healthy':
      return { status: 'Current' };
    case 'Progressing':
      return { status: 'InProgress' };
    case 'Degraded':
      return { status: 'Failed' };
    case 'Suspended':
      return { status: 'InProgress', reason: 'Suspended' };
    case 'Missing':
      return { status: 'NotFound' };
    case 'Unknown':
      return { status: 'Unknown' };
  }
}

/** The result of a check that could not run: Unknown with reason HEALTH_CHECK_ERROR. */
export function buildErrorResult(engine: CustomHealthDetail['engine'], source: string, message: string): StatusResult {
  return {
    status: 'Unknown',
    message,
    reason: 'HEALTH_CHECK_ERROR',
    conditions: [],
    customHealth: { engine, source, health: 'Error', message },
  };
}
