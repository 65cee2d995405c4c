/**
 * Object revisions: content-addressed by the sha256 of their redacted canonical JSON, stored once
 * per hash whatever the number of resources and snapshots that reference them.
 */
import type { HashedDocument } from '../history/types.ts';
import type { Prisma } from '../generated/prisma/client.ts';

type Tx = Prisma.TransactionClient;

/** Rows per statement. */
const BATCH = 10_000;

/**
 * Stores the revisions not stored yet; returns the id of every given hash. Only the revisions the
 * store lacks are read: a watch-cache revision may have dropped its body once a snapshot stored it
 * (src/kube/compact.ts), and is then read again from its source (`reloadBody`), only if the store
 * has lost it since (retention after its phase was deleted, a restored database).
 */
export async function storeRevisions(tx: Tx, revisions: HashedDocument[]): Promise<Map<string, number>> {
  // In hash order, as storeDetails, so concurrent snapshots never deadlock on the unique index.
  // Each hash and body is read once: a revision may make them on each read (src/kube/compact.ts).
  const byHash = new Map<string, HashedDocument>();
  for (const revision of revisions) {
    const hash = revision.hash;
    if (!byHash.has(hash)) byHash.set(hash, revision);
  }
  const sorted = [...byHash.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const ids = new Map<string, number>();
  for (let i = 0; i < sorted.length; i += BATCH) {
    const hashes = sorted.slice(i, i + BATCH);
    const known = await tx.$queryRaw<{ id: number; hash: string }[]>`SELECT "id", "hash" FROM "ObjectRevision" WHERE "hash" = ANY(${hashes}::text[])`;
    for (const row of known) ids.set(row.hash, row.id);
    const missing = hashes.filter((h) => !ids.has(h));
    if (missing.length === 0) continue;
    const bodies: string[] = [];
    for (const hash of missing) bodies.push(JSON.stringify(await bodyOf(byHash.get(hash) as HashedDocument)));
    const rows = await tx.$queryRaw<{ id: number; hash: string }[]>`
      INSERT INTO "ObjectRevision" ("hash", "object")
      SELECT * FROM unnest(${missing}::text[], ${bodies}::jsonb[])
      ON CONFLICT ("hash") DO NOTHING
      RETURNING "id", "hash"`;
    for (const row of rows) ids.set(row.hash, row.id);
    // Stored meanwhile by a concurrent snapshot (the insert skipped them): read their ids.
    const raced = missing.filter((h) => !ids.has(h));
    if (raced.length === 0) continue;
    const more = await tx.$queryRaw<{ id: number; hash: string }[]>`SELECT "id", "hash" FROM "ObjectRevision" WHERE "hash" = ANY(${raced}::text[])`;
    for (const row of more) ids.set(row.hash, row.id);
  }
  return ids;
}

/** A revision's body, read again from its source when the document dropped it. */
async function bodyOf(revision: HashedDocument): Promise<Record<string, unknown>> {
  return revision.reloadBody === undefined ? revision.body : revision.reloadBody();
}
