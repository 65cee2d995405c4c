/**
 * Announces revoked API tokens on Redis pub/sub so that every API replica forgets the token and
 * closes the WebSockets it authenticated, at once. The message names the token (names are unique
 * and never reused), never its secret or hash. Pub/sub is at-most-once: a replica that misses a
 * message still finds the revocation at its periodic re-check of the tokens in use.
 */
import { Redis } from 'ioredis';
import { z } from 'zod';
import { logRedisErrors } from '../runtime/redis-errors.ts';
import { tokenRevocationsChannel, type ChannelOptions } from './channels.ts';

/** What a revocation message carries. */
export interface TokenRevocation {
  /** The revoked token's name. */
  name: string;
  /** When it was revoked (RFC 3339). */
  at: string;
}

const revocationSchema = z.object({ name: z.string().min(1), at: z.string() });

/** Parses a message from the channel; undefined for anything else. */
export function parseTokenRevocation(text: string): TokenRevocation | undefined {
  try {
    const parsed = revocationSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Publishes revocations. */
export interface TokenRevocationPublisher {
  publish(name: string, at?: Date): Promise<void>;
  close(): Promise<void>;
}

/** Options of the revocation publisher and subscriber. */
export interface TokenRevocationOptions extends ChannelOptions {
  /** Give up connecting after this many attempts (a CLI should not hang on a missing Redis). @default unlimited */
  maxConnectAttempts?: number;
}

/**
 * A connection for one role: a subscriber's commands wait out a reconnect, a publisher's fail after
 * two tries so publishing a revocation reports an outage instead of hanging.
 */
function connect(redisUrl: string, options: TokenRevocationOptions, role: 'publisher' | 'subscriber'): Redis {
  const { maxConnectAttempts } = options;
  const redis = new Redis(redisUrl, {
    maxRetriesPerRequest: role === 'subscriber' ? null : 2,
    ...(maxConnectAttempts === undefined
      ? {}
      : { retryStrategy: (times: number) => (times > maxConnectAttempts ? null : 100 * times), connectTimeout: 2_000 }),
  });
  logRedisErrors(redis, options.log, `token-revocation-${role}`);
  return redis;
}

/** Creates a publisher with its own Redis connection. */
export function createTokenRevocationPublisher(
  redisUrl: string,
  options: TokenRevocationOptions = {},
): TokenRevocationPublisher {
  const redis = connect(redisUrl, options, 'publisher');
  return {
    async publish(name, at = new Date()) {
      const message: TokenRevocation = { name, at: at.toISOString() };
      await redis.publish(tokenRevocationsChannel(options), JSON.stringify(message));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** A live subscription to revocations. */
export interface TokenRevocationSubscription {
  close(): Promise<void>;
}

/** Subscribes to revocations; resolves once the subscription is active. */
export async function subscribeTokenRevocations(
  redisUrl: string,
  onRevoked: (revocation: TokenRevocation) => void,
  options: TokenRevocationOptions = {},
): Promise<TokenRevocationSubscription> {
  const redis = connect(redisUrl, options, 'subscriber');
  const channel = tokenRevocationsChannel(options);
  redis.on('message', (from: string, text: string) => {
    if (from !== channel) return;
    const revocation = parseTokenRevocation(text);
    if (revocation !== undefined) onRevoked(revocation);
  });
  await redis.subscribe(channel);
  return {
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
