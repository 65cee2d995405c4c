import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/history/canonical-hash.ts';
import { fingerprintObservedResource, fingerprintStoredResource, rememberStoredFingerprint } from '../../../src/history/fingerprints.ts';
import type { ObservedResource, OpenResourceInterval } from '../../../src/history/types.ts';

const observed: ObservedResource[] = [
  { key: 'apps/Deployment/shop/web', status: 'Current', message: 'Deployment is available. Replicas: 2', conditions: [], presence: 'Present', generation: 3, observedGeneration: 3, revision: { hash: 'abc', body: {} } },
  { key: 'apps/Deployment/shop/api', status: 'Unknown', reason: 'TIMEOUT', message: 'a "quoted" \u2028 message', conditions: [], presence: 'Unknown', unread: true },
  { key: 'kafka.strimzi.io/Kafka/shop/k', status: 'Failed', message: '', conditions: [], presence: 'Present', customHealth: { engine: 'lua', source: 'kafka.strimzi.io/Kafka', health: 'Degraded', message: 'x' } },
];

describe('resource fingerprints', () => {
  it.each(observed.map((r) => [r.key, r] as const))('of %s are the canonical JSON of their fields (stored hashes stay valid)', (_key, r) => {
    expect(fingerprintObservedResource(r)).toBe(canonicalJson([r.status, r.reason ?? null, r.message, r.presence, r.generation ?? null, r.observedGeneration ?? null, r.revision?.hash ?? null, r.customHealth?.health ?? null, r.unread === true]));
  });

  it('of a stored interval equal those of the same observation', () => {
    const r = observed[0] as ObservedResource;
    const stored: OpenResourceInterval = { resourceId: 1, from: new Date(), resourceKey: r.key, status: r.status, reason: null, message: r.message, presence: r.presence, generation: 3, observedGeneration: 3, revisionHash: 'abc', customHealth: null };
    expect(fingerprintStoredResource(stored)).toBe(fingerprintObservedResource(r));
    expect(fingerprintStoredResource({ ...stored, status: 'InProgress' })).not.toBe(fingerprintObservedResource(r));
  });

  it.each(observed.map((r) => [r.key, r] as const))('of a stored interval made from %s are what they would be if it was read back', (_key, r) => {
    // As the store reads it back (an unread resource's interval is stored with its observed fields).
    const made = (): OpenResourceInterval => ({
      resourceId: 1, from: new Date(), resourceKey: r.key, status: r.status, reason: r.reason ?? null, message: r.message, presence: r.presence,
      generation: r.generation ?? null, observedGeneration: r.observedGeneration ?? null, revisionHash: r.revision?.hash ?? null, customHealth: r.customHealth?.health ?? null,
    });
    const remembered = made();
    rememberStoredFingerprint(remembered, r);
    expect(fingerprintStoredResource(remembered)).toBe(fingerprintStoredResource(made()));
  });
});
