/**
 * Real PostgreSQL and Redis for tests (started by test/global-setup.ts when the machine has none).
 * Each test file gets its own database, cloned from the migrated template, and its own key prefix.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database for one test file. */
export async function createTestDatabase(label = 'db'): Promise<TestDatabase> {
  const name = `phaselog_test_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  const url = new URL(inject('pgAdminUrl'));
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A URL of a database that does not exist yet (for tests of first start). */
export function freshDatabaseUrl(label = 'fresh'): { url: string; drop(): Promise<void> } {
  const name = `phaselog_test_${label}_${randomBytes(4).toString('hex')}`;
  const url = new URL(inject('pgAdminUrl'));
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The Redis the suite uses. */
export function testRedisUrl(): string {
  return inject('redisUrl');
}

/** A unique prefix for queue names and Redis keys in one test file. */
export function uniquePrefix(label: string): string {
  return `phaselog-test-${label}-${randomBytes(4).toString('hex')}`;
}
