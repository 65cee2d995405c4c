import { describe, expect, it } from 'vitest';
import { computeStatus } from '../../../src/status/compute.ts';
import { awaitJobEnd } from '../../../src/status/rules/job.ts';
import { withPhaseErrors } from '../../../src/status/phase-errors.ts';
import { summarizePhase } from '../../../src/status/phase-summary.ts';

const NOW = Date.parse('2026-11-26T12:00:00Z');

function workflow(status: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'deploy-nova', namespace: 'openstack', generation: 2 },
    spec: { entrypoint: 'main' },
    ...(status ? { status } : {}),
  };
}

function job(status: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'db-sync', namespace: 'openstack' },
    spec: { completions: 1 },
    status,
  };
}

describe('an Argo Workflow is read as Argo CD reads it', () => {
  it.each([
    ['a Workflow not started yet is InProgress', undefined, 'InProgress', 'Workflow not started'],
    ['a Pending Workflow is InProgress', { phase: 'Pending' }, 'InProgress', 'Workflow is Pending'],
    [
      'a Running Workflow is InProgress with its message',
      { phase: 'Running', message: 'step 2/5' },
      'InProgress',
      'step 2/5',
    ],
    ['a Succeeded Workflow is Current', { phase: 'Succeeded' }, 'Current', 'Workflow Succeeded'],
    [
      'a Failed Workflow is Failed with its message',
      { phase: 'Failed', message: 'child "migrate" failed' },
      'Failed',
      'child "migrate" failed',
    ],
    ['an Error Workflow is Failed', { phase: 'Error' }, 'Failed', 'Workflow errored'],
    [
      'a Workflow in a phase Argo CD does not know is Unknown',
      { phase: 'Paused' },
      'Unknown',
      'Workflow phase Paused is not one Argo CD knows',
    ],
  ])('%s', (_name, status, expected, message) => {
    const result = computeStatus(workflow(status), { now: NOW });
    expect([result.status, result.message]).toEqual([expected, message]);
  });

  it('a custom health check for Workflows still replaces the built-in reading', () => {
    const result = computeStatus(workflow({ phase: 'Failed' }), {
      now: NOW,
      customHealth: () => ({ status: 'Current', message: 'ignored by policy', conditions: [] }),
    });
    expect(result.status).toBe('Current');
  });
});

describe('owner phases wait for a Job to end', () => {
  it.each([
    ['a running Job is InProgress', { startTime: '2026-11-26T11:59:00Z', active: 1 }, 'InProgress'],
    [
      'a completed Job is Current',
      { startTime: '2026-11-26T11:59:00Z', succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
      'Current',
    ],
    [
      'a failed Job is Failed',
      {
        startTime: '2026-11-26T11:59:00Z',
        failed: 6,
        conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
      },
      'Failed',
    ],
    ['a Job not started is InProgress', {}, 'InProgress'],
  ])('%s', (_name, status, expected) => {
    expect(awaitJobEnd(computeStatus(job(status), { now: NOW })).status).toBe(expected);
  });

  it('elsewhere a running Job stays Current, as upstream kstatus says', () => {
    expect(computeStatus(job({ startTime: '2026-11-26T11:59:00Z', active: 1 }), { now: NOW }).status).toBe('Current');
  });
});

describe('phase errors show in the phase status', () => {
  const allCurrent = summarizePhase(
    [{ ref: { group: 'batch', kind: 'Job', namespace: 'ns', name: 'j' }, status: 'Current', message: 'done' }],
    { now: new Date(NOW) },
  );

  it('a cycle makes an otherwise Current phase Failed, with the error first in the message', () => {
    const summary = withPhaseErrors(allCurrent, [
      { code: 'OWNER_REFERENCE_CYCLE', message: 'ownerReferences form a cycle: A owns B owns A' },
    ]);
    expect(summary.status).toBe('Failed');
    expect(summary.message.startsWith('ownerReferences form a cycle: A owns B owns A; ')).toBe(true);
    expect(summary.conditions.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'False'],
      ['Reconciling', 'False'],
      ['Stalled', 'True'],
    ]);
  });

  it('an owned kind that could not be listed makes the phase Unknown, not Failed', () => {
    expect(
      withPhaseErrors(allCurrent, [{ code: 'OWNED_READ_FAILED', message: 'cannot list batch/Job: FORBIDDEN' }]).status,
    ).toBe('Unknown');
  });

  it('no errors leave the summary as it was', () => {
    expect(withPhaseErrors(allCurrent, [])).toBe(allCurrent);
  });
});
