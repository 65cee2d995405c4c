/**
 * A polling worker remembers each listed object's revision digest by object version, so a tick
 * hashes only what changed. What a snapshot is handed must not depend on whether the digest was
 * remembered: the same hex hash, the digest of that hash, and the redacted body it is the hash of.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashDocument } from '../../../src/history/canonical-hash.ts';
import { digestOfHex } from '../../../src/history/fingerprints.ts';
import type { ClusterObservation, HashedDocument } from '../../../src/history/types.ts';
import { ObservationMemos } from '../../../src/snapshot/memos.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { applyFleet, namespaceOf, readyDeployment, type FleetShape } from './fleet.ts';
import { startEmulatedCluster, type EmulatedCluster } from './helpers.ts';

const SHAPE: FleetShape = { phases: 2, resourcesPerPhase: 2, phasesPerNamespace: 1 };

/** Each resource's revision, by key. */
function revisions(observation: ClusterObservation): Map<string, HashedDocument> {
  if (observation.outcome !== 'ok') throw new Error('emulated cluster unreachable');
  return new Map(
    observation.phases.flatMap((p) =>
      p.resources.flatMap((r) => (r.revision === undefined ? [] : [[r.key, r.revision] as const])),
    ),
  );
}

describe('revisions of listed objects across polling ticks', () => {
  let cluster: EmulatedCluster;

  beforeAll(async () => {
    cluster = await startEmulatedCluster('listed');
    applyFleet(cluster.emulator, SHAPE);
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('are the same whether the digest was remembered or hashed anew, and change with the object', async () => {
    const memos = new ObservationMemos();
    const redaction = { dropAnnotations: ['kubectl.kubernetes.io/last-applied-configuration'] };
    const first = revisions(await observeCluster(cluster.client, { memos, redaction }));
    const remembered = revisions(await observeCluster(cluster.client, { memos, redaction }));
    const fresh = revisions(await observeCluster(cluster.client, { memos: new ObservationMemos(), redaction }));
    expect(first.size).toBe(4);
    for (const [key, revision] of first) {
      const again = remembered.get(key) as HashedDocument;
      const body = again.body as Record<string, unknown>;
      expect(again.hash, key).toBe(revision.hash);
      expect(again.hash, key).toBe(fresh.get(key)?.hash);
      expect(again.digest, key).toBe(digestOfHex(revision.hash));
      expect(revision.digest, key).toBe(digestOfHex(revision.hash));
      // The body is the redacted object, and the hash is its hash.
      expect(hashDocument(body), key).toBe(again.hash);
      expect((body['metadata'] as { annotations?: Record<string, string> }).annotations ?? {}).not.toHaveProperty(
        'kubectl.kubernetes.io/last-applied-configuration',
      );
    }

    // A new image is a new object version: hashed again, the others still remembered.
    const changed = readyDeployment(namespaceOf(0, SHAPE), 'app-0-1');
    const spec = changed['spec'] as { template: { spec: { containers: { name: string; image: string }[] } } };
    spec.template.spec.containers = [{ name: 'app', image: 'nginx:1.28' }];
    cluster.emulator.apply([changed]);
    const after = revisions(await observeCluster(cluster.client, { memos, redaction }));
    const changedKey = `apps/Deployment/${namespaceOf(0, SHAPE)}/app-0-1`;
    for (const [key, revision] of after) {
      if (key === changedKey) {
        expect(revision.hash).not.toBe(first.get(key)?.hash);
        expect(hashDocument(revision.body as Record<string, unknown>)).toBe(revision.hash);
        expect(JSON.stringify(revision.body)).toContain('nginx:1.28');
      } else {
        expect(revision.hash, key).toBe(first.get(key)?.hash);
      }
      expect(revision.digest, key).toBe(digestOfHex(revision.hash));
    }
  });
});
