/**
 * The database handle every store takes, and its `pg` pool, without loading Prisma. A worker
 * process gets a pool-only handle ({@link createPoolDb}): its SQL runs on `pg` (sql-transaction.ts,
 * read-sql.ts), so it never loads Prisma's runtime (generated client and query engine), which
 * would cost every worker tens of MB. A process that needs Prisma (the API, token commands)
 * makes its handle with src/store/prisma.ts's `createDb`, a Prisma client over the same kind of pool.
 */
import pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client.ts';

export type Db = PrismaClient;

const pools = new WeakMap<Db, pg.Pool>();

/** Options of a database handle. */
export interface DbOptions {
  /** Connections in the pool. @default 10 */
  poolSize?: number;
  /**
   * `false`: the pool only ({@link createPoolDb}), for worker processes. @default true (a Prisma client;
   * src/store/prisma.ts)
   */
  prisma?: boolean;
}

/**
 * A pool for `url`. Connections run with PostgreSQL's JIT off (unless the URL sets `options`):
 * phaselog's statements are short index reads and small writes, and the planner's estimate for a
 * recursive status-run walk is high enough to start JIT compilation, which costs several times
 * the read it would speed up. An idle connection the server closes (restart, database dropped)
 * leaves the pool with an error event; the pool drops it and the next query opens another.
 * Without a listener that event would end the process.
 */
export function createPool(url: string, poolSize = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, options: '-c jit=off' });
  pool.on('error', () => undefined);
  return pool;
}

/** Records `pool` as the one under `db`, for {@link poolOf}. */
export function registerPool(db: Db, pool: pg.Pool): void {
  pools.set(db, pool);
}

/** The `pg` pool under a handle made by {@link createPoolDb} or src/store/prisma.ts. */
export function poolOf(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (pool === undefined)
    throw new Error(
      'this database handle was not made by createPoolDb, createDb or createDbOnPool, so its pg pool is unknown',
    );
  return pool;
}

/** Thrown when code uses Prisma through a pool-only handle ({@link createPoolDb}). */
export class PrismaUnavailableError extends Error {
  constructor(readonly property: string) {
    super(
      `db.${property}: this process runs its SQL on pg and has no Prisma client (a pool-only handle; worker processes). Use sqlOn/withSqlTransaction from src/store/sql-transaction.ts`,
    );
    this.name = 'PrismaUnavailableError';
  }
}

/**
 * A {@link Db} that is only its pool, for worker processes: `poolOf` finds the pool and
 * `$disconnect()` ends it; reading any other property throws {@link PrismaUnavailableError}, so a
 * Prisma query in a worker fails where it is made, in tests too, instead of loading Prisma.
 */
export function createPoolDb(url: string, options: Omit<DbOptions, 'prisma'> = {}): Db {
  const pool = createPool(url, options.poolSize);
  const disconnect = async (): Promise<void> => {
    if (!pool.ended) await pool.end();
  };
  const db = new Proxy(Object.create(null) as object, {
    get(_target, property) {
      if (property === '$disconnect') return disconnect;
      // Symbols and `then` are asked by the runtime itself (inspection, await), not by a query.
      if (typeof property === 'symbol' || property === 'then') return undefined;
      throw new PrismaUnavailableError(property);
    },
  }) as Db;
  registerPool(db, pool);
  return db;
}
