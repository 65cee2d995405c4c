/**
 * Leftovers of a benchmark process that was killed or crashed before its own cleanup ran: scratch
 * databases from `createScratchDatabase` and Redis keys under `benchPrefix`, both named with the pid
 * of the process that made them.
 */
import pg from 'pg';
import { connectRedis, deleteKeysWithPrefix } from './redis-scratch.ts';

const ADMIN_URL = process.env['PHASELOG_BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function dropDatabasesOf(pid: number): Promise<string[]> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `phaselog\\_bench\\_%\\_${pid}\\_%`,
    ]);
    for (const { datname } of rows)
      await client.query(`DROP DATABASE IF EXISTS "${datname.replace(/"/g, '""')}" WITH (FORCE)`);
    return rows.map((r) => r.datname);
  } finally {
    await client.end();
  }
}

async function deleteRedisKeysOf(pid: number): Promise<number> {
  const redis = connectRedis();
  try {
    let deleted = 0;
    // benchPrefix is `phaselog-bench:<label>:<pid>:<time>:`; the label varies, so scan per label-agnostic pattern.
    for (const label of ['pubsub', 'scale-out', 'snapshot', 'queue'])
      deleted += await deleteKeysWithPrefix(redis, `phaselog-bench:${label}:${pid}:`);
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/**
 * Drops databases and deletes Redis keys left by the benchmark process `pid`. Never throws: a
 * cleanup that cannot reach Postgres or Redis reports that in its description instead.
 */
export async function cleanupAfterProcess(pid: number): Promise<string> {
  const notes: string[] = [];
  try {
    const dropped = await dropDatabasesOf(pid);
    if (dropped.length > 0) notes.push(`dropped ${dropped.join(', ')}`);
  } catch (error) {
    notes.push(`could not check Postgres: ${(error as Error).message}`);
  }
  try {
    const deleted = await deleteRedisKeysOf(pid);
    if (deleted > 0) notes.push(`deleted ${deleted} Redis keys`);
  } catch (error) {
    notes.push(`could not check Redis: ${(error as Error).message}`);
  }
  return notes.join('; ');
}
