/**
 * Builders for status results, so every layer produces the same shapes: kstatus' `newInProgressStatus`
 * (one `Reconciling=True` condition), `newFailedStatus` (one `Stalled=True`), plain Current, and the
 * two statuses only a cluster reader can know (NotFound, Unknown).
 */
import type { Presence, StatusResult, UnknownReason } from './types.ts';

/** InProgress with a `Reconciling=True` condition carrying the same reason and message. */
export function inProgress(reason: string, message: string): StatusResult {
  return {
    status: 'InProgress',
    message,
    conditions: [{ type: 'Reconciling', status: 'True', reason, message }],
  };
}

/** Failed with a `Stalled=True` condition carrying the same reason and message. */
export function failed(reason: string, message: string): StatusResult {
  return {
    status: 'Failed',
    message,
    conditions: [{ type: 'Stalled', status: 'True', reason, message }],
  };
}

/** Current with no conditions. */
export function current(message: string): StatusResult {
  return { status: 'Current', message, conditions: [] };
}

/**
 * kstatus' reading layer for an object listed but absent from the cluster (HTTP 404): NotFound,
 * message `Resource not found` (cli-utils `statusreaders/common.go`).
 */
export function notFoundStatus(message = 'Resource not found'): StatusResult {
  return { status: 'NotFound', message, conditions: [] };
}

/**
 * An object whose status could not be determined. kstatus leaves the message empty and attaches the
 * error; phaselog puts the error text in `message` and says which kind of failure in `reason`.
 */
export function unknownStatus(reason: UnknownReason, message: string): StatusResult {
  return { status: 'Unknown', message, conditions: [], reason };
}

/** Unknown because the object did not have the shape kstatus needs. */
export function malformedStatus(message: string): StatusResult {
  return unknownStatus('MALFORMED_OBJECT', message);
}

/** Unknown reasons that mean the object was read, so it is known to exist. */
const READ_BUT_UNKNOWN: ReadonlySet<string> = new Set([
  'MALFORMED_OBJECT',
  'HEALTH_CHECK_ERROR',
  'UnknownWorkflowPhase',
]);

/**
 * EMCO-style presence derived from a result: any computed status means the object was read
 * (`Present`); NotFound, and a kind the cluster does not serve (`KIND_NOT_FOUND`, so no such object
 * can exist), are `NotPresent`; an Unknown that could not reach the object (forbidden, unreachable,
 * not observed yet, ...) is `Unknown`. A malformed object or failing health check was read: `Present`.
 */
export function presenceOf(result: Pick<StatusResult, 'status' | 'reason'>): Presence {
  switch (result.status) {
    case 'NotFound':
      return 'NotPresent';
    case 'Unknown':
      if (result.reason === 'KIND_NOT_FOUND') return 'NotPresent';
      return result.reason !== undefined && READ_BUT_UNKNOWN.has(result.reason) ? 'Present' : 'Unknown';
    default:
      return 'Present';
  }
}
