/**
 * The database client, built once per process: one `pg` pool shared by Prisma (schema, migrations
 * and every write) and by the read side's prepared statements (src/store/read-sql.ts). Prisma types
 * stay inside src/store.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = PrismaClient;

const pools = new WeakMap<Db, pg.Pool>();

/**
 * Create a Prisma client for the given database URL; `$disconnect()` it on shutdown (that ends its
 * pool). Connections run with PostgreSQL's JIT off (unless the URL sets `options`): phaselog's
 * statements are short index reads and small writes, and the planner's estimate for a recursive
 * status-run walk is high enough to start JIT compilation, which costs several times the read it
 * would speed up.
 */
export function createDb(url: string, options: DbOptions = {}): Db {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, options: '-c jit=off' });
  return options.prisma === false ? createPoolOnlyDb(pool) : createDbOnPool(pool);
}

/** Options of {@link createDb}. */
export interface DbOptions {
  /** Connections in the pool. @default 10 */
  poolSize?: number;
  /**
   * `false`: the pool only, for worker processes. Their SQL runs on `pg` (src/store/sql-transaction.ts,
   * read-sql.ts), and the first query Prisma runs would load its WebAssembly query compiler for
   * good, tens of MB in every worker; so any use of the Prisma client throws instead. @default true
   */
  prisma?: boolean;
}

/** Thrown when code in a process whose client was made with `prisma: false` uses Prisma. */
export class PrismaUnavailableError extends Error {
  constructor(readonly property: string) {
    super(`db.${property}: this process runs its SQL on pg and has no Prisma client (createDb with prisma: false; worker processes). Use sqlOn/withSqlTransaction from src/store/sql-transaction.ts`);
    this.name = 'PrismaUnavailableError';
  }
}

/**
 * A {@link Db} that is only its pool: `poolOf` finds the pool and `$disconnect()` ends it; reading
 * any other property throws {@link PrismaUnavailableError}, so a Prisma query in a worker fails
 * where it is made, in tests too, instead of quietly costing the memory.
 */
function createPoolOnlyDb(pool: pg.Pool): Db {
  pool.on('error', () => undefined);
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
  pools.set(db, pool);
  return db;
}

/** A Prisma client over `pool`, which it owns: `$disconnect()` ends the pool. */
export function createDbOnPool(pool: pg.Pool): Db {
  // An idle connection the server closes (restart, database dropped) leaves the pool with an error
  // event; the pool drops it and the next query opens another. Without a listener that event would
  // end the process (Prisma listens only while connected, and reads may use the pool before it).
  pool.on('error', () => undefined);
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  // Prisma ends a pool it was given only if it connected; reads may have used the pool without it.
  const disconnect = db.$disconnect.bind(db);
  db.$disconnect = async () => {
    await disconnect();
    if (!pool.ended) await pool.end();
  };
  pools.set(db, pool);
  return db;
}

/** The `pg` pool under a client made by {@link createDb} or {@link createDbOnPool}. */
export function poolOf(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (pool === undefined) throw new Error('this Prisma client was not made by createDb or createDbOnPool, so its pg pool is unknown');
  return pool;
}
