import { describe, expect, it } from 'vitest';
import { hashStrings } from '../../../src/history/canonical-hash.ts';
import { digestOfHex, revisionDigest, storedMatchesObserved } from '../../../src/history/fingerprints.ts';
import type { ObservedResource, OpenResourceInterval } from '../../../src/history/types.ts';

const WEB = hashStrings(['web, revision 1']);
const WEB_NEXT = hashStrings(['web, revision 2']);

const observed: ObservedResource[] = [
  {
    key: 'apps/Deployment/shop/web',
    status: 'Current',
    message: 'Deployment is available. Replicas: 2',
    conditions: [],
    presence: 'Present',
    generation: 3,
    observedGeneration: 3,
    revision: { hash: WEB, body: {} },
  },
  {
    key: 'apps/Deployment/shop/api',
    status: 'Unknown',
    reason: 'TIMEOUT',
    message: 'a "quoted" \u2028 message',
    conditions: [],
    presence: 'Unknown',
    unread: true,
  },
  {
    key: 'kafka.strimzi.io/Kafka/shop/k',
    status: 'Failed',
    message: '',
    conditions: [],
    presence: 'Present',
    customHealth: { engine: 'lua', source: 'kafka.strimzi.io/Kafka', health: 'Degraded', message: 'x' },
  },
];

describe('resource fingerprints', () => {
  // As the store reads an interval back (an unread resource's interval is stored with its observed fields).
  const storedFrom = (r: ObservedResource): OpenResourceInterval => ({
    resourceId: 1,
    from: new Date(),
    resourceKey: r.key,
    recorded: {
      status: r.status,
      reason: r.reason ?? null,
      message: r.message,
      presence: r.presence,
      customHealth: r.customHealth?.health ?? null,
      applied: r.applied ?? null,
    },
    generation: r.generation ?? null,
    observedGeneration: r.observedGeneration ?? null,
    revisionDigest: r.revision === undefined ? null : digestOfHex(r.revision.hash),
  });

  it.each(observed.filter((r) => r.unread !== true).map((r) => [r.key, r] as const))(
    'of %s match the interval stored from it: the next observation extends it',
    (_key, r) => {
      expect(storedMatchesObserved(storedFrom(r), r)).toBe(true);
    },
  );

  it('of an unread resource never match: what could not be read does not extend what was stored', () => {
    const r = observed[1] as ObservedResource;
    expect(storedMatchesObserved(storedFrom(r), r)).toBe(false);
  });

  it.each([
    ['status', { status: 'InProgress' }],
    ['reason', { reason: 'Progressing' }],
    ['message', { message: 'Deployment is available. Replicas: 3' }],
    ['presence', { presence: 'Absent' }],
    ['custom health', { customHealth: 'Healthy' }],
    ['applier status', { applied: { actuation: 'Pending' } }],
  ] as const)('of a stored interval with another %s do not match', (_field, change) => {
    const r = observed[0] as ObservedResource;
    const stored = storedFrom(r);
    expect(storedMatchesObserved({ ...stored, recorded: { ...stored.recorded, ...change } }, r)).toBe(false);
  });

  it.each([
    ['generation', { generation: 4 }],
    ['observed generation', { observedGeneration: null }],
    ['revision', { revisionDigest: digestOfHex(WEB_NEXT) }],
    ['revision (none stored)', { revisionDigest: null }],
  ] as const)('of a stored interval with another %s do not match', (_field, change) => {
    const r = observed[0] as ObservedResource;
    expect(storedMatchesObserved({ ...storedFrom(r), ...change } as OpenResourceInterval, r)).toBe(false);
  });

  // A watch cache's revision carries its digest; a listed object's has the hex hash only. The
  // stored interval holds the digest either way (made from the hex when loaded from the store).
  const digestForm = (hash: string) => ({ hash, digest: digestOfHex(hash), body: {} });
  it.each([
    ['hex hash only', { hash: WEB, body: {} }, true],
    ['digest', digestForm(WEB), true],
    ['another hex hash', { hash: WEB_NEXT, body: {} }, false],
    ['another digest', digestForm(WEB_NEXT), false],
  ] as const)('of a stored revision compared with an observed one given by its %s', (_form, revision, same) => {
    const r = observed[0] as ObservedResource;
    expect(storedMatchesObserved(storedFrom(r), { ...r, revision })).toBe(same);
  });

  it('take a revision without a digest as 32 latin1 characters of its sha256, and one with a digest as that digest', () => {
    const digest = revisionDigest({ hash: WEB, body: {} });
    expect(digest).toHaveLength(32);
    expect(Buffer.from(digest, 'latin1').toString('hex')).toBe(WEB);
    expect(revisionDigest({ hash: WEB, digest, body: {} })).toBe(digest);
  });
});
