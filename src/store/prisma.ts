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
export function createDb(url: string, options: { poolSize?: number } = {}): Db {
  return createDbOnPool(new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, options: '-c jit=off' }));
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
