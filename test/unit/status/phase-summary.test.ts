import { describe, expect, it } from 'vitest';
import {
  aggregateStatus,
  computeStatus,
  notFoundStatus,
  summarizePhase,
  unknownStatus,
} from '../../../src/status/index.ts';
import type { PhaseCondition, PhaseMember, ResourceStatus } from '../../../src/status/index.ts';
import { fixture, patched } from './fixtures.ts';

const NOW = new Date('2026-03-01T12:00:00Z');
const LATER = new Date('2026-03-01T12:05:00Z');

function ref(kind: string, name: string, namespace = 'shop', group = ''): PhaseMember['ref'] {
  return { group, kind, namespace, name };
}

const current: PhaseMember = {
  ref: ref('ConfigMap', 'web-config'),
  ...computeStatus(fixture('configmap'), { now: NOW }),
};
const progressing: PhaseMember = {
  ref: ref('Deployment', 'web', 'shop', 'apps'),
  ...computeStatus(patched('deployment', { status: { readyReplicas: 1 } }), { now: NOW }),
};
const failing: PhaseMember = {
  ref: ref('Job', 'migrate', 'shop', 'batch'),
  ...computeStatus(patched('job', { status: { failed: 1, conditions: [{ type: 'Failed', status: 'True' }] } }), {
    now: NOW,
  }),
};
const missing: PhaseMember = { ref: ref('Service', 'web'), ...notFoundStatus() };
const forbidden: PhaseMember = {
  ref: ref('Secret', 'web-tls'),
  ...unknownStatus('FORBIDDEN', 'secrets "web-tls" is forbidden'),
};
const terminating: PhaseMember = {
  ref: ref('Namespace', 'old', ''),
  ...computeStatus(patched('namespace', { metadata: { deletionTimestamp: '2026-03-01T11:00:00Z' } }), { now: NOW }),
};

describe('aggregateStatus beyond the upstream cases', () => {
  it.each([
    ['a missing resource makes a Current phase InProgress', ['Current', 'NotFound'], 'Current', 'InProgress'],
    ['a terminating resource makes it InProgress', ['Current', 'Terminating'], 'Current', 'InProgress'],
    ['Unknown beats InProgress', ['InProgress', 'Unknown'], 'Current', 'Unknown'],
    ['Failed beats Unknown whatever the order', ['Unknown', 'Failed'], 'Current', 'Failed'],
    ['a deletion waits until all are NotFound', ['NotFound', 'NotFound'], 'NotFound', 'NotFound'],
    ['a deletion with a Current leftover is InProgress', ['NotFound', 'Current'], 'NotFound', 'InProgress'],
  ] as const)('%s', (_name, statuses, desired, expected) => {
    expect(aggregateStatus(statuses as readonly ResourceStatus[], desired)).toBe(expected);
  });
});

