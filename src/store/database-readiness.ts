/**
 * The database's part of `/readyz`: whether it answers, and which of the migrations this build
 * ships it has not applied (a process must not serve on a schema older than its code).
 */
import type { Db } from './db.ts';
import { sqlOn } from './sql-transaction.ts';

/** Resolves once the database answers a trivial statement; rejects with the driver's error. */
export async function pingDatabase(db: Db): Promise<void> {
  await sqlOn(db).$queryRaw`SELECT 1`;
}

/** The names in `expected` that Prisma's migration table does not list as applied (finished, not rolled back). */
export async function pendingMigrations(db: Db, expected: readonly string[]): Promise<string[]> {
  const rows = await sqlOn(db).$queryRaw<{ migration_name: string }[]>`
    SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
  const applied = new Set(rows.map((r) => r.migration_name));
  return expected.filter((name) => !applied.has(name));
}
