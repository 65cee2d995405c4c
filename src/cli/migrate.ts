import { ConfigError, loadConfig } from '../config.ts';
import { migrateDatabase } from '../store/migrate.ts';
import { exitWithError } from './errors.ts';

/** `phaselog migrate`: apply pending migrations to DATABASE_URL and exit. */
export async function runMigrate(): Promise<void> {
  let url: string | undefined;
  try {
    url = loadConfig().database.url;
  } catch (error) {
    if (error instanceof ConfigError) exitWithError(`invalid configuration: ${error.message}`, 2);
    throw error;
  }
  if (!url) exitWithError('DATABASE_URL is not set (the embedded database is migrated by `phaselog start` itself)', 2);
  const { applied } = await migrateDatabase(url);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
}
