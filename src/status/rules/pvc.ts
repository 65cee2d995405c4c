import { readString } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

const PHASE = ['status', 'phase'] as const;

/**
 * kstatus `pvcConditions` (core PersistentVolumeClaim): Current `PVC is Bound` when `status.phase`
 * is `Bound`; otherwise InProgress `NotBound`, `PVC is not Bound. phase: <phase>` where a missing
 * phase reads as `unknown`.
 */
export function computePersistentVolumeClaimStatus(obj: JsonRecord): StatusResult {
  const phase = readString(obj, PHASE, 'unknown');
  if (phase !== 'Bound') return inProgress('NotBound', `PVC is not Bound. phase: ${phase}`);
  return current('PVC is Bound');
}
