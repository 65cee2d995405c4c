/**
 * A phase whose membership is uncertain (an owner phase with an ownerReference cycle, a dangling
 * owner, or an owned kind that could not be listed) must say so in its own status, where a user
 * reads it, not only in a log. Pure.
 */
import type { PhaseSummary } from './phase-summary.ts';
import type { ResourceStatus } from './types.ts';

/** A phase error as the inventory layer reports it (`code` is matched, `message` shown). */
export interface PhaseErrorLike {
  code: string;
  message: string;
}

/** Codes that only mean "could not read": the phase is Unknown, not Failed. */
const READ_FAILURES: ReadonlySet<string> = new Set(['OWNED_READ_FAILED', 'SELECTOR_READ_FAILED']);

/**
 * The summary with `errors` in it: Failed when one of them is a fault of the objects (a cycle, a
 * dangling owner), else Unknown when one is a read failure, unless the members already make the
 * phase Failed. The message leads with the errors; the conditions follow the status.
 */
export function withPhaseErrors(summary: PhaseSummary, errors: readonly PhaseErrorLike[]): PhaseSummary {
  if (errors.length === 0) return summary;
  const errorStatus: ResourceStatus = errors.some((e) => !READ_FAILURES.has(e.code)) ? 'Failed' : 'Unknown';
  const status: ResourceStatus = summary.status === 'Failed' ? 'Failed' : errorStatus;
  const message = `${errors.map((e) => e.message).join('; ')}; ${summary.message}`;
  const [ready, reconciling, stalled] =
    status === 'Failed' ? (['False', 'False', 'True'] as const) : (['Unknown', 'Unknown', 'Unknown'] as const);
  const at = summary.conditions[0]?.lastTransitionTime;
  const conditions = (
    [
      ['Ready', ready],
      ['Reconciling', reconciling],
      ['Stalled', stalled],
    ] as const
  ).map(([type, conditionStatus]) => {
    const before = summary.conditions.find((c) => c.type === type);
    return {
      ...(before ?? {}),
      type,
      status: conditionStatus,
      reason: status,
      message,
      ...((before?.lastTransitionTime ?? at)
        ? { lastTransitionTime: (before?.lastTransitionTime ?? at) as string }
        : {}),
    };
  });
  return { ...summary, status, message, conditions: conditions as PhaseSummary['conditions'] };
}
