import { statusOf, typeOf } from '../conditions.ts';
import type { ConditionList } from '../conditions.ts';
import { readBool, readInt, readPath } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, failed, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

const PARALLELISM = ['spec', 'parallelism'] as const;
const COMPLETIONS = ['spec', 'completions'] as const;
const SUSPEND = ['spec', 'suspend'] as const;
const SUCCEEDED = ['status', 'succeeded'] as const;
const ACTIVE = ['status', 'active'] as const;
const FAILED = ['status', 'failed'] as const;
const START_TIME = ['status', 'startTime'] as const;

/**
 * kstatus `jobConditions` (batch Job), upstream main.
 *
 * Conditions in list order: `Complete=True` is Current `Job Completed. succeeded: s/c`;
 * `Failed=True` is Failed `JobFailed`; `Suspended=True` while `spec.suspend` is true is Current
 * `Job is suspended`. Then a Job without `status.startTime` is InProgress `JobNotStarted`, and a
 * started Job is **Current** `Job in progress. success:s, active: a, failed: f` (upstream kstatus
 * does not wait for Jobs to finish; Flux's own Job reader does). `spec.completions` defaults to
 * `spec.parallelism`, which defaults to 1. That running-but-Current result carries the reason
 * {@link JOB_RUNNING}, so phases whose point is the Job's end (owner phases) can wait for it
 * ({@link awaitJobEnd}).
 */
export function computeJobStatus(obj: JsonRecord, conditions: ConditionList): StatusResult {
  const parallelism = readInt(obj, PARALLELISM, 1);
  const completions = readInt(obj, COMPLETIONS, parallelism);
  const succeeded = readInt(obj, SUCCEEDED, 0);
  const active = readInt(obj, ACTIVE, 0);
  const failedCount = readInt(obj, FAILED, 0);

  for (const c of conditions) {
    if (statusOf(c) !== 'True') continue;
    switch (typeOf(c)) {
      case 'Complete':
        return current(`Job Completed. succeeded: ${succeeded}/${completions}`);
      case 'Failed':
        return failed('JobFailed', `Job Failed. failed: ${failedCount}/${completions}`);
      case 'Suspended':
        if (readBool(obj, SUSPEND, false)) return current('Job is suspended');
        break;
    }
  }
  // A Date is how typed @kubernetes/client-node objects carry the JSON timestamp string.
  const startTime = readPath(obj, START_TIME);
  if (!((typeof startTime === 'string' && startTime !== '') || startTime instanceof Date)) {
    return inProgress('JobNotStarted', 'Job not started');
  }
  return {
    ...current(`Job in progress. success:${succeeded}, active: ${active}, failed: ${failedCount}`),
    reason: JOB_RUNNING,
  };
}

/** Reason of a started Job that has neither completed nor failed (Current in upstream kstatus). */
export const JOB_RUNNING = 'JobRunning';

/**
 * Flux's reading of a Job (its `kstatus` Job reader waits for the end): a running Job is
 * InProgress until its `Complete` (Current) or `Failed` (Failed) condition. Other results are
 * returned as they are.
 */
export function awaitJobEnd<T extends Pick<StatusResult, 'status' | 'message' | 'conditions' | 'reason'>>(
  result: T,
): T {
  if (result.status !== 'Current' || result.reason !== JOB_RUNNING) return result;
  return { ...result, ...inProgress(JOB_RUNNING, result.message) };
}
