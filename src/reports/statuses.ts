import type { ResourceStatus } from '../status/types.ts';

/** The six statuses in the order reports list them: healthy first, then the ways of not being so. */
export const RESOURCE_STATUSES_IN_REPORT: readonly ResourceStatus[] = [
  'Current',
  'InProgress',
  'Failed',
  'Terminating',
  'NotFound',
  'Unknown',
];