describe('summarizePhase', () => {
  it('counts every status, zero included', () => {
    const summary = summarizePhase([current, current, progressing, missing], { now: NOW });
    expect(summary.counts).toEqual({ Current: 2, InProgress: 1, NotFound: 1, Failed: 0, Terminating: 0, Unknown: 0 });
    expect(summary.total).toBe(4);
  });

  it.each([
    ['Failed outranks everything', [progressing, missing, failing, forbidden], 'Job shop/migrate', 'Failed'],
    ['Terminating outranks NotFound', [missing, terminating], 'Namespace old', 'Terminating'],
    ['NotFound outranks Unknown', [forbidden, missing], 'Service shop/web', 'NotFound'],
    ['Unknown outranks InProgress', [progressing, forbidden], 'Secret shop/web-tls', 'Unknown'],
  ] as const)('%s', (_name, members, who, status) => {
    const summary = summarizePhase(members, { now: NOW });
    expect(summary.mostImportant?.status).toBe(status);
    expect(summary.message).toContain(`${who} is ${status}`);
  });

  it('is Failed while a check with affectsStatus is False, that check leading the message and Stalled true', () => {
    const summary = summarizePhase([current, progressing], { now: NOW, failedBy: ['health is False: HTTP 503'] });
    expect(summary.status).toBe('Failed');
    expect(summary.message).toBe(
      'health is False: HTTP 503 (resources: 1 of 2 resources not Current: Deployment shop/web is InProgress: Ready: 1/3)',
    );
    expect(summary.conditions.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'False'],
      ['Reconciling', 'False'],
      ['Stalled', 'True'],
    ]);
    // The resources' own picture is kept: counts and the worst member.
    expect(summary.counts.InProgress).toBe(1);
    expect(summary.mostImportant?.ref).toEqual(progressing.ref);
    expect(summarizePhase([current], { now: NOW, failedBy: [] }).status).toBe('Current');
  });

  it("takes the holder's verdict when it is worse than the members', naming the holder first", () => {
    const holder = {
      status: 'Failed' as const,
      message: 'Kustomization flux-system/apps: BuildFailed: kustomize build failed',
    };
    const summary = summarizePhase([current, current], { now: NOW, holder });
    expect(summary.status).toBe('Failed');
    expect(summary.message).toBe(
      'Kustomization flux-system/apps: BuildFailed: kustomize build failed (resources: All 2 resources are Current)',
    );
    expect(summary.conditions.find((c) => c.type === 'Stalled')?.status).toBe('True');
    // The kstatus view of the members stays: counts, and no worst member while all are Current.
    expect(summary.counts.Current).toBe(2);
    expect(summary.mostImportant).toBeUndefined();
    // Not worse than the members: the members' aggregate and message stand.
    const waiting = { status: 'InProgress' as const, message: 'Application argocd/shop is Progressing' };
    const failed = summarizePhase([current, failing], { now: NOW, holder: waiting });
    expect(failed.status).toBe('Failed');
    expect(failed.message).not.toContain('Application');
    // Missing (Argo CD) is NotFound: worse than InProgress members, better than Unknown ones.
    const missingApp = { status: 'NotFound' as const, message: 'Application argocd/shop is Missing' };
    expect(summarizePhase([current, progressing], { now: NOW, holder: missingApp }).status).toBe('NotFound');
    const unknownMember = { ...current, status: 'Unknown' as ResourceStatus };
    expect(summarizePhase([unknownMember], { now: NOW, holder: missingApp }).status).toBe('Unknown');
    // A deletion phase (desired NotFound) is not judged by its holder.
    expect(summarizePhase([missing], { now: NOW, desired: 'NotFound', holder }).status).toBe('NotFound');
  });

  it('breaks ties by inventory order', () => {
    const second = { ...progressing, ref: ref('Deployment', 'api', 'shop', 'apps') };
    const summary = summarizePhase([current, progressing, second], { now: NOW });
    expect(summary.mostImportant).toMatchObject({ index: 1, ref: progressing.ref });
    expect(summary.message).toBe('2 of 3 resources not Current: Deployment shop/web is InProgress: Ready: 1/3');
  });

  it('shows a missing resource as InProgress in the phase status but NotFound in detail', () => {
    const summary = summarizePhase([current, missing], { now: NOW });
    expect(summary.status).toBe('InProgress');
    expect(summary.mostImportant?.status).toBe('NotFound');
    expect(summary.message).toBe('1 of 2 resources not Current: Service shop/web is NotFound: Resource not found');
  });

  it('reports an all-Current phase as Ready', () => {
    const summary = summarizePhase([current, current], { now: NOW });
    expect(summary.status).toBe('Current');
    expect(summary.mostImportant).toBeUndefined();
    expect(summary.conditions).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Current',
        message: 'All 2 resources are Current',
        lastTransitionTime: '2026-03-01T12:00:00Z',
      },
      {
        type: 'Reconciling',
        status: 'False',
        reason: 'Current',
        message: 'All 2 resources are Current',
        lastTransitionTime: '2026-03-01T12:00:00Z',
      },
      {
        type: 'Stalled',
        status: 'False',
        reason: 'Current',
        message: 'All 2 resources are Current',
        lastTransitionTime: '2026-03-01T12:00:00Z',
      },
    ]);
  });

  it.each([
    ['InProgress', [current, progressing], ['False', 'True', 'False']],
    ['Failed', [current, failing], ['False', 'False', 'True']],
    ['Unknown', [current, forbidden], ['Unknown', 'Unknown', 'Unknown']],
  ] as const)('sets Ready/Reconciling/Stalled for an %s phase', (status, members, expected) => {
    const summary = summarizePhase(members, { now: NOW });
    expect(summary.status).toBe(status);
    expect(summary.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Ready', expected[0], status],
      ['Reconciling', expected[1], status],
      ['Stalled', expected[2], status],
    ]);
  });

  it('keeps lastTransitionTime for conditions whose status did not change', () => {
    const first = summarizePhase([current, progressing], { now: NOW });
    const second = summarizePhase([current, failing], { now: LATER, previousConditions: first.conditions });
    const byType = (cs: PhaseCondition[], t: string): PhaseCondition | undefined => cs.find((c) => c.type === t);
    expect(byType(second.conditions, 'Ready')?.lastTransitionTime).toBe('2026-03-01T12:00:00Z');
    expect(byType(second.conditions, 'Reconciling')?.lastTransitionTime).toBe('2026-03-01T12:05:00Z');
    expect(byType(second.conditions, 'Stalled')?.lastTransitionTime).toBe('2026-03-01T12:05:00Z');
    expect(byType(second.conditions, 'Ready')?.message).toBe(
      '1 of 2 resources not Current: Job shop/migrate is Failed: Job Failed. failed: 1/1',
    );
  });

  it('treats an empty phase as Ready, like the kstatus aggregate', () => {
    const summary = summarizePhase([], { now: NOW });
    expect([summary.status, summary.message, summary.conditions[0]?.status]).toEqual([
      'Current',
      'Phase has no resources',
      'True',
    ]);
  });

  it('can wait for a deletion with desired NotFound', () => {
    const summary = summarizePhase([missing, { ...missing, ref: ref('ConfigMap', 'gone') }], {
      now: NOW,
      desired: 'NotFound',
    });
    expect([summary.status, summary.message, summary.conditions[0]?.status]).toEqual([
      'NotFound',
      'All 2 resources are NotFound',
      'True',
    ]);
  });

  it('counts a status outside the six as Unknown instead of dropping it', () => {
    const odd = { ...current, status: 'Healthy' } as unknown as PhaseMember;
    expect(summarizePhase([odd], { now: NOW })).toMatchObject({ status: 'Unknown', counts: { Unknown: 1 } });
  });
});
