import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import {
  definePlans,
  planIntervalsOf,
  planStateOf,
  type LabelledPhase,
  type StepInterval,
} from '../../../src/history/plans.ts';

const t = (s: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, s));

function configIssues(yaml: string): { key: string; message: string }[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-plans-'));
  writeFileSync(path.join(dir, 'phaselog.yaml'), yaml);
  try {
    loadConfig({}, dir);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe('plans in phaselog.yaml', () => {
  it('accepts phases named cluster/namespace/name or cluster/name, existing or not', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-plans-'));
    writeFileSync(
      path.join(dir, 'phaselog.yaml'),
      'plans:\n  - name: site-prod\n    phases: [prod/infra/infra, prod/platform]\n',
    );
    expect(loadConfig({}, dir).plans).toEqual([{ name: 'site-prod', phases: ['prod/infra/infra', 'prod/platform'] }]);
  });

  it.each([
    ['an empty plan', 'plans:\n  - name: empty\n    phases: []\n', 'plans.0.phases', 'a plan needs at least one phase'],
    [
      'a plan declared twice',
      'plans:\n  - { name: a, phases: [c/x] }\n  - { name: a, phases: [c/y] }\n',
      'plans.1.name',
      'plan a is declared twice',
    ],
    [
      'a phase named without its cluster',
      'plans:\n  - { name: a, phases: [shop] }\n',
      'plans.0.phases.0',
      '"shop" is not a phase: use cluster/namespace/name or cluster/name',
    ],
    [
      'a phase with too many parts',
      'plans:\n  - { name: a, phases: [c/ns/x/y] }\n',
      'plans.0.phases.0',
      '"c/ns/x/y" is not a phase: use cluster/namespace/name or cluster/name',
    ],
    [
      'a phase listed twice',
      'plans:\n  - { name: a, phases: [c/ns/x, c/ns/x] }\n',
      'plans.0.phases.1',
      'phase c/ns/x is listed twice',
    ],
    [
      'a name that is no label value',
      'plans:\n  - { name: "site prod", phases: [c/x] }\n',
      'plans.0.name',
      'a plan name is letters, digits, ".", "_" or "-" (at most 63), starting with a letter or digit',
    ],
    ['an unknown key', 'plans:\n  - { name: a, phases: [c/x], order: 1 }\n', 'plans.0.order', 'unknown key'],
  ])('refuses %s', (_what, yaml, key, message) => {
    expect(configIssues(yaml)).toContainEqual({ key, message });
  });
});

const phase = (id: number, namespace: string, labels: Record<string, string>): LabelledPhase => ({
  id,
  cluster: 'prod',
  namespace,
  name: namespace,
  labels,
});

describe('definePlans', () => {
  it('orders a label plan by plan-order, then by name where orders repeat or are missing, and says so', () => {
    const [plan] = definePlans(
      [],
      [
        phase(1, 'shop', { 'phaselog.dev/plan': 'p', 'phaselog.dev/plan-order': '3' }),
        phase(2, 'infra', { 'phaselog.dev/plan': 'p', 'phaselog.dev/plan-order': '1' }),
        phase(3, 'platform', { 'phaselog.dev/plan': 'p', 'phaselog.dev/plan-order': '3' }),
        phase(4, 'extra', { 'phaselog.dev/plan': 'p', 'phaselog.dev/plan-order': 'first' }),
        phase(5, 'other', { team: 'x' }),
      ],
    );
    expect(plan?.refs.map((r) => [r.text, r.phaseId])).toEqual([
      ['prod/infra/infra', 2],
      ['prod/platform/platform', 3],
      ['prod/shop/shop', 1],
      ['prod/extra/extra', 4],
    ]);
    expect(plan?.warnings).toEqual([
      'prod/extra/extra has no integer phaselog.dev/plan-order: placed last, by name',
      'phaselog.dev/plan-order=3 is on prod/platform/platform, prod/shop/shop: ordered by name',
    ]);
  });

  it('lets phaselog.yaml win over labels naming the same plan, with a warning', () => {
    const plans = definePlans(
      [{ name: 'p', phases: ['prod/a/a'] }],
      [phase(1, 'shop', { 'phaselog.dev/plan': 'p', 'phaselog.dev/plan-order': '1' })],
    );
    expect(plans).toEqual([
      {
        name: 'p',
        source: 'config',
        refs: [{ text: 'prod/a/a', cluster: 'prod', namespace: 'a', name: 'a' }],
        warnings: ['labels phaselog.dev/plan=p on prod/shop/shop are ignored: phaselog.yaml declares this plan'],
      },
    ]);
  });

  it('ignores a label value that cannot name a plan', () => {
    expect(definePlans([], [phase(1, 'shop', { 'phaselog.dev/plan': 'no good' })])).toEqual([]);
  });
});

describe('planStateOf', () => {
  const step = (ref: string, status: string | null, message = '', staleReason: 'UNREACHABLE' | null = null) => ({
    ref,
    status,
    message,
    staleReason,
  });
  it.each([
    [
      'all Current',
      [step('a', 'Current'), step('b', 'Current')],
      { status: 'Current', step: null, message: 'all 2 phases Current', staleReason: null },
    ],
    [
      'at the first phase not Current',
      [step('a', 'Current'), step('b', 'InProgress', 'Deployment/x: Updated: 1/3'), step('c', 'Failed')],
      {
        status: 'InProgress',
        step: 2,
        message: 'at step 2 of 3: b InProgress: Deployment/x: Updated: 1/3',
        staleReason: null,
      },
    ],
    [
      'NotFound for a phase without status',
      [step('a', null, 'no such phase (yet)'), step('b', 'Current')],
      { status: 'NotFound', step: 1, message: 'at step 1 of 2: a NotFound: no such phase (yet)', staleReason: null },
    ],
    [
      'stale when a deciding phase is',
      [step('a', 'Current', '', 'UNREACHABLE'), step('b', 'InProgress')],
      { status: 'InProgress', step: 2, staleReason: 'UNREACHABLE' },
    ],
    [
      'fresh when only a later phase is stale',
      [step('a', 'InProgress'), step('b', 'Current', '', 'UNREACHABLE')],
      { status: 'InProgress', step: 1, staleReason: null },
    ],
    [
      'stale when Current and any phase is',
      [step('a', 'Current'), step('b', 'Current', '', 'UNREACHABLE')],
      { status: 'Current', staleReason: 'UNREACHABLE' },
    ],
  ])('%s', (_what, steps, expected) => {
    expect(planStateOf(steps)).toMatchObject(expected);
  });
});

describe('planIntervalsOf', () => {
  const iv = (status: string, from: number, to: number | null): StepInterval => ({
    status,
    message: status,
    staleReason: null,
    from: t(from),
    to: to === null ? null : t(to),
  });
  const steps = [
    { ref: 'a', intervals: [iv('InProgress', 0, 10), iv('Current', 10, null)] },
    { ref: 'b', intervals: [iv('InProgress', 0, 5), iv('InProgress', 5, 20), iv('Current', 20, null)] },
  ];
  it('cuts where any phase changes and joins neighbours with the same status and step', () => {
    expect(
      planIntervalsOf(steps, { from: t(0), to: t(30), open: true }).map((i) => [i.status, i.step, i.from, i.to]),
    ).toEqual([
      ['InProgress', 1, t(0), t(10)],
      ['InProgress', 2, t(10), t(20)],
      ['Current', null, t(20), null],
    ]);
  });
  it('cuts the intervals to a closed window', () => {
    expect(planIntervalsOf(steps, { from: t(12), to: t(25), open: false }).map((i) => [i.step, i.from, i.to])).toEqual([
      [2, t(12), t(20)],
      [null, t(20), t(25)],
    ]);
  });
  it('starts where the first of its phases has a status', () => {
    const late = [
      { ref: 'a', intervals: [iv('Current', 10, null)] },
      { ref: 'b', intervals: [iv('InProgress', 20, null)] },
    ];
    expect(
      planIntervalsOf(late, { from: t(0), to: t(30), open: false }).map((i) => [i.status, i.step, i.from, i.to]),
    ).toEqual([
      ['NotFound', 2, t(10), t(20)],
      ['InProgress', 2, t(20), t(30)],
    ]);
    expect(planIntervalsOf(late, { from: t(0), to: t(5), open: false })).toEqual([]);
  });
  it("reads a gap in a phase's history as no status", () => {
    const gappy = [{ ref: 'a', intervals: [iv('Current', 0, 10), iv('Current', 15, null)] }];
    expect(planIntervalsOf(gappy, { from: t(0), to: t(20), open: false }).map((i) => [i.status, i.from, i.to])).toEqual(
      [
        ['Current', t(0), t(10)],
        ['NotFound', t(10), t(15)],
        ['Current', t(15), t(20)],
      ],
    );
  });
});
