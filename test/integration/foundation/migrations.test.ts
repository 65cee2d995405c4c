import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  diffMigrationsAgainstSchema,
  ensureDatabase,
  listPendingMigrations,
  migrateDatabase,
  MIGRATIONS_DIR,
  SCHEMA_PATH,
} from '../../../src/store/migrate.ts';
import { freshDatabaseUrl } from '../../helpers/services.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function tables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    return res.rows.map((r) => r.table_name);
  } finally {
    await client.end();
  }
}

describe('Prisma migrations (offline, WebAssembly schema engine)', () => {
  it('prisma/schema.prisma and prisma/migrations describe the same database (no drift)', async () => {
    const db = freshDatabaseUrl('drift');
    cleanups.push(db.drop);
    await ensureDatabase(db.url);
    expect(await diffMigrationsAgainstSchema(db.url)).toBe('');
  });

  it('detects drift when the schema gains a field the migrations lack', async () => {
    const db = freshDatabaseUrl('drift2');
    cleanups.push(db.drop);
    await ensureDatabase(db.url);
    const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-drift-'));
    const schemaPath = path.join(dir, 'schema.prisma');
    writeFileSync(
      schemaPath,
      readFileSync(SCHEMA_PATH, 'utf8').replace('model Report {', 'model Report {\n  extra String?'),
    );
    const sql = await diffMigrationsAgainstSchema(db.url, { schemaPath });
    expect(sql).toMatch(/ALTER TABLE "Report" ADD COLUMN\s+"extra" TEXT/);
  });

  it('applies every migration to an empty database, once', async () => {
    const db = freshDatabaseUrl('apply');
    cleanups.push(db.drop);
    await ensureDatabase(db.url);
    const all = (await listPendingMigrations(db.url)).slice();
    expect(all.length).toBeGreaterThan(0);
    const first = await migrateDatabase(db.url);
    expect(first.applied).toEqual(all);
    expect(await tables(db.url)).toEqual(
      expect.arrayContaining(['Cluster', 'Phase', 'StatusChange', '_prisma_migrations']),
    );
    expect((await migrateDatabase(db.url)).applied).toEqual([]);
    expect(await listPendingMigrations(db.url)).toEqual([]);
  });

  it('applies a new migration added after the first start', async () => {
    const db = freshDatabaseUrl('later');
    cleanups.push(db.drop);
    await ensureDatabase(db.url);
    await migrateDatabase(db.url);
    const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-migrations-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    mkdirSync(path.join(dir, '99990101000000_extra'));
    writeFileSync(
      path.join(dir, '99990101000000_extra', 'migration.sql'),
      'CREATE TABLE "Extra" (id int primary key);',
    );
    expect(await listPendingMigrations(db.url, dir)).toEqual(['99990101000000_extra']);
    expect((await migrateDatabase(db.url, dir)).applied).toEqual(['99990101000000_extra']);
    expect(await tables(db.url)).toContain('Extra');
  });
});

describe('processes starting together against a missing database', () => {
  it('all create-or-find the database and migrate it once, whoever wins the race', async () => {
    const db = freshDatabaseUrl('race');
    cleanups.push(db.drop);
    const created = await Promise.allSettled([ensureDatabase(db.url), ensureDatabase(db.url), ensureDatabase(db.url)]);
    expect(created.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);

    const all = await listPendingMigrations(db.url);
    const migrated = await Promise.all([migrateDatabase(db.url), migrateDatabase(db.url), migrateDatabase(db.url)]);
    // The schema engine's advisory lock serialises them: each migration is applied by exactly one.
    expect(migrated.flatMap((m) => m.applied).sort()).toEqual([...all].sort());
    expect(await listPendingMigrations(db.url)).toEqual([]);
  });
});
