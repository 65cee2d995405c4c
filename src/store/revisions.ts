/**
 * Object revisions: content-addressed by the sha256 of their redacted canonical JSON, stored once
 * per hash whatever the number of resources and snapshots that reference them.
 */
import type { HashedDocument } from '../history/types.ts';
import type { Prisma } from '../generated/prisma/client.ts';

type Tx = Prisma.TransactionClient;

/** Rows per statement. */
const BATCH = 10_000;

/** Stores the revisions not stored yet; returns the id of every given hash. */
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
    await tx.$executeRaw`
      INSERT INTO "ObjectRevision" ("hash", "object")
      SELECT * FROM unnest(${hashes}::text[], ${hashes.map((h) => JSON.stringify((byHash.get(h) as HashedDocument).body))}::jsonb[])
      ON CONFLICT ("hash") DO NOTHING`;
    const rows = await tx.$queryRaw<{ id: number; hash: string }[]>`SELECT "id", "hash" FROM "ObjectRevision" WHERE "hash" = ANY(${hashes}::text[])`;
    for (const row of rows) ids.set(row.hash, row.id);
  }
  return ids;
}

