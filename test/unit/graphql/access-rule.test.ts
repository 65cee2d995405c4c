/** The access rule's JS forms: what a scope may see, and which scopes a restricted admin may manage. */
import { describe, expect, it } from 'vitest';
import { isAccessWithin, isRestricted, mayAccess, type AccessSubject } from '../../../src/store/access-rule.ts';
import { FULL_ACCESS, type AccessScope } from '../../../src/store/read-types.ts';

const scope = (clusters: string[], namespaces: string[]): AccessScope => ({ clusters, namespaces });
const phase = (cluster: string, namespace: string): AccessSubject => ({ cluster, namespace });

describe('mayAccess', () => {
  it.each([
    ['an unrestricted scope sees any phase', FULL_ACCESS, phase('prod', 'shop'), true],
    ['a cluster restriction hides other clusters', scope(['staging'], []), phase('prod', 'shop'), false],
    ['a namespace restriction hides other namespaces', scope([], ['pay']), phase('prod', 'shop'), false],
    ['both restrictions must hold', scope(['prod'], ['shop']), phase('prod', 'shop'), true],
    [
      'a cluster-level fact ignores the namespace restriction',
      scope(['prod'], ['pay']),
      { cluster: 'prod', namespace: null, clusterLevel: true },
      true,
    ],
    [
      'a cluster-level fact still needs its cluster',
      scope(['staging'], ['pay']),
      { cluster: 'prod', namespace: null, clusterLevel: true },
      false,
    ],
    [
      'an unknown namespace passes no namespace restriction',
      scope([], ['shop']),
      { cluster: 'prod', namespace: null },
      false,
    ],
    ['an unknown namespace is fine without one', scope(['prod'], []), { cluster: 'prod', namespace: null }, true],
  ])('%s', (_name, access, subject, expected) => {
    expect(mayAccess(access, subject)).toBe(expected);
  });

  it('an empty scope restricts nothing; any list does', () => {
    expect([FULL_ACCESS, scope(['prod'], []), scope([], ['shop'])].map(isRestricted)).toEqual([false, true, true]);
  });
});

describe('isAccessWithin', () => {
  it.each([
    ['anything is within an unrestricted scope', FULL_ACCESS, FULL_ACCESS, true],
    ['an unrestricted scope is not within a restricted one', FULL_ACCESS, scope(['prod'], []), false],
    ['some of the clusters are within', scope(['prod'], []), scope(['prod', 'staging'], []), true],
    ['another cluster is not', scope(['dev'], []), scope(['prod'], []), false],
    ['every namespace of the outer scope is not within it', scope(['prod'], []), scope(['prod'], ['shop']), false],
    ['a narrower namespace list is within', scope(['prod'], ['shop']), scope(['prod'], ['shop', 'pay']), true],
  ])('%s', (_name, inner, outer, expected) => {
    expect(isAccessWithin(inner, outer)).toBe(expected);
  });
});
