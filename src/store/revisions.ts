/**
 * Object revisions: content-addressed by the sha256 of their redacted canonical JSON, stored once
 * per hash whatever the number of resources and snapshots that reference them.
 */
import type { HashedDocument } from '../history/types.ts';
import type { RawTx } from './sql-transaction.ts';

type Tx = RawTx;

/** Rows per statement. */
const BATCH = 10_000;

/**
 * Thrown, before anything is inserted, when revisions the store lacks come without a body: their
 * source (a watch cache) dropped it because a snapshot had stored them, and the store has lost them
 * since (retention removed them with their deleted phase, or the database was restored). The
 * transaction rolls back; the caller reads these bodies from the cluster, outside any transaction,
 * and records again with them.
 */
export class RevisionsMissingError extends Error {
  constructor(readonly hashes: readonly string[]) {
    super(
      `${hashes.length} object revision(s) are neither stored nor held by the snapshot; read them from the cluster and record again`,
    );
    this.name = 'RevisionsMissingError';
  }
}

/**
 * Stores the revisions not stored yet; returns the id of every given hash. A revision without a
 * body (its source dropped it once stored) takes it from `bodies`, else fails the write with
 * {@link RevisionsMissingError} when the store no longer has it.
 */
export async function storeRevisions(
  tx: Tx,
  revisions: HashedDocument[],
  bodies: ReadonlyMap<string, Record<string, unknown>> = new Map(),
): Promise<Map<string, number>> {
  // In hash order, as storeDetails, so concurrent snapshots never deadlock on the unique index.
  // Each hash and body is read once: a cached revision makes them on each read (src/kube/compact.ts).
  const byHash = new Map<string, HashedDocument>();
  for (const revision of revisions) {
    const hash = revision.hash;
    if (!byHash.has(hash)) byHash.set(hash, revision);
  }
  const sorted = [...byHash.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const ids = new Map<string, number>();
  for (let i = 0; i < sorted.length; i += BATCH) {
    const hashes = sorted.slice(i, i + BATCH);
    const known = await tx.$queryRaw<
      { id: number; hash: string }[]
    >`SELECT "id", "hash" FROM "ObjectRevision" WHERE "hash" = ANY(${hashes}::text[])`;
    for (const row of known) ids.set(row.hash, row.id);
    const missing = hashes.filter((h) => !ids.has(h));
    if (missing.length === 0) continue;
    const bodyOf = new Map<string, Record<string, unknown>>();
    for (const hash of missing) {
      const body = (byHash.get(hash) as HashedDocument).body ?? bodies.get(hash);
      if (body !== undefined) bodyOf.set(hash, body);
    }
    const unheld = missing.filter((h) => !bodyOf.has(h));
    if (unheld.length > 0) throw new RevisionsMissingError(unheld);
    const rows = await tx.$queryRaw<{ id: number; hash: string }[]>`
      INSERT INTO "ObjectRevision" ("hash", "object")
      SELECT * FROM unnest(${missing}::text[], ${missing.map((h) => JSON.stringify(bodyOf.get(h)))}::jsonb[])
      ON CONFLICT ("hash") DO NOTHING
      RETURNING "id", "hash"`;
    for (const row of rows) ids.set(row.hash, row.id);
    // Stored meanwhile by a concurrent snapshot (the insert skipped them): read their ids.
    const raced = missing.filter((h) => !ids.has(h));
    if (raced.length === 0) continue;
    const more = await tx.$queryRaw<
      { id: number; hash: string }[]
    >`SELECT "id", "hash" FROM "ObjectRevision" WHERE "hash" = ANY(${raced}::text[])`;
    for (const row of more) ids.set(row.hash, row.id);
  }
  return ids;
}
