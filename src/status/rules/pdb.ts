import { current } from '../result.ts';
import type { StatusResult } from '../types.ts';

/**
 * kstatus `pdbConditions` (policy PodDisruptionBudget): Current, `AllowedDisruptions has been
 * computed.` (with the final period). The disruption controller sets no conditions, so only the
 * generic generation check can make a PDB InProgress.
 */
export function computePodDisruptionBudgetStatus(): StatusResult {
  return current('AllowedDisruptions has been computed.');
}
