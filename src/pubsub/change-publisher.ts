/**
 * Publishes status changes on Redis after they are committed, and subscribes to them. Publishing is
 * at-most-once (pub/sub has no replay): a subscriber that reconnects catches up from the change
 * log by `seq`.
 */
import { Redis } from 'ioredis';
import { logRedisErrors } from '../runtime/redis-errors.ts';
import type { StatusChange } from '../history/types.ts';
import { changesChannel, clusterChangesChannel, type ChannelOptions } from './channels.ts';
import { decodeChangeEvent, encodeChangeEvent } from './change-event.ts';

/** Publishes committed changes. */
export interface ChangePublisher {
  /** Publishes each change to the fleet channel and its cluster's channel, in `seq` order. */
  publish(changes: readonly StatusChange[]): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link createChangePublisher}. */
export interface ChangePublisherOptions extends ChannelOptions {
  /** The connection's name in log lines (one process may hold several publishers). @default 'change-publisher' */
  client?: string;
}

/** Creates a publisher with its own Redis connection. */
export function createChangePublisher(redisUrl: string, options: ChangePublisherOptions = {}): ChangePublisher {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false });
  logRedisErrors(redis, options.log, options.client ?? 'change-publisher');
  return {
    async publish(changes) {
      if (changes.length === 0) return;
      const pipeline = redis.pipeline();
      for (const change of changes) {
        const text = encodeChangeEvent(change);
        pipeline.publish(changesChannel(options), text);
        pipeline.publish(clusterChangesChannel(change.cluster, options), text);
      }
      const results = await pipeline.exec();
      const failure = results?.find(([error]) => error !== null)?.[0];
      if (failure) throw failure;
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** A live subscription. */
export interface ChangeSubscription {
  close(): Promise<void>;
}

/** Options of {@link subscribeChanges}. */
export interface SubscribeChangesOptions extends ChannelOptions {
  /** Only this cluster's changes; every cluster's when omitted. */
  cluster?: string;
}

/** Subscribes to status changes; resolves once the subscription is active. */
export async function subscribeChanges(
  redisUrl: string,
  onChange: (change: StatusChange) => void,
  options: SubscribeChangesOptions = {},
): Promise<ChangeSubscription> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  logRedisErrors(redis, options.log, 'change-subscriber');
  const channel =
    options.cluster === undefined ? changesChannel(options) : clusterChangesChannel(options.cluster, options);
  redis.on('message', (from: string, text: string) => {
    if (from !== channel) return;
    const change = decodeChangeEvent(text);
    if (change !== undefined) onChange(change);
  });
  await redis.subscribe(channel);
  return {
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
