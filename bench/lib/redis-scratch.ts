/**
 * Redis connections for benchmarks: 127.0.0.1 only, every key and channel under one run prefix,
 * and a cleanup that deletes whatever keys carry that prefix.
 */
import { Redis } from 'ioredis';

/** Where benchmarks find Redis. @default redis://127.0.0.1:6379 */
export const BENCH_REDIS_URL = process.env['PHASELOG_BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A prefix unique to this process and moment, e.g. `phaselog-bench:pubsub:1234:lx2k:`. */
export function benchPrefix(label: string): string {
  return `phaselog-bench:${label}:${process.pid}:${Date.now().toString(36)}:`;
}

/**
 * Opens a Redis connection to 127.0.0.1 (refuses any other host). When Redis is down, commands fail
 * after a few reconnection attempts instead of hanging, and no "unhandled error event" is logged.
 */
export function connectRedis(): Redis {
  const url = new URL(BENCH_REDIS_URL);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')
    throw new Error(`benchmarks only touch 127.0.0.1, not ${url.hostname}`);
  const redis = new Redis(BENCH_REDIS_URL, {
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => (attempt > 3 ? null : 200),
  });
  redis.on('error', () => undefined);
  return redis;
}

/** Deletes every key starting with `prefix` (SCAN, never KEYS) and returns how many were deleted. */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}
