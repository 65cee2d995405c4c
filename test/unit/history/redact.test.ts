import { describe, expect, it } from 'vitest';
import { canonicalJson, hashDocument } from '../../../src/history/canonical-hash.ts';
import { hashRedacted, redactObject } from '../../../src/history/redact.ts';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'shop',
    generation: 4,
    resourceVersion: '1234',
    managedFields: [{ manager: 'kubectl' }],
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': '{"secret":"x"}',
      'example.com/token': 't0k3n',
      team: 'web',
    },
  },
  spec: { replicas: 2 },
  status: { readyReplicas: 2 },
};

describe('redacting stored objects', () => {
  it.each([
    [
      'Secret data and stringData',
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's' },
        data: { p: 'aGk=' },
        stringData: { q: 'hi' },
        type: 'Opaque',
      },
      ['"data"', 'stringData', 'aGk='],
      ['"type"'],
    ],
    [
      'status, resourceVersion, managedFields and last-applied',
      deployment,
      ['"status"', 'resourceVersion', 'managedFields', 'last-applied-configuration'],
      ['"spec"', '"team"'],
    ],
  ])('drops %s', (_what, object, absent, present) => {
    const text = canonicalJson(redactObject(object as Record<string, unknown>));
    for (const fragment of absent) expect(text).not.toContain(fragment);
    for (const fragment of present) expect(text).toContain(fragment);
  });

  it('drops configured annotations and leaves the input untouched', () => {
    const before = canonicalJson(deployment);
    const redacted = redactObject(deployment, { dropAnnotations: ['example.com/token'] });
    expect((redacted.metadata as { annotations: object }).annotations).toEqual({ team: 'web' });
    expect(canonicalJson(deployment)).toBe(before);
  });

  it('hashes the same object equally whatever its key order, and ignores status-only writes', () => {
    const reordered = {
      status: { readyReplicas: 1 },
      spec: { replicas: 2 },
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { ...deployment.metadata, resourceVersion: '9999' },
    };
    expect(hashRedacted(reordered).hash).toBe(hashRedacted(deployment).hash);
    expect(hashRedacted({ ...deployment, spec: { replicas: 3 } }).hash).not.toBe(hashRedacted(deployment).hash);
    expect(hashDocument({ a: 1, b: [1, { c: 2 }] })).toBe(hashDocument({ b: [1, { c: 2 }], a: 1 }));
  });
});
