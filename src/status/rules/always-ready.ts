import { current } from '../result.ts';
import type { StatusResult } from '../types.ts';

/**
 * kstatus `alwaysReady`, used for core Secret, core ConfigMap and batch CronJob: Current,
 * `Resource is always ready`. Only the generic checks (deletion, generation, Reconciling/Stalled)
 * can say otherwise.
 */
export function computeAlwaysReadyStatus(): StatusResult {
  return current('Resource is always ready');
}
