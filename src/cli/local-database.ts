/**
 * The database of the phaselog running on this machine, for the bootstrap commands that cannot go
 * through the API (creating the first admin token): DATABASE_URL when set, else the embedded
 * PostgreSQL that `phaselog start` runs in the state directory (its port from postmaster.pid, its
 * password from the file phaselog generated).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { CliError, EXIT } from './errors.ts';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function resolveLocalDatabaseUrl(config: Pick<Config, 'database' | 'stateDir'>): string {
  if (config.database.url) return config.database.url;
  const pidFile = path.join(config.stateDir, 'postgres', 'postmaster.pid');
  const passwordFile = path.join(config.stateDir, 'postgres.password');
  if (!existsSync(pidFile) || !existsSync(passwordFile)) {
    throw new CliError(`no DATABASE_URL and no running embedded phaselog database in ${config.stateDir}: start phaselog first (npm start), or set DATABASE_URL or PHASELOG_STATE_DIR`, EXIT.server);
  }
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
  if (!isAlive(Number(pid))) throw new CliError(`the embedded database in ${config.stateDir} is not running: start phaselog first (npm start)`, EXIT.server);
  const password = readFileSync(passwordFile, 'utf8').trim();
  return `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/phaselog`;
}
