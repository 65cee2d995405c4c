import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeStatus, isResourceStatus, summarizePhase } from '../../../src/status/index.ts';
import type { StatusResult } from '../../../src/status/index.ts';
import { fixture } from './fixtures.ts';
import type { ObjectName } from './fixtures.ts';

const NOW = new Date('2026-03-01T12:00:00Z');
const NAMES: ObjectName[] = [
  'deployment',
  'statefulset',
  'daemonset',
  'replicaset',
  'pod',
  'pvc',
  'service',
  'job',
  'cronjob',
  'pdb',
  'crd',
  'configmap',
  'secret',
  'kustomization',
  'namespace',
];
const BASES = NAMES.map((name) => JSON.stringify(fixture(name)));

/** Paths kstatus reads, so mutations land where they matter. */
const PATHS: readonly (readonly (string | number)[])[] = [
  ['apiVersion'],
  ['kind'],
  ['metadata'],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'generation'],
  ['metadata', 'creationTimestamp'],
  ['metadata', 'labels'],
  ['spec'],
  ['spec', 'replicas'],
  ['spec', 'selector'],
  ['spec', 'selector', 'matchLabels'],
  ['spec', 'selector', 'matchExpressions'],
  ['spec', 'updateStrategy'],
  ['spec', 'updateStrategy', 'rollingUpdate', 'partition'],
  ['spec', 'progressDeadlineSeconds'],
  ['spec', 'type'],
  ['spec', 'completions'],
  ['spec', 'suspend'],
  ['status'],
  ['status', 'observedGeneration'],
  ['status', 'conditions'],
  ['status', 'conditions', 0],
  ['status', 'conditions', 0, 'type'],
  ['status', 'conditions', 0, 'status'],
  ['status', 'conditions', 1, 'reason'],
  ['status', 'phase'],
  ['status', 'replicas'],
  ['status', 'readyReplicas'],
  ['status', 'containerStatuses'],
  ['status', 'containerStatuses', 0, 'state'],
  ['status', 'containerStatuses', 0, 'state', 'waiting'],
  ['status', 'desiredNumberScheduled'],
  ['status', 'startTime'],
];

function nest(depth: number, asArray: boolean): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}

/** Values that do not belong where kstatus reads: wrong types, odd numbers, deep nesting. */
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    true,
    false,
    '',
    'True',
    'Unknown',
    'Running',
    'Pending',
    'CrashLoopBackOff',
    'LoadBalancer',
    'OnDelete',
    0,
    -1,
    1,
    2147483647,
  ),
  fc.double(),
  fc.integer(),
  fc.constantFrom(1e300, -1e300, 2 ** 53 + 2, 0.5, Number.NaN, Number.POSITIVE_INFINITY, -0),
  fc.string(),
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer({ min: 1, max: 1500 }).chain((depth) => fc.boolean().map((asArray) => nest(depth, asArray))),
  fc.array(
    fc.record(
      {
        type: fc.constantFrom('Ready', 'Reconciling', 'Stalled', 'Available', 'Progressing', 'PodScheduled'),
        status: fc.constantFrom('True', 'False', 'Unknown', 'Maybe'),
        reason: fc.string(),
        message: fc.string(),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 4 },
  ),
);

function setPath(target: Record<string, unknown>, path: readonly (string | number)[], value: unknown): void {
  let node: unknown = target;
  for (let i = 0; i < path.length - 1; i++) {
    if (typeof node !== 'object' || node === null) return;
    const container = node as Record<string | number, unknown>;
    const key = path[i] as string | number;
    if (typeof container[key] !== 'object' || container[key] === null)
      container[key] = typeof path[i + 1] === 'number' ? [] : {};
    node = container[key];
  }
  if (typeof node === 'object' && node !== null)
    (node as Record<string | number, unknown>)[path[path.length - 1] as string | number] = value;
}

const mutatedObject = fc
  .tuple(
    fc.nat({ max: BASES.length - 1 }),
    fc.array(fc.tuple(fc.constantFrom(...PATHS), nasty), { minLength: 1, maxLength: 4 }),
  )
  .map(([index, mutations]) => {
    const object = JSON.parse(BASES[index] ?? '{}') as Record<string, unknown>;
    for (const [path, value] of mutations) setPath(object, path, value);
    return object;
  });

const SHAPE: Record<string, string> = { Current: '', Terminating: '', InProgress: 'Reconciling', Failed: 'Stalled' };

/** Why a result is not a valid kstatus-shaped result, or undefined when it is. */
function findProblem(result: StatusResult): string | undefined {
  if (!isResourceStatus(result.status)) return `invalid status ${String(result.status)}`;
  if (typeof result.message !== 'string') return 'message is not a string';
  if (!Array.isArray(result.conditions)) return 'conditions is not a list';
  if (result.status === 'Unknown') return typeof result.reason === 'string' ? undefined : 'Unknown without a reason';
  const wanted = SHAPE[result.status];
  if (wanted === '' && result.conditions.length > 0) return `${result.status} with conditions`;
  if (wanted !== undefined && wanted !== '') {
    const [only, extra] = result.conditions;
    if (only === undefined || extra !== undefined || only.type !== wanted || only.status !== 'True')
      return `${result.status} without exactly one ${wanted}=True`;
    if (typeof only.reason !== 'string' || typeof only.message !== 'string')
      return 'condition reason/message not strings';
  }
  return undefined;
}

/** Fails the property with the problem as its message. */
function assertValid(result: StatusResult): void {
  const problem = findProblem(result);
  if (problem !== undefined) throw new Error(`${problem}: ${JSON.stringify(result)}`);
}

function sameResult(a: StatusResult, b: StatusResult): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

describe('computeStatus never throws', () => {
  it('gives a valid, deterministic status for 10,000 mutated real objects and leaves them untouched', () => {
    fc.assert(
      fc.property(mutatedObject, fc.array(mutatedObject, { maxLength: 1 }), (object, pods) => {
        const before = JSON.stringify(object);
        const result = computeStatus(object, { now: NOW, pods });
        assertValid(result);
        if (!sameResult(computeStatus(object, { now: NOW, pods }), result)) throw new Error('not deterministic');
        return JSON.stringify(object) === before;
      }),
      { numRuns: 10_000 },
    );
  });

  it('gives a valid status for 3,000 arbitrary values', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), nasty), (value) => {
        assertValid(computeStatus(value, { now: NOW }));
      }),
      { numRuns: 3_000 },
    );
  });

  it('summarises any mix of results with counts that add up', () => {
    fc.assert(
      fc.property(fc.array(mutatedObject, { maxLength: 8 }), (objects) => {
        const members = objects.map((o, i) => ({
          ref: { group: '', kind: 'X', namespace: 'ns', name: `m${i}` },
          ...computeStatus(o, { now: NOW }),
        }));
        const summary = summarizePhase(members, { now: NOW });
        expect(Object.values(summary.counts).reduce((a, b) => a + b, 0)).toBe(members.length);
        expect(summary.conditions.map((c) => c.type)).toEqual(['Ready', 'Reconciling', 'Stalled']);
      }),
      { numRuns: 500 },
    );
  });
});
