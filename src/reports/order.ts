/** The order reports list phases in: worst first, so the phases that need attention lead. */
import type { PhaseAudit } from './types.ts';

/**
 * Worst first: lower availability first (a phase with no reachable observed time, whose
 * availability is `null`, after every figure), then more time Failed, more failures, more status
 * changes, and finally cluster, namespace, name and id so the order is stable.
 */
export function comparePhasesWorstFirst(a: PhaseAudit, b: PhaseAudit): number {
  return (
    compareAvailability(a.availability, b.availability) ||
    b.timeInStatus.Failed - a.timeInStatus.Failed ||
    b.failures - a.failures ||
    b.statusChanges - a.statusChanges ||
    compareText(a.cluster, b.cluster) ||
    compareText(a.namespace, b.namespace) ||
    compareText(a.name, b.name) ||
    compareText(a.id, b.id)
  );
}

function compareAvailability(a: number | null, b: number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a - b;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
