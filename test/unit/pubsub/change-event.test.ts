/**
 * The live status-change event on Redis: the JSON other processes (API replicas of this or the
 * previous release) read, and the StatusChange decoded from it, seq and time intact.
 */
import { describe, expect, it } from 'vitest';
import type { StatusChange } from '../../../src/history/types.ts';
import { decodeChangeEvent, encodeChangeEvent } from '../../../src/pubsub/change-event.ts';

const change: StatusChange = {
  seq: 9_007_199_254_740_993n,
  at: new Date('2026-11-26T10:11:12.345Z'),
  cluster: 'prod',
  clusterId: 2,
  phaseId: 7,
  phase: { sourceKind: 'cli-utils', namespace: 'shop', name: 'web' },
  scope: 'resource',
  resourceKey: 'apps/Deployment/shop/web',
  fromStatus: 'Current',
  toStatus: 'InProgress',
  message: 'Replicas: 1/3',
};

describe('the change event', () => {
  it('is JSON with seq as a decimal string and the time in ISO 8601', () => {
    expect(JSON.parse(encodeChangeEvent(change))).toEqual({
      seq: '9007199254740993',
      at: '2026-11-26T10:11:12.345Z',
      cluster: 'prod',
      clusterId: 2,
      phaseId: 7,
      phase: { sourceKind: 'cli-utils', namespace: 'shop', name: 'web' },
      scope: 'resource',
      resourceKey: 'apps/Deployment/shop/web',
      fromStatus: 'Current',
      toStatus: 'InProgress',
      message: 'Replicas: 1/3',
    });
  });

  it('decodes to the change it encodes, a seq beyond 2^53 included', () => {
    expect(decodeChangeEvent(encodeChangeEvent(change))).toEqual(change);
    const reachability: StatusChange = {
      ...change,
      phaseId: null,
      phase: null,
      scope: 'cluster',
      resourceKey: null,
      fromStatus: null,
      toStatus: 'Reachable',
    };
    expect(decodeChangeEvent(encodeChangeEvent(reachability))).toEqual(reachability);
  });

  it.each([
    ['text that is not JSON', 'not json'],
    ['a seq that is no number', JSON.stringify({ ...JSON.parse(encodeChangeEvent(change)), seq: '12a' })],
    ['a time that is no time', JSON.stringify({ ...JSON.parse(encodeChangeEvent(change)), at: 'yesterday' })],
    ['an unknown scope', JSON.stringify({ ...JSON.parse(encodeChangeEvent(change)), scope: 'namespace' })],
    ['a missing message', JSON.stringify({ ...JSON.parse(encodeChangeEvent(change)), message: undefined })],
  ])('is ignored when it carries %s', (_name, text) => {
    expect(decodeChangeEvent(text)).toBeUndefined();
  });
});
