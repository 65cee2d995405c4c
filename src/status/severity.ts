/**
 * How much a status matters, in weave-gitops' order: Failed, Terminating, NotFound, Unknown,
 * InProgress, then Current. The one order behind a phase's most important member, the phase list
 * sorted by severity (its SQL is built from {@link STATUSES_BY_SEVERITY}) and a gate's blocking
 * resources.
 */
import type { ResourceStatus } from './types.ts';

/** Most important first. */
export const STATUSES_BY_SEVERITY: readonly ResourceStatus[] = [
  'Failed',
  'Terminating',
  'NotFound',
  'Unknown',
  'InProgress',
  'Current',
];

/**
 * The rank of a status in {@link STATUSES_BY_SEVERITY}: lower is more important. No status (`null`)
 * or an unknown word ranks after every status.
 */
export function severityOf(status: string | null): number {
  const index = status === null ? -1 : (STATUSES_BY_SEVERITY as readonly string[]).indexOf(status);
  return index === -1 ? STATUSES_BY_SEVERITY.length : index;
}
