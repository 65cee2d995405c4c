/**
 * The database of the phaselog running on this machine, for the bootstrap commands that cannot go
 * through the API (creating the first admin token): DATABASE_URL when set, else the embedded
 * PostgreSQL that `phaselog start` runs in the state directory.
 */
import type { Config } from '../config.ts';
import { findRunningEmbeddedPostgres } from '../runtime/embedded-postgres.ts';
import { CliError, EXIT } from './errors.ts';

export function resolveLocalDatabaseUrl(config: Pick<Config, 'database' | 'stateDir'>): string {
  if (config.database.url) return config.database.url;
  const url = findRunningEmbeddedPostgres(config.stateDir);
  if (url === undefined) {
    throw new CliError(
      `no DATABASE_URL, and no embedded phaselog database running in ${config.stateDir}: start phaselog first (npm start), or set DATABASE_URL or PHASELOG_STATE_DIR`,
      EXIT.server,
    );
  }
  return url;
}
