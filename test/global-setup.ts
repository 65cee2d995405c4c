/**
 * Makes sure the real services the suite needs are there, whether or not the machine runs them:
 * PostgreSQL on 127.0.0.1:5432 (else an embedded one) and Redis on 127.0.0.1:6379 (else a
 * redis-server from PATH). Builds one migrated template database that test files clone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/runtime/embedded-postgres.ts';
import { resolveRedis } from '../src/runtime/redis.ts';
import { migrateDatabase } from '../src/store/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    templateDatabase: string;
    redisUrl: string;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export default async function setup(project: TestProject) {
  const log = pino({ level: 'warn' });
  const stops: (() => Promise<void>)[] = [];
  const stateDir = mkdtempSync(path.join(tmpdir(), 'phaselog-test-'));

  let adminUrl = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  if (!(await canConnect(adminUrl))) {
    const embedded = await startEmbeddedPostgres({ stateDir, log, database: 'postgres' });
    stops.push(() => embedded.stop());
    adminUrl = embedded.url;
  }
  const redis = await resolveRedis({ url: process.env.TEST_REDIS_URL, stateDir, log });
  stops.push(() => redis.stop());

  const templateDatabase = `phaselog_test_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${templateDatabase}`);
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${templateDatabase}`;
  await migrateDatabase(templateUrl.toString());

  project.provide('pgAdminUrl', adminUrl);
  project.provide('templateDatabase', templateDatabase);
  project.provide('redisUrl', redis.url);

  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase} WITH (FORCE)`).catch(() => {});
    await admin.end();
    for (const stop of stops.reverse()) await stop();
    rmSync(stateDir, { recursive: true, force: true });
  };
}
