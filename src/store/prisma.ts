/** The Prisma client over `pg`, built once per process. Prisma types stay inside src/store. */
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = PrismaClient;

/** Create a Prisma client for the given database URL; `$disconnect()` it on shutdown. */
export function createDb(url: string, options: { poolSize?: number } = {}): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: options.poolSize ?? 10 }) });
}
