/**
 * A throw-away Postgres database for one benchmark run on 127.0.0.1, dropped (with FORCE) afterwards.
 */
import pg from 'pg';

/** A scratch database and how to reach it. */
export interface ScratchDatabase {
  name: string;
  connectionString: string;
  /** Drops the database, disconnecting anyone still on it. Safe to call twice. */
  drop(): Promise<void>;
}

/** Where the admin connection goes. @default postgres://postgres@127.0.0.1:5432/postgres */
const ADMIN_URL = process.env['PHASELOG_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function assertLocal(connectionString: string): URL {
  const url = new URL(connectionString);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')
    throw new Error(`benchmarks only touch 127.0.0.1, not ${url.hostname}`);
  return url;
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database named `phaselog_bench_<label>_<pid>_<time>` and returns it. */
export async function createScratchDatabase(label: string): Promise<ScratchDatabase> {
  const url = assertLocal(ADMIN_URL);
  const name = `phaselog_bench_${label.replace(/\W/g, '_')}_${process.pid}_${Date.now().toString(36)}`;
  await withAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    connectionString: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
