/**
 * Applies phaselog's Prisma migrations (prisma/migrations) with Prisma's own schema engine, in
 * process and offline. Used at start-up, by the test setup and by `phaselog migrate`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../runtime/paths.ts';
import pg from 'pg';
import { NO_FILTERS, openSchemaEngine, parseDatabaseUrl, readMigrationsList } from './schema-engine.ts';
import type { DbConnectionFields } from './schema-engine.ts';

/** Where the migrations and the Prisma schema live. */
export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'prisma', 'migrations');
export const SCHEMA_PATH = path.join(PROJECT_ROOT, 'prisma', 'schema.prisma');

/**
 * SQLSTATEs of a CREATE DATABASE that lost a race to another process creating the same database:
 * `duplicate_database`, or `unique_violation` on pg_database's name index when both passed the
 * duplicate check before either committed.
 */
const DATABASE_CREATED_ELSEWHERE = new Set(['42P04', '23505']);

/**
 * Create the database named in the URL if it does not exist yet (connects to `postgres`). Safe when
 * several processes start together against a missing database: the losers of the race carry on.
 */
export async function ensureDatabase(
  url: string | DbConnectionFields,
  options: { connectionTimeoutMillis?: number } = {},
): Promise<void> {
  const fields = typeof url === 'string' ? parseDatabaseUrl(url) : url;
  const admin = new pg.Client({ ...fields, database: 'postgres', ...options });
  // A server that goes away mid-query fails the query; the client's 'error' event must not end the process.
  admin.on('error', () => {});
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [fields.database]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${fields.database.replaceAll('"', '""')}"`).catch((error: unknown) => {
        if (!DATABASE_CREATED_ELSEWHERE.has((error as { code?: string }).code ?? '')) throw error;
      });
    }
  } finally {
    await admin.end().catch(() => {});
  }
}

export interface MigrateResult {
  applied: string[];
}

/**
 * Apply every migration not yet applied. Idempotent, and safe from several processes at once: the
 * schema engine holds a PostgreSQL advisory lock (`pg_advisory_lock(72707369)`) while it applies.
 */
export async function migrateDatabase(url: string, migrationsDir = MIGRATIONS_DIR): Promise<MigrateResult> {
  const { engine, close } = await openSchemaEngine(parseDatabaseUrl(url), undefined);
  try {
    const out = await engine.applyMigrations({
      migrationsList: await readMigrationsList(migrationsDir),
      filters: NO_FILTERS,
    });
    return { applied: out.appliedMigrationNames };
  } finally {
    await close();
  }
}

/** Migrations not yet applied to the database (empty when it is up to date). */
export async function listPendingMigrations(url: string, migrationsDir = MIGRATIONS_DIR): Promise<string[]> {
  const { engine, close } = await openSchemaEngine(parseDatabaseUrl(url), undefined);
  try {
    const out = await engine.diagnoseMigrationHistory({
      migrationsList: await readMigrationsList(migrationsDir),
      optInToShadowDatabase: false,
      filters: NO_FILTERS,
    });
    const history = out.history;
    if (history && history.diagnostic === 'databaseIsBehind') return history.unappliedMigrationNames;
    if (history && history.diagnostic === 'historiesDiverge') return history.unappliedMigrationNames;
    return [];
  } finally {
    await close();
  }
}

/**
 * The SQL that would take a database built from the migrations to what schema.prisma describes.
 * Empty when they agree. Uses a temporary shadow database on the given server.
 */
export async function diffMigrationsAgainstSchema(
  url: string,
  options: { migrationsDir?: string; schemaPath?: string } = {},
): Promise<string> {
  const fields: DbConnectionFields = parseDatabaseUrl(url);
  const schemaPath = options.schemaPath ?? SCHEMA_PATH;
  const schema = await readFile(schemaPath, 'utf8');
  const { engine, close } = await openSchemaEngine(fields, [[schemaPath, schema]]);
  try {
    const result = await engine.diff({
      from: { tag: 'migrations', ...(await readMigrationsList(options.migrationsDir ?? MIGRATIONS_DIR)) },
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: schema }] },
      script: true,
      exitCode: null,
      filters: NO_FILTERS,
    });
    const sql = (result.stdout ?? '').trim();
    return sql === '-- This is an empty migration.' ? '' : sql;
  } finally {
    await close();
  }
}
