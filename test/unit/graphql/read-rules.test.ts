/** Pure rules of the read side: change matching (live subscriptions), manifest diffs, query pricing. */
import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createLimitRules, DEFAULT_LIMITS } from '../../../src/graphql/limits.ts';
import { changeMatches } from '../../../src/services/read-change-feed.ts';
import { diffEntries } from '../../../src/services/read-manifests.ts';
import type { StatusChange } from '../../../src/history/types.ts';

const change: StatusChange = {
  seq: 7n,
  at: new Date(0),
  cluster: 'prod',
  clusterId: 1,
  phaseId: 3,
  phase: { sourceKind: 'cli-utils', namespace: 'shop', name: 'web' },
  scope: 'phase',
  resourceKey: null,
  fromStatus: 'Current',
  toStatus: 'Failed',
  message: '',
};
const clusterChange: StatusChange = {
  ...change,
  phaseId: null,
  phase: null,
  scope: 'cluster',
  toStatus: 'Unreachable',
};
const all = { clusters: [], namespaces: [] };

describe('changeMatches', () => {
  it.each([
    ['no restriction, no filter', change, all, {}, true],
    ['another cluster is hidden', change, { clusters: ['staging'], namespaces: [] }, {}, false],
    ['another namespace is hidden', change, { clusters: [], namespaces: ['payments'] }, {}, false],
    ['its own namespace is visible', change, { clusters: ['prod'], namespaces: ['shop'] }, {}, true],
    [
      'a cluster change is visible to a namespace-restricted token of that cluster',
      clusterChange,
      { clusters: ['prod'], namespaces: ['payments'] },
      {},
      true,
    ],
    ['filter by phase id', change, all, { phaseId: 4 }, false],
    ['filter by scope', change, all, { scopes: ['resource'] }, false],
    ['filter by target status', change, all, { toStatus: ['Failed'] }, true],
    [
      'a change to nothing never matches a status filter',
      { ...change, toStatus: null },
      all,
      { toStatus: ['Failed'] },
      false,
    ],
    ['filter by namespace excludes cluster changes', clusterChange, all, { namespace: 'shop' }, false],
  ] as const)('%s', (_name, item, scope, filter, expected) => {
    expect(changeMatches(item, scope, filter)).toBe(expected);
  });
});

describe('diffEntries', () => {
  const e = (kind: string, name: string, version?: string) => ({
    group: kind === 'Deployment' ? 'apps' : '',
    kind,
    namespace: 'shop',
    name,
    ...(version ? { version } : {}),
  });
  it('names entries added and removed, ignoring versions', () => {
    expect(
      diffEntries(
        [e('Deployment', 'web', 'v1'), e('Service', 'web')],
        [e('Deployment', 'web', 'v2'), e('ConfigMap', 'cfg')],
      ),
    ).toEqual({
      added: [e('ConfigMap', 'cfg')],
      removed: [e('Service', 'web')],
    });
  });
});

const COST_157 = 'the query costs 157; the limit is 100 (a field with first: N counts what it selects N times)';

describe('query limits', () => {
  const schema = buildSchema(`
    type Query { items(first: Int = 10): [Item!]! one: Item }
    type Item { id: ID! children(first: Int = 5): [Item!]! }
  `);
  const errorsOf = (query: string) =>
    validate(schema, parse(query), [
      ...specifiedRules,
      ...createLimitRules({ ...DEFAULT_LIMITS, maxDepth: 4, maxCost: 100, maxAliases: 3 }),
    ]).map((e) => e.message);
  const DEEP = 'the query is more than 4 levels deep (the limit)';

  it.each([
    ['a flat field', '{ one { id } }', []],
    ['page sizes multiply what they select: 1 + 10 * (1 + 1 + 5 * 1) = 71', '{ items { id children { id } } }', []],
    [
      'an explicit page size counts: 1 + 20 * (1 + 1 + 5) = 141',
      '{ items(first: 20) { id children { id } } }',
      ['the query costs 141; the limit is 100 (a field with first: N counts what it selects N times)'],
    ],
    [
      'a variable page size counts as the largest page (100): 1 + 100 * 1',
      'query($n: Int) { items(first: $n) { id } }',
      ['the query costs 101; the limit is 100 (a field with first: N counts what it selects N times)'],
    ],
    [
      'depth counts nested fields (cost 1 + 1 + 5 * (1 + 5 * (1 + 5)) = 157)',
      '{ one { children { children { children { id } } } } }',
      [DEEP, COST_157],
    ],
    [
      'fragments count where they are spread',
      'fragment F on Item { children { children { id } } } { one { children { ...F } } }',
      [DEEP, COST_157],
    ],
    [
      'a negative page size is refused, and not costed',
      '{ a: items(first: -2147483648) { id children { id } } b: items(first: 100) { id children { id } } }',
      ['items: first must be between 1 and 100, got -2147483648'],
    ],
    ['a page size of 0 is refused', '{ items(first: 0) { id } }', ['items: first must be between 1 and 100, got 0']],
    [
      'a page size over the largest page is refused',
      '{ items(first: 101) { id } }',
      ['items: first must be between 1 and 100, got 101'],
    ],
    [
      'a page size inside a fragment is refused',
      'fragment F on Item { children(first: -1) { id } } { one { ...F } }',
      ['children: first must be between 1 and 100, got -1'],
    ],
    [
      'aliases count, __typename too',
      '{ a: __typename b: __typename c: __typename d: __typename }',
      ['the query has more than 3 aliases (the limit)'],
    ],
    [
      'a fragment spread twice counts twice: 2 * 2 * 2 * 50 = 400',
      'fragment A on Query { items(first: 49) { id } } fragment B on Query { ...A ... on Query { ...A } } fragment C on Query { ...B ... on Query { ...B } } { ...C ... on Query { ...C } }',
      ['the query costs 400; the limit is 100 (a field with first: N counts what it selects N times)'],
    ],
    [
      'introspection is not counted in depth, and costs a fixed amount',
      '{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } }',
      ['the query costs 1000; the limit is 100 (a field with first: N counts what it selects N times)'],
    ],
  ])('%s', (_name, query, expected) => {
    expect(errorsOf(query)).toEqual(expected);
  });
});
