/**
 * The snapshot's side of dropped revision bodies. A watch cache drops a revision's body once a
 * committed snapshot stored it (src/kube/compact.ts), so a later observation may hold only the
 * hash. When the store has lost such a revision since (retention removed it with its deleted
 * phase, a restored database), recording fails with RevisionsMissingError before writing, the
 * snapshot reads those objects from the cluster here, outside any transaction, and records again.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../history/canonical-hash.ts';
import { redactObject, type RedactionOptions } from '../history/redact.ts';
import { releaseStoredBody } from '../kube/compact.ts';
import type { ClusterClient } from '../kube/cluster-client.ts';
import { readObjects, type ReadObjectsOptions } from '../kube/read-objects.ts';
import { keyOf } from '../kube/ref-keys.ts';
import type { ObjectRef } from '../inventory/types.ts';
import type { ObservedCluster } from './observe.ts';

/** Thrown when a revision the store lacks is read again and the object has changed on the API server since. */
export class RevisionMovedError extends Error {
  constructor(readonly hash: string) {
    super(
      `object revision ${hash} is no longer held and the object has changed on the API server since; the next snapshot records the new one`,
    );
    this.name = 'RevisionMovedError';
  }
}

/** Options of {@link readRevisionBodies}. */
export interface ReadRevisionBodiesOptions {
  read?: ReadObjectsOptions;
  redaction?: RedactionOptions;
}

/**
 * The redacted bodies of the revisions `hashes` names, read from the cluster by the refs the
 * observation read them by. Throws {@link RevisionMovedError} when an object is gone or no longer
 * hashes the same: the observation no longer describes it, and the next snapshot records the new one.
 */
export async function readRevisionBodies(
  cluster: ClusterClient,
  observed: ObservedCluster,
  hashes: readonly string[],
  options: ReadRevisionBodiesOptions = {},
): Promise<Map<string, Record<string, unknown>>> {
  const wanted = new Set(hashes);
  const refs = new Map<string, ObjectRef>();
  const { observation, sources } = observed;
  if (observation.outcome === 'ok') {
    observation.phases.forEach((phase, p) => {
      phase.resources.forEach((resource, r) => {
        const hash = resource.revision?.hash;
        const ref = sources.phases[p]?.refs[r];
        if (hash !== undefined && wanted.has(hash) && ref !== undefined && !refs.has(hash)) refs.set(hash, ref);
      });
    });
  }
  const read = await readObjects(cluster, [...refs.values()], { ...options.read, fromServer: true });
  const bodies = new Map<string, Record<string, unknown>>();
  for (const hash of hashes) {
    const ref = refs.get(hash);
    const object = ref === undefined ? undefined : read.objects.get(keyOf(ref));
    const body = object === undefined ? undefined : redactObject(object, options.redaction);
    if (body === undefined || createHash('sha256').update(canonicalJson(body)).digest('hex') !== hash)
      throw new RevisionMovedError(hash);
    bodies.set(hash, body);
  }
  return bodies;
}

/**
 * Tells the watch-cache records of a committed snapshot that the store holds their revisions (a
 * read resource's open interval refers to its revision, written now or before), so they may drop
 * their bodies. Unread resources kept their interval and are left alone.
 */
export function releaseStoredBodies({ observation, sources }: ObservedCluster): void {
  if (observation.outcome !== 'ok') return;
  observation.phases.forEach((phase, p) => {
    const records = sources.phases[p]?.records;
    if (records === undefined) return;
    phase.resources.forEach((resource, r) => {
      const record = records[r];
      // Only a revision that is the record's own (not redacted anew under other options) was stored as the record holds it.
      if (record !== undefined && resource.unread !== true && resource.revision?.digest === record.digest)
        releaseStoredBody(record);
    });
  });
}
