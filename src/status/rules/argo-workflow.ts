import { readPath } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, failed, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

const PHASE = ['status', 'phase'] as const;
const MESSAGE = ['status', 'message'] as const;

/**
 * Argo Workflows' `argoproj.io/Workflow`, read as Argo CD's built-in health check for it
 * (`resource_customizations/argoproj.io/Workflow/health.lua`) reads it, in kstatus' words: no
 * `status.phase` yet, `Pending` or `Running` is Progressing, here InProgress; `Succeeded` is
 * Healthy, here Current; `Failed` or `Error` is Degraded, here Failed; any other phase is Unknown.
 * The message is the Workflow's `status.message`, or a line naming the phase when it has none.
 */
export function computeArgoWorkflowStatus(obj: JsonRecord): StatusResult {
  const rawPhase = readPath(obj, PHASE);
  const phase = typeof rawPhase === 'string' ? rawPhase : '';
  const rawMessage = readPath(obj, MESSAGE);
  const message = typeof rawMessage === 'string' ? rawMessage : '';
  switch (phase) {
    case '':
    case 'Pending':
    case 'Running':
      return inProgress(
        phase === '' ? 'WorkflowNotStarted' : `Workflow${phase}`,
        message || (phase === '' ? 'Workflow not started' : `Workflow is ${phase}`),
      );
    case 'Succeeded':
      return current(message || 'Workflow Succeeded');
    case 'Failed':
    case 'Error':
      return failed(`Workflow${phase}`, message || `Workflow ${phase === 'Error' ? 'errored' : 'failed'}`);
    default:
      return {
        status: 'Unknown',
        message: message || `Workflow phase ${phase} is not one Argo CD knows`,
        conditions: [],
        reason: 'UnknownWorkflowPhase',
      };
  }
}
