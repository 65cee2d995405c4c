/**
 * The Prisma client, for processes that use Prisma (the API's token store, `phaselog token`, tests):
 * one `pg` pool shared by Prisma and by the statements the stores run on `pg` themselves
 * (read-sql.ts, sql-transaction.ts). Worker processes take a pool-only handle instead
 * (src/store/db.ts). Prisma types stay inside src/store.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.ts';
import { createPool, createPoolDb, registerPool, type Db, type DbOptions } from './db.ts';

export { poolOf, PrismaUnavailableError, type Db, type DbOptions } from './db.ts';

/**
 * A Prisma client for the given database URL (see createPool in db.ts for the connections'
 * settings), or with `prisma: false` the pool-only handle a worker gets. `$disconnect()` it on
 * shutdown (that ends its pool).
 */
export function createDb(url: string, options: DbOptions = {}): Db {
  return options.prisma === false ? createPoolDb(url, options) : createDbOnPool(createPool(url, options.poolSize));
}

/** A Prisma client over `pool`, which it owns: `$disconnect()` ends the pool. */
export function createDbOnPool(pool: pg.Pool): Db {
  // Reads may use the pool before Prisma connects; Prisma listens for its errors only while connected.
  pool.on('error', () => undefined);
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  // Prisma ends a pool it was given only if it connected; reads may have used the pool without it.
  const disconnect = db.$disconnect.bind(db);
  db.$disconnect = async () => {
    await disconnect();
    if (!pool.ended) await pool.end();
  };
  registerPool(db, pool);
  return db;
}
