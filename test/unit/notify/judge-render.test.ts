/**
 * The pure rules of notifications: which changes a route matches (condition changes included, as
 * the change log will carry them), what minDuration and the flapping guard decide, and what is
 * signed and linked.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routeMatchSchema } from '../../../src/notify/config.ts';
import { judgeChange, matchesRoute, releaseHeld, subjectOf, type NotifiableChange } from '../../../src/notify/judge.ts';
import { phaseUiUrl, renderRequest } from '../../../src/notify/render.ts';

const base: NotifiableChange = {
  seq: 42n,
  at: new Date('2026-11-26T10:00:00Z'),
  cluster: 'prod',
  clusterId: 1,
  phaseId: 7,
  phase: { sourceKind: 'cli-utils', namespace: 'shop', name: 'api' },
  scope: 'phase',
  resourceKey: null,
  fromStatus: 'Current',
  toStatus: 'Failed',
  message: 'Deployment api: 1/2 ready',
  phaseLabels: { team: 'web' },
};
const condition: NotifiableChange = {
  ...base,
  scope: 'condition' as NotifiableChange['scope'],
  conditionType: 'Ready',
  fromStatus: 'True',
  toStatus: 'False',
};
const clusterChange: NotifiableChange = {
  ...base,
  scope: 'cluster',
  phaseId: null,
  phase: null,
  fromStatus: 'Reachable',
  toStatus: 'Unreachable',
};

describe('matchesRoute', () => {
  it.each([
    ['a phase change, by default', {}, base, true],
    [
      'not a resource change, by default',
      {},
      { ...base, scope: 'resource' as const, resourceKey: 'apps/Deployment/shop/api' },
      false,
    ],
    ['a cluster change when asked for', { changes: ['cluster'] }, clusterChange, true],
    ['no cluster change under a namespace list', { changes: ['cluster'], namespaces: ['shop'] }, clusterChange, false],
    ['a condition change of a listed type', { changes: ['condition'], conditionTypes: ['Ready'] }, condition, true],
    [
      'not a condition change of another type',
      { changes: ['condition'], conditionTypes: ['Stalled'] },
      condition,
      false,
    ],
    ['a condition change by from/to', { changes: ['condition'], from: ['True'], to: ['False'] }, condition, true],
    ['the phase by its labels', { labels: { team: 'web' } }, base, true],
    ['not a phase without the label', { labels: { team: 'data' } }, base, false],
    ['to Failed', { to: ['Failed'] }, base, true],
    ['not to Current', { to: ['Current'] }, base, false],
    ['an appearance as from none', { from: ['none'] }, { ...base, fromStatus: null }, true],
    ['another cluster', { clusters: ['staging'] }, base, false],
    ['a phase by name', { phases: ['api'] }, base, true],
  ])('%s', (_what, match, change, expected) => {
    expect(matchesRoute(routeMatchSchema.parse(match), change)).toBe(expected);
  });

  it('keeps subjects apart: a phase, its resources and its conditions flap separately', () => {
    const subjects = new Set(
      [
        base,
        { ...base, scope: 'resource' as const, resourceKey: 'apps/Deployment/shop/api' },
        condition,
        { ...condition, conditionType: 'Stalled' },
      ].map(subjectOf),
    );
    expect(subjects.size).toBe(4);
    expect(subjectOf({ ...base, seq: 43n, toStatus: 'Current' })).toBe(subjectOf(base));
  });
});

describe('judgeChange and releaseHeld', () => {
  const flapping = { maxChanges: 3, window: 60_000 };
  it.each([
    [
      'at once without minDuration',
      { minDuration: 0 },
      { recentChanges: 9, previousFlapping: false },
      { status: 'pending', kind: 'transition' },
    ],
    [
      'held with minDuration',
      { minDuration: 5000 },
      { recentChanges: 0, previousFlapping: false },
      { status: 'held', kind: 'transition' },
    ],
    [
      'within the limit',
      { minDuration: 0, flapping },
      { recentChanges: 2, previousFlapping: false },
      { status: 'pending', kind: 'transition' },
    ],
    [
      'over the limit: one summary',
      { minDuration: 5000, flapping },
      { recentChanges: 3, previousFlapping: false },
      { status: 'pending', kind: 'flapping', flapCount: 4 },
    ],
    [
      'still over the limit: held until the storm ends',
      { minDuration: 0, flapping },
      { recentChanges: 7, previousFlapping: true },
      { status: 'held', kind: 'transition', reason: 'flapping' },
    ],
    [
      'calm again after a storm',
      { minDuration: 0, flapping },
      { recentChanges: 0, previousFlapping: true },
      { status: 'pending', kind: 'transition' },
    ],
  ])('%s', (_what, route, past, verdict) => {
    expect(judgeChange(route, past)).toEqual(verdict);
  });

  const at = new Date('2026-11-26T10:00:00Z');
  const plus = (ms: number) => new Date(at.getTime() + ms);
  it.each([
    ['undone sooner', { at: plus(2000) }, plus(2500), 'superseded'],
    ['changed again after it held', { at: plus(6000) }, plus(6000), 'due'],
    ['held long enough, unchanged', undefined, plus(5000), 'due'],
    ['not long enough yet', undefined, plus(4999), 'wait'],
  ] as const)('a held change %s: %s', (_what, next, now, verdict) => {
    expect(releaseHeld(at, 5000, next, now)).toBe(verdict);
  });
});

describe('renderRequest', () => {
  it('signs the exact body it sends, with a stable idempotency key', () => {
    const signedAt = new Date('2026-12-02T01:00:00.500Z');
    const t = Date.parse('2026-12-02T01:00:00Z') / 1000;
    const a = renderRequest({ type: 'webhook' }, { route: 'ops', change: base, kind: 'transition' }, 'k', signedAt);
    const b = renderRequest({ type: 'webhook' }, { route: 'ops', change: base, kind: 'transition' }, 'k', signedAt);
    expect(a.headers['x-phaselog-delivery']).toBe('ops:42');
    expect(a.headers['x-phaselog-signature']).toBe(
      `t=${t},v1=${createHmac('sha256', 'k').update(`${t}.${a.body}`).digest('hex')}`,
    );
    expect(b).toEqual(a);
    // A retry a minute later: the same body and key, a new timestamp and so a new signature.
    const retry = renderRequest(
      { type: 'webhook' },
      { route: 'ops', change: base, kind: 'transition' },
      'k',
      new Date(signedAt.getTime() + 60_000),
    );
    expect([retry.body, retry.headers['x-phaselog-delivery']]).toEqual([a.body, 'ops:42']);
    expect(retry.headers['x-phaselog-signature']).toMatch(new RegExp(`^t=${t + 60},v1=[0-9a-f]{64}$`));
    expect(
      renderRequest({ type: 'slack' }, { route: 'ops', change: base, kind: 'transition' }, undefined, signedAt).headers[
        'x-phaselog-signature'
      ],
    ).toBeUndefined();
  });

  it("links to the phase's page, names escaped, whatever the base URL's trailing slash", () => {
    const phase = { cluster: 'arn:aws:eks:eu/x', namespace: 'shop', name: 'api v2' };
    expect(phaseUiUrl('https://ui.example.com/', phase, phase.cluster)).toBe(
      'https://ui.example.com/phases/arn%3Aaws%3Aeks%3Aeu%2Fx/shop/api%20v2',
    );
    expect(phaseUiUrl('https://ui.example.com/phaselog', phase, phase.cluster)).toBe(
      'https://ui.example.com/phaselog/phases/arn%3Aaws%3Aeks%3Aeu%2Fx/shop/api%20v2',
    );
  });
});
