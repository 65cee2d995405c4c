/**
 * The snapshot transaction on the `pg` pool Prisma shares, without Prisma's runtime in between.
 *
 * A snapshot is a dozen statements in one transaction, every one of them raw SQL built with
 * `sql` (src/store/sql.ts; bulk `unnest` writes). Through Prisma 7 each also went through
 * its query compiler (WebAssembly) and its interpreter before `pg` sends it: about a fifth of a
 * worker's CPU in the 500-cluster scale-out bench, more than the statements' own I/O (figures in
 * BENCHMARKS.md). Here the statement's text and values go to `pg` as named prepared
 * statements (src/store/read-sql.ts explains the naming), so PostgreSQL also skips parsing and
 * planning them again on each snapshot.
 *
 * Prisma's interactive transaction is what this replaces, with the same guarantees: one
 * connection, BEGIN, COMMIT when `work` resolves, ROLLBACK when it throws, a bound on waiting for a
 * connection and on the whole transaction (the connection is closed when it runs out, so
 * PostgreSQL rolls back whatever is in flight). Rows come back as Prisma's `$queryRaw` gives them
 * for the types these statements read: int8 as bigint, timestamptz as Date, json parsed.
 */
import pg from 'pg';
import { poolOf, type Db } from './db.ts';
import { parseTimestamptz, statementName } from './read-sql.ts';
import type { Sql } from './sql.ts';
import { sql } from './sql.ts';

/**
 * What the stores' statements need: raw tagged templates (the shape of Prisma's `$queryRaw`, which
 * the stores used before), on one transaction ({@link withSqlTransaction}) or autocommit ({@link sqlOn}).
 */
export interface RawTx {
  $executeRaw(query: TemplateStringsArray | Sql, ...values: unknown[]): PromiseLike<number>;
  $queryRaw<T = unknown>(query: TemplateStringsArray | Sql, ...values: unknown[]): PromiseLike<T>;
}

/** Bounds of {@link withSqlTransaction}. */
export interface SqlTransactionOptions {
  /** Longest the whole transaction may run; past it the connection is closed and the transaction fails. */
  timeoutMs: number;
  /** Longest to wait for a pooled connection. */
  maxWaitMs: number;
}

