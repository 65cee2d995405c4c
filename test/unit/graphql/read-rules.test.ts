/** Pure rules of the read side: change matching (live subscriptions), manifest diffs, query pricing. */
import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createLimitsRule } from '../../../src/graphql/limits.ts';
import { changeMatches } from '../../../src/services/read-change-feed.ts';
import { diffEntries } from '../../../src/services/read-manifests.ts';
import type { StatusChangeItem } from '../../../src/store/read-types.ts';

const change: StatusChangeItem = {
  seq: 7n, at: new Date(0), cluster: 'prod', phaseId: 3, phase: { source: 'cli-utils', namespace: 'shop', name: 'web' },
  scope: 'phase', resourceKey: null, fromStatus: 'Current', toStatus: 'Failed', message: '',
};
const clusterChange: StatusChangeItem = { ...change, phaseId: null, phase: null, scope: 'cluster', toStatus: 'Unreachable' };
const all = { clusters: [], namespaces: [] };

describe('changeMatches', () => {
  it.each([
    ['no restriction, no filter', change, all, {}, true],
    ['another cluster is hidden', change, { clusters: ['staging'], namespaces: [] }, {}, false],
    ['another namespace is hidden', change, { clusters: [], namespaces: ['payments'] }, {}, false],
    ['its own namespace is visible', change, { clusters: ['prod'], namespaces: ['shop'] }, {}, true],
    ['a cluster change is visible to a namespace-restricted token of that cluster', clusterChange, { clusters: ['prod'], namespaces: ['payments'] }, {}, true],
    ['filter by phase id', change, all, { phaseId: 4 }, false],
    ['filter by scope', change, all, { scopes: ['resource'] }, false],
    ['filter by target status', change, all, { toStatus: ['Failed'] }, true],
    ['a change to nothing never matches a status filter', { ...change, toStatus: null }, all, { toStatus: ['Failed'] }, false],
    ['filter by namespace excludes cluster changes', clusterChange, all, { namespace: 'shop' }, false],
  ] as const)('%s', (_name, item, scope, filter, expected) => {
    expect(changeMatches(item, scope, filter)).toBe(expected);
  });
});

describe('diffEntries', () => {
  const e = (kind: string, name: string, version?: string) => ({ group: kind === 'Deployment' ? 'apps' : '', kind, namespace: 'shop', name, ...(version ? { version } : {}) });
  it('names entries added and removed, ignoring versions', () => {
    expect(diffEntries([e('Deployment', 'web', 'v1'), e('Service', 'web')], [e('Deployment', 'web', 'v2'), e('ConfigMap', 'cfg')])).toEqual({
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
  const errorsOf = (query: string, limits = { maxDepth: 4, maxCost: 100 }) =>
    validate(schema, parse(query), [...specifiedRules, createLimitsRule(limits)]).map((e) => e.message);

  it.each([
    ['a flat field', '{ one { id } }', []],
    ['page sizes multiply what they select: 1 + 10 * (1 + 1 + 5 * 1) = 71', '{ items { id children { id } } }', []],
    ['an explicit page size counts: 1 + 20 * (1 + 1 + 5) = 141', '{ items(first: 20) { id children { id } } }', ['the query costs 141; the limit is 100 (a field with first: N counts what it selects N times)']],
    ['a variable page size counts as the largest page (100): 1 + 100 * 1', 'query($n: Int) { items(first: $n) { id } }', ['the query costs 101; the limit is 100 (a field with first: N counts what it selects N times)']],
    ['depth counts nested fields (cost 1 + 1 + 5 * (1 + 5 * (1 + 5)) = 157)', '{ one { children { children { children { id } } } } }', ['the query is 5 levels deep; the limit is 4', COST_157]],
    ['fragments count where they are spread', 'fragment F on Item { children { children { id } } } { one { children { ...F } } }', ['the query is 5 levels deep; the limit is 4', COST_157]],
  ])('%s', (_name, query, expected) => {
    expect(errorsOf(query)).toEqual(expected);
  });
});
