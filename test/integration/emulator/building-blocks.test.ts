/**
 * The emulator's pure building blocks, table-driven: selector parsing and matching, the patch
 * flavours, and kubectl's age format.
 */
import { describe, expect, it } from 'vitest';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from '../../../src/emulator/patch.ts';
import { matchesLabels, parseFieldSelector, parseLabelSelector } from '../../../src/emulator/selectors.ts';
import { formatAge } from '../../../src/emulator/table.ts';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'frontend', 'example.com/team': 'a' };
  it.each([
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['tier in (frontend, backend)', true],
    ['tier notin (frontend)', false],
    ['missing notin (x)', true],
    ['example.com/team', true],
    ['!example.com/team', false],
    ['!missing', true],
    ['app=web,tier in (backend)', false],
    ['', true],
    ['app=', false],
  ])('"%s" matches the labels: %s', (selector, expected) => {
    const parsed = parseLabelSelector(selector);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(matchesLabels(parsed.value, labels)).toBe(expected);
  });

  it.each(['a b c', 'tier in (x y)', '=web', 'app=web,', 'app=we b'])('rejects "%s"', (selector) => {
    expect(parseLabelSelector(selector).ok).toBe(false);
  });

  it('rejects unsupported field selectors and accepts the per-kind ones', () => {
    expect(parseFieldSelector('status.phase=Running', []).ok).toBe(false);
    expect(parseFieldSelector('status.phase=Running', ['status.phase']).ok).toBe(true);
    expect(parseFieldSelector('metadata.name!=x,metadata.namespace=y', []).ok).toBe(true);
  });
});

describe('patches', () => {
  it('merge patch removes nulls and replaces lists', () => {
    expect(applyMergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, { b: { c: null, e: 4 }, l: [3] })).toEqual({
      a: 1,
      b: { d: 3, e: 4 },
      l: [3],
    });
  });

  it.each([
    ['add to an array end', [{ op: 'add', path: '/l/-', value: 9 }], { l: [1, 2, 9], m: { k: 'v' } }],
    ['insert into an array', [{ op: 'add', path: '/l/0', value: 0 }], { l: [0, 1, 2], m: { k: 'v' } }],
    ['replace through an escaped key', [{ op: 'replace', path: '/m/k', value: 'w' }], { l: [1, 2], m: { k: 'w' } }],
    ['move a value', [{ op: 'move', from: '/m/k', path: '/k' }], { l: [1, 2], m: {}, k: 'v' }],
    ['copy a value', [{ op: 'copy', from: '/l/1', path: '/c' }], { l: [1, 2], m: { k: 'v' }, c: 2 }],
  ])('JSON patch: %s', (_what, ops, expected) => {
    const r = applyJsonPatch({ l: [1, 2], m: { k: 'v' } }, ops);
    expect(r).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['remove a missing key', [{ op: 'remove', path: '/nope' }]],
    ['a failed test', [{ op: 'test', path: '/l/0', value: 5 }]],
    ['an unknown op', [{ op: 'frobnicate', path: '/l' }]],
    ['a non-array body', { op: 'add' }],
  ])('JSON patch fails as data on %s', (_what, ops) => {
    expect(applyJsonPatch({ l: [1, 2] }, ops).ok).toBe(false);
  });

  it('strategic merge merges containers by name, env by name and finalizers as a set', () => {
    const current = {
      metadata: { finalizers: ['a'] },
      spec: {
        containers: [
          { name: 'main', image: 'x:1', env: [{ name: 'A', value: '1' }] },
          { name: 'side', image: 'y:1' },
        ],
      },
    };
    const patch = {
      metadata: { finalizers: ['b'] },
      spec: {
        '$setElementOrder/containers': [{ name: 'main' }],
        containers: [
          { name: 'main', env: [{ name: 'B', value: '2' }] },
          { name: 'side', $patch: 'delete' },
        ],
      },
    };
    expect(applyStrategicMergePatch(current, patch)).toEqual({
      metadata: { finalizers: ['a', 'b'] },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'x:1',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
          },
        ],
      },
    });
  });

  it('strategic merge honours $retainKeys and $deleteFromPrimitiveList', () => {
    const current = {
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
      metadata: { finalizers: ['a', 'b'] },
    };
    const patch = {
      strategy: { $retainKeys: ['type'], type: 'Recreate' },
      metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] },
    };
    expect(applyStrategicMergePatch(current, patch)).toEqual({
      strategy: { type: 'Recreate' },
      metadata: { finalizers: ['b'] },
    });
  });
});

describe('age column', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  it.each([
    [5, '5s'],
    [119, '119s'],
    [125, '2m5s'],
    [600, '10m'],
    [3 * 3600, '3h'],
    [3 * 3600 + 600, '3h10m'],
    [30 * 3600, '30h'],
    [3 * 86400 + 3600, '3d1h'],
    [40 * 86400, '40d'],
    [3 * 365 * 86400, '3y'],
  ])('%i seconds old prints as %s', (seconds, expected) => {
    expect(formatAge(new Date(now - seconds * 1000).toISOString(), now)).toBe(expected);
  });

  it('prints <unknown> without a timestamp', () => {
    expect(formatAge(undefined, now)).toBe('<unknown>');
  });
});
