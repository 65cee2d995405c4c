/**
 * How the read repositories run their SQL: straight on the `pg` pool Prisma shares, as named
 * prepared statements. Each connection parses and plans a statement once and then only binds and
 * executes it (Prisma's `$queryRaw` sends an unnamed statement, parsed and planned on every call,
 * and its runtime adds its own cost per call). Statements are built with `sql`, so values
 * are always parameters; the statement's name is derived from its text, so one text is one
 * prepared statement per connection, and the set of texts is the finite set of query shapes the
 * repositories build (values never enter the text).
 *
 * Rows come back as `pg` parses them: int4 as number, int8 and numeric as string, timestamptz as
 * Date, json/jsonb parsed, arrays as arrays.
 */
import { createHash } from 'node:crypto';
import DataLoader from 'dataloader';
import pg from 'pg';
import { poolOf, type Db } from './db.ts';
import type { Sql } from './sql.ts';

/** Runs read statements. */
export interface ReadSql {
  query<T>(statement: Sql): Promise<T[]>;
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

const TIMESTAMPTZ_OID = 1184;
const parseTimestamptzText = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date | number;
const digitAt = (text: string, i: number): number => text.charCodeAt(i) - 48;
const twoDigitsAt = (text: string, i: number): number => digitAt(text, i) * 10 + digitAt(text, i + 1);

/**
 * A timestamptz as PostgreSQL prints it in UTC (`2026-11-22 09:00:00.123+00`, what every stored
 * time is here) read digit by digit; anything else (another session time zone, microseconds,
 * infinity, BC, years before 1000) through `pg`'s parser. No closures are made per call: this runs
 * for every timestamp of every read row, and a row of phases holds several.
 */
export function parseTimestamptz(text: string): Date | number {
  const n = text.length;
  const utc =
    n >= 22 &&
    n <= 26 &&
    text.charCodeAt(n - 3) === 43 &&
    text.charCodeAt(n - 2) === 48 &&
    text.charCodeAt(n - 1) === 48;
  if (
    !utc ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(10) !== 32 ||
    text.charCodeAt(0) === 48 ||
    (n > 22 && (n === 23 || text.charCodeAt(19) !== 46))
  ) {
    return parseTimestamptzText(text);
  }
  let ms = 0;
  // Fraction digits after the point at 19: one, two or three (PostgreSQL trims trailing zeros).
  for (let i = 20, scale = 100; i < n - 3; i += 1, scale /= 10) ms += digitAt(text, i) * scale;
  return new Date(
    Date.UTC(
      twoDigitsAt(text, 0) * 100 + twoDigitsAt(text, 2),
      twoDigitsAt(text, 5) - 1,
      twoDigitsAt(text, 8),
      twoDigitsAt(text, 11),
      twoDigitsAt(text, 14),
      twoDigitsAt(text, 17),
      ms,
    ),
  );
}

const readTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === TIMESTAMPTZ_OID && format !== 'binary'
      ? parseTimestamptz
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export function createReadSql(db: Db): ReadSql {
  const pool = poolOf(db);
  return {
    async query<T>(statement: Sql): Promise<T[]> {
      const text = statement.text;
      const result = await pool.query({
        name: statementName(text),
        text,
        values: statement.values as unknown[],
        types: readTypes,
      });
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
export function createCoalescer<K, V>(
  run: (keys: readonly K[]) => Promise<V[]>,
  maxBatchSize = 64,
): (key: K) => Promise<V> {
  const loader = new DataLoader<K, V>(async (keys) => run(keys), {
    cache: false,
    maxBatchSize,
    batchScheduleFn: (callback) => setImmediate(callback),
  });
  return (key) => loader.load(key);
}
