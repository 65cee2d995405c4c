/**
 * How the read repositories run their SQL: straight on the `pg` pool Prisma shares, as named
 * prepared statements. Each connection parses and plans a statement once and then only binds and
 * executes it (Prisma's `$queryRaw` sends an unnamed statement, parsed and planned on every call,
 * and its runtime adds its own cost per call). Statements are built with `Prisma.sql`, so values
 * are always parameters; the statement's name is derived from its text, so one text is one
 * prepared statement per connection, and the set of texts is the finite set of query shapes the
 * repositories build (values never enter the text).
 *
 * Rows come back as `pg` parses them: int4 as number, int8 and numeric as string, timestamptz as
 * Date, json/jsonb parsed, arrays as arrays.
 */
import { createHash } from 'node:crypto';
import DataLoader from 'dataloader';
import type { Prisma } from '../generated/prisma/client.ts';
import { poolOf, type Db } from './prisma.ts';

/** Runs read statements. */
export interface ReadSql {
  query<T>(statement: Prisma.Sql): Promise<T[]>;
}

const names = new Map<string, string>();

/** A prepared statement name for `text` (pg requires one text per name on a connection). */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `plg_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

export function createReadSql(db: Db): ReadSql {
  const pool = poolOf(db);
  return {
    async query<T>(statement: Prisma.Sql): Promise<T[]> {
      const text = statement.text;
      const result = await pool.query({ name: statementName(text), text, values: statement.values as unknown[] });
      return result.rows as T[];
    },
  };
}

/**
 * Coalesces the same read asked by concurrent requests into one statement: the keys asked until
 * the event loop has handled the I/O that is ready (setImmediate) go to `run` together, and each
 * caller gets its own answer. Nothing is cached: every call is answered by a statement that started
 * after it was made. Under load this replaces several round trips to PostgreSQL (each a write that
 * wakes a backend) by one; a lone request waits one turn of the event loop.
 */
export function createCoalescer<K, V>(run: (keys: readonly K[]) => Promise<V[]>, maxBatchSize = 64): (key: K) => Promise<V> {
  const loader = new DataLoader<K, V>(async (keys) => run(keys), { cache: false, maxBatchSize, batchScheduleFn: (callback) => setImmediate(callback) });
  return (key) => loader.load(key);
}
