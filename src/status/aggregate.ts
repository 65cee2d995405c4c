/** kstatus' aggregate rule (cli-utils `pkg/kstatus/polling/aggregator/aggregator.go`). */
import type { ResourceStatus } from './types.ts';

/**
 * kstatus `AggregateStatus`: an empty set is `desired`; any Failed makes Failed; otherwise any
 * Unknown makes Unknown; otherwise `desired` when every status equals it, else InProgress.
 * So with `desired = 'Current'`, NotFound and Terminating resources make the aggregate InProgress
 * (never NotFound); pass `desired = 'NotFound'` to wait for a deletion.
 */
export function aggregateStatus(
  statuses: readonly ResourceStatus[],
  desired: ResourceStatus = 'Current',
): ResourceStatus {
  if (statuses.length === 0) return desired;
  let sawUnknown = false;
  let allDesired = true;
  for (const status of statuses) {
    if (status === 'Failed') return 'Failed';
    if (status === 'Unknown') sawUnknown = true;
    if (status !== desired) allDesired = false;
  }
  if (sawUnknown) return 'Unknown';
  return allDesired ? desired : 'InProgress';
}
