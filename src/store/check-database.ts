/**
 * The first contact with a PostgreSQL server, shared by `phaselog start` and `phaselog migrate`:
 * a wrong URL, a down server or a refused login fails here as one clear line (a {@link StartupError})
 * instead of deep inside Prisma's schema engine.
 */
import pg from 'pg';
import { StartupError } from '../runtime/errors.ts';
import { ensureDatabase } from './migrate.ts';
import { parseDatabaseUrl, type DbConnectionFields } from './schema-engine.ts';

/** How long the first connection may take before the server counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5000;

/** `host:port/database` of a URL, for messages: never the user or the password. */
export function describeDatabase(url: string): string {
  try {
    const f = parseDatabaseUrl(url);
    return `${f.host}:${f.port}/${f.database}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/** The first line of a driver or engine message, without the password should one quote the URL. */
export function firstLine(error: unknown, password?: string): string {
  const err = error as { message?: string; code?: string } | undefined;
  const message = (err?.message ?? '').trim().split('\n')[0] ?? '';
  const line = message || err?.code || 'connection failed';
  return password ? line.replaceAll(password, '***') : line;
}

/**
 * Parse the URL, create the database when it is missing (and we may), and connect once.
 * @throws StartupError naming the server (host, port, database) and the driver's reason.
 */
export async function checkDatabase(url: string): Promise<DbConnectionFields> {
  let fields: DbConnectionFields;
  try {
    fields = parseDatabaseUrl(url);
  } catch (error) {
    throw new StartupError(`DATABASE_URL is not a usable PostgreSQL URL: ${firstLine(error)}`);
  }
  const unreachable = (error: unknown) =>
    new StartupError(`cannot connect to PostgreSQL at ${describeDatabase(url)}: ${firstLine(error, fields.password)}`);
  try {
    await ensureDatabase(fields, { connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  } catch (error) {
    // No right to create databases is fine as long as the database itself exists.
    if ((error as { code?: string }).code !== '42501') throw unreachable(error);
  }
  const client = new pg.Client({ ...fields, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw unreachable(error);
  } finally {
    await client.end().catch(() => {});
  }
  return fields;
}