/** The transaction ran past its bound and was rolled back. */
export class TransactionTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the transaction ran longer than ${timeoutMs} ms and was rolled back`);
    this.name = 'TransactionTimeoutError';
  }
}

/** No pooled connection came free in time. */
export class ConnectionWaitError extends Error {
  constructor(readonly maxWaitMs: number) {
    super(`no database connection came free within ${maxWaitMs} ms (pool exhausted)`);
    this.name = 'ConnectionWaitError';
  }
}

const INT8_OID = 20;
const TIMESTAMPTZ_OID = 1184;

const types = {
  getTypeParser: ((oid: number, format?: string) => {
    if (format === 'binary') return pg.types.getTypeParser(oid, 'binary');
    if (oid === INT8_OID) return (text: string) => BigInt(text);
    if (oid === TIMESTAMPTZ_OID) return parseTimestamptz;
    return pg.types.getTypeParser(oid, 'text');
  }) as typeof pg.types.getTypeParser,
};

/** The statement of either calling form: a tagged template (its strings are an array), or a built statement. */
function statementOf(query: TemplateStringsArray | Sql, values: unknown[]): Sql {
  return Array.isArray(query) ? sql(query as TemplateStringsArray, ...values) : (query as Sql);
}

/**
 * The same raw templates outside a transaction: each statement runs on its own (autocommit) on a
 * pooled connection of `db`'s pool, as a named prepared statement, and reads back as `$queryRaw`
 * would. Worker code runs its statements here and in {@link withSqlTransaction}, never through
 * Prisma: the first statement Prisma runs loads its WebAssembly query compiler, which a process
 * then keeps (tens of MB of resident memory; figures in BENCHMARKS.md).
 */
export function sqlOn(db: Db): RawTx {
  const pool = poolOf(db);
  return rawTemplates((config) => pool.query(config));
}

/**
 * How `pg` runs a statement: as a named prepared statement, or unnamed when it has no parameters
 * (SAVEPOINT, SELECT 1), which needs no plan of its own.
 */
function queryConfig(query: TemplateStringsArray | Sql, values: unknown[]): pg.QueryConfig {
  const statement = statementOf(query, values);
  const text = statement.text;
  return statement.values.length === 0
    ? { text, types }
    : { name: statementName(text), text, values: statement.values as unknown[], types };
}

/** The raw templates of {@link RawTx} over `run`, which sends one statement. */
function rawTemplates(run: (config: pg.QueryConfig) => Promise<pg.QueryResult>): RawTx {
  return {
    $executeRaw: async (query, ...values) => (await run(queryConfig(query, values))).rowCount ?? 0,
    $queryRaw: async <R>(query: TemplateStringsArray | Sql, ...values: unknown[]) =>
      (await run(queryConfig(query, values))).rows as R,
  };
}

/** Runs `work` in one transaction on one pooled connection of `db`'s pool. */
export async function withSqlTransaction<T>(
  db: Db,
  work: (tx: RawTx) => Promise<T>,
  options: SqlTransactionOptions,
): Promise<T> {
  const pool = poolOf(db);
  const client = await connectWithin(pool, options.maxWaitMs);
  let released = false;
  let timedOut = false;
  // The pool listens for errors of idle connections only: one that breaks while checked out (the
  // database restarted, the backend was terminated) emits 'error' here, and without a listener
  // that would crash the process. Its statement fails too, which is how the transaction fails.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  const release = (error?: Error): void => {
    if (released) return;
    released = true;
    const failed = error ?? broken;
    // A connection going back to the pool is the pool's to listen to again; one being closed keeps
    // a listener, for anything its closing emits.
    if (failed === undefined) client.removeListener('error', onError);
    // With an error the pool closes the connection instead of reusing it.
    client.release(failed);
  };
  // One statement at a time, in the order they were asked for (the store asks for several at once,
  // as it did of Prisma): a connection runs one anyway, and pg no longer queues them itself.
  let previous: Promise<unknown> = Promise.resolve();
  const tx = rawTemplates((config) => {
    const next = previous.then(() => {
      if (timedOut) throw new TransactionTimeoutError(options.timeoutMs);
      return client.query(config);
    });
    previous = next.catch(() => undefined);
    return next;
  });
  let terminated: Promise<void> = Promise.resolve();
  const timer = setTimeout(() => {
    timedOut = true;
    // A backend in the middle of a statement does not notice its client went away until it next
    // talks to it, and keeps the transaction (and the cluster row's lock) until then: it is ended
    // from another connection, and this one closed. PostgreSQL rolls the transaction back.
    terminated = terminateBackend(pool, (client as unknown as { processID?: number }).processID);
    release(new TransactionTimeoutError(options.timeoutMs));
  }, options.timeoutMs);
  try {
    await client.query('BEGIN');
    const result = await work(tx);
    if (timedOut) throw new TransactionTimeoutError(options.timeoutMs);
    await previous;
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (timedOut) {
      await terminated;
      throw new TransactionTimeoutError(options.timeoutMs);
    }
    try {
      // After any statement still on its way (work may have thrown with others outstanding).
      await previous;
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // The connection is gone (the database restarted): PostgreSQL has rolled back already.
      release(rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)));
    }
    throw error;
  } finally {
    clearTimeout(timer);
    release();
  }
}

/** A pooled client within `maxWaitMs`; one that comes later goes straight back to the pool. */
async function connectWithin(pool: pg.Pool, maxWaitMs: number): Promise<pg.PoolClient> {
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectionWaitError(maxWaitMs)), maxWaitMs);
  });
  try {
    return await Promise.race([connecting, timeout]);
  } catch (error) {
    if (error instanceof ConnectionWaitError)
      connecting.then(
        (client) => client.release(),
        () => undefined,
      );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Ends the backend `pid` from a connection of its own (best effort, bounded: the pool may be full or the server gone). */
async function terminateBackend(pool: pg.Pool, pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  const client = new pg.Client({
    ...(pool.options as pg.ClientConfig),
    connectionTimeoutMillis: 5_000,
    query_timeout: 5_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT pg_terminate_backend($1::int)', [pid]);
  } catch {
    // The closed socket ends the transaction once the backend next talks to it.
  } finally {
    await client.end().catch(() => undefined);
  }
}
