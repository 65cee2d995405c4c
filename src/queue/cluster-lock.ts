/**
 * A per-cluster Redis lock (SET NX PX with an owner token, renewed while held, released only by
 * its owner), so two workers never read the same cluster at once. Correctness does not rest on
 * it: the snapshot transaction locks the cluster's row in Postgres and skips ticks already
 * written. This lock only saves the second, wasted read of a cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A held lock. */
export interface HeldLock {
  release(): Promise<void>;
}

/** Options of {@link createClusterLocks}. */
export interface ClusterLockOptions {
  /** Key prefix. @default 'phaselog:lock:snapshot' */
  prefix?: string;
  /** Lock lease; renewed every third of it while held, so a killed holder frees it within this time. @default 6000 */
  ttlMs?: number;
}

/** Per-cluster locks. */
export interface ClusterLocks {
  /** The lock, or undefined when another worker holds it. */
  tryAcquire(cluster: string): Promise<HeldLock | undefined>;
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

/** Creates the locks over an ioredis connection the caller owns. */
export function createClusterLocks(redis: Redis, options: ClusterLockOptions = {}): ClusterLocks {
  const prefix = options.prefix ?? 'phaselog:lock:snapshot';
  const ttl = options.ttlMs ?? 6_000;
  return {
    async tryAcquire(cluster) {
      const key = `${prefix}:${cluster}`;
      const token = randomUUID();
      const ok = await redis.set(key, token, 'PX', ttl, 'NX');
      if (ok !== 'OK') return undefined;
      const timer = setInterval(
        () => {
          redis.eval(RENEW, 1, key, token, String(ttl)).catch(() => {});
        },
        Math.max(50, Math.floor(ttl / 3)),
      );
      timer.unref();
      return {
        async release() {
          clearInterval(timer);
          await redis.eval(RELEASE, 1, key, token);
        },
      };
    },
  };
}
