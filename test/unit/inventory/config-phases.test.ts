import { describe, expect, it } from 'vitest';
import { parseInventory } from '../../../src/inventory/parse-inventory.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';
import { matchesSelector, selectEntries } from '../../../src/inventory/selector.ts';
import type { LabelSelector, Phase } from '../../../src/inventory/types.ts';

function phaseOf(def: unknown): Phase {
  const result = parseInventory(def);
  if (!result.ok) throw new Error(result.error.message);
  return result.phase;
}

const deployment = (namespace: string, name: string, labels: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { namespace, name, labels },
});

describe('phases declared as lists in config', () => {
  it('accepts ObjMetadata strings and objects, core group and cluster scope included', () => {
    const phase = phaseOf({
      name: 'base',
      resources: [
        '_shop__Namespace',
        { kind: 'Service', namespace: 'shop', name: 'web' },
        { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web', version: 'v1' },
      ],
    });
    expect(phase).toMatchObject({ source: 'config', id: 'base', name: 'base', errors: [] });
    expect(phase.entries.map(refKey)).toEqual(['/Namespace//shop', '/Service/shop/web', 'apps/Deployment/shop/web']);
  });

  it('keeps good entries and names the bad one', () => {
    const phase = phaseOf({
      name: 'base',
      resources: ['nonsense', { kind: 'Service', namespace: 'shop', name: 'web' }, { name: 'no-kind' }],
    });
    expect(phase.entries.map(refKey)).toEqual(['/Service/shop/web']);
    expect(phase.errors.map((e) => [e.code, e.entry])).toEqual([
      ['MALFORMED_ID', 'nonsense'],
      ['MALFORMED_ENTRY', 'resources[2]'],
    ]);
  });
});

describe('label-selector phases', () => {
  const def = {
    name: 'frontend',
    selector: {
      matchLabels: { app: 'shop' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }],
    },
    kinds: ['apps/Deployment', 'Service'],
    namespaces: ['shop'],
  };

  it('fills entries only from objects of the declared kinds, namespaces and labels', () => {
    const phase = selectEntries(phaseOf(def), [
      deployment('shop', 'web', { app: 'shop', tier: 'web' }),
      deployment('shop', 'db', { app: 'shop', tier: 'db' }),
      deployment('other', 'web', { app: 'shop', tier: 'web' }),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { namespace: 'shop', name: 'api', labels: { app: 'shop', tier: 'api' } },
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace: 'shop', name: 'cfg', labels: { app: 'shop', tier: 'web' } },
      },
    ]);
    expect(phase.source).toBe('selector');
    expect(phase.entries.map(refKey)).toEqual(['/Service/shop/api', 'apps/Deployment/shop/web']);
    expect(phase.entries[1]?.version).toBe('v1');
  });

  it.each<[string, LabelSelector, Record<string, unknown>, boolean]>([
    ['empty selector matches everything', {}, { a: '1' }, true],
    [
      'NotIn matches a missing label',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
      {},
      true,
    ],
    [
      'NotIn rejects a listed value',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
      { tier: 'db' },
      false,
    ],
    ['Exists needs the key', { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, { app: 'x' }, false],
    [
      'DoesNotExist rejects the key',
      { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
      { tier: '' },
      false,
    ],
    ['matchLabels needs equal values', { matchLabels: { app: 'shop' } }, { app: 'shop2' }, false],
    [
      'a label named like an Object method is absent when not set',
      { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] },
      {},
      false,
    ],
    [
      'a label value that is not a string is absent',
      { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
      { tier: 3 },
      true,
    ],
  ])('%s', (_label, selector, labels, expected) => {
    expect(matchesSelector(labels, selector)).toBe(expected);
  });

  it.each([
    [
      'an unknown operator',
      { ...def, selector: { matchExpressions: [{ key: 'a', operator: 'Like', values: ['x'] }] } },
      'operator',
    ],
    [
      'In without values',
      { ...def, selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      'at least one value',
    ],
    ['no kinds', { ...def, kinds: [] }, 'kinds'],
    ['a kind with too many slashes', { ...def, kinds: ['a/b/c'] }, 'a/b/c'],
  ])('rejects a selector phase with %s', (_label, bad, fragment) => {
    const result = parseInventory(bad);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('MALFORMED_SELECTOR');
      expect(result.error.message).toContain(fragment);
    }
  });
});
