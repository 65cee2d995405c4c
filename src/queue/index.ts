/** BullMQ queue names, job payloads, schedulers and per-cluster locks for snapshots. */
export {
  enqueueLiveSnapshot,
  enqueueSnapshot,
  MAX_CHANGED_OBJECTS,
  jitterOffset,
  scheduleSnapshots,
  snapshotJobId,
  snapshotJobSchema,
  snapshotSchedulerId,
  SNAPSHOT_JOB,
  SNAPSHOT_JOB_OPTIONS,
  SNAPSHOT_QUEUE,
} from './snapshot-jobs.ts';
export type { ScheduleOptions, SnapshotJobData } from './snapshot-jobs.ts';
export { createClusterLocks } from './cluster-lock.ts';
export type { ClusterLockOptions, ClusterLocks, HeldLock } from './cluster-lock.ts';
