import { ConfigError, loadConfig } from '../config.ts';
import { StartupError } from '../runtime/errors.ts';
import { checkDatabase, describeDatabase, firstLine } from '../store/check-database.ts';
import { migrateDatabase } from '../store/migrate.ts';
import { exitWithError } from './errors.ts';

/**
 * `phaselog migrate`: apply pending migrations to DATABASE_URL and exit. Every failure is one line
 * on stderr and exit code 1 (2 for a configuration error): the schema engine's own errors come out
 * of WebAssembly with a stack of wasm frames that tells the user nothing.
 */
export async function runMigrate(): Promise<void> {
  let url: string | undefined;
  try {
    url = loadConfig().database.url;
  } catch (error) {
    if (error instanceof ConfigError) exitWithError(`invalid configuration: ${error.message}`, 2);
    throw error;
  }
  if (!url) exitWithError('DATABASE_URL is not set (the embedded database is migrated by `phaselog start` itself)', 2);
  let applied: string[];
  try {
    const { password } = await checkDatabase(url);
    applied = await migrateDatabase(url).then(
      (result) => result.applied,
      (error: unknown) =>
        exitWithError(
          `applying database migrations failed on ${describeDatabase(url)}: ${firstLine(error, password)}`,
          1,
        ),
    );
  } catch (error) {
    if (error instanceof StartupError) exitWithError(error.message, 1);
    throw error;
  }
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
}
