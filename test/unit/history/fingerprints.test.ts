import { describe, expect, it } from 'vitest';
import { storedMatchesObserved } from '../../../src/history/fingerprints.ts';
import type { ObservedResource, OpenResourceInterval } from '../../../src/history/types.ts';

const observed: ObservedResource[] = [
  { key: 'apps/Deployment/shop/web', status: 'Current', message: 'Deployment is available. Replicas: 2', conditions: [], presence: 'Present', generation: 3, observedGeneration: 3, revision: { hash: 'abc', body: {} } },
  { key: 'apps/Deployment/shop/api', status: 'Unknown', reason: 'TIMEOUT', message: 'a "quoted" \u2028 message', conditions: [], presence: 'Unknown', unread: true },
  { key: 'kafka.strimzi.io/Kafka/shop/k', status: 'Failed', message: '', conditions: [], presence: 'Present', customHealth: { engine: 'lua', source: 'kafka.strimzi.io/Kafka', health: 'Degraded', message: 'x' } },
];

describe('resource fingerprints', () => {
  // As the store reads an interval back (an unread resource's interval is stored with its observed fields).
  const storedFrom = (r: ObservedResource): OpenResourceInterval => ({
    resourceId: 1, from: new Date(), resourceKey: r.key, status: r.status, reason: r.reason ?? null, message: r.message, presence: r.presence,
    generation: r.generation ?? null, observedGeneration: r.observedGeneration ?? null, revisionHash: r.revision?.hash ?? null, customHealth: r.customHealth?.health ?? null,
  });

  it.each(observed.filter((r) => r.unread !== true).map((r) => [r.key, r] as const))('of %s match the interval stored from it: the next observation extends it', (_key, r) => {
    expect(storedMatchesObserved(storedFrom(r), r)).toBe(true);
  });

  it('of an unread resource never match: what could not be read does not extend what was stored', () => {
    const r = observed[1] as ObservedResource;
    expect(storedMatchesObserved(storedFrom(r), r)).toBe(false);
  });

  it.each([
    ['status', { status: 'InProgress' }],
    ['reason', { reason: 'Progressing' }],
    ['message', { message: 'Deployment is available. Replicas: 3' }],
    ['presence', { presence: 'Absent' }],
    ['generation', { generation: 4 }],
    ['observed generation', { observedGeneration: null }],
    ['revision', { revisionHash: 'abd' }],
    ['custom health', { customHealth: 'Healthy' }],
  ] as const)('of a stored interval with another %s do not match', (_field, change) => {
    const r = observed[0] as ObservedResource;
    expect(storedMatchesObserved({ ...storedFrom(r), ...change } as OpenResourceInterval, r)).toBe(false);
  });
});
