/**
 * Baseline: raw Redis pub/sub on 127.0.0.1 with ioredis, the transport under phaselog's live events.
 *   - round trip: publish one message, wait until the subscriber connection receives it, repeat
 *     (p50/p99 of publish -> delivery);
 *   - throughput: publish many messages in pipelines of 1,000 and time until the last one arrives.
 *
 *   node --import tsx bench/baselines/redis-pubsub.ts [--round-trips 5000] [--messages 200000]
 */
import { isMain, printFigures, readNumberFlag } from '../lib/cli.ts';
import { benchPrefix, connectRedis, deleteKeysWithPrefix } from '../lib/redis-scratch.ts';
import { nowMs, percentile, perSecond, round } from '../lib/stats.ts';
import type { Figures } from '../lib/types.ts';

/** Options of {@link run}. */
export interface RedisPubsubBaselineOptions {
  /** Sequential publish -> receive round trips. @default 5000 */
  roundTrips?: number;
  /** Messages published pipelined for the throughput figure. @default 200000 */
  messages?: number;
  /** Give up waiting for deliveries after this many milliseconds. @default 60000 */
  maxMs?: number;
}

/** A ~200-byte payload, about the size of a status-change event. */
const PAYLOAD = JSON.stringify({ phase: 'shop/prod', cluster: 'cluster-3', ref: 'apps/Deployment/shop/checkout', from: 'InProgress', to: 'Current', message: 'Deployment is available. Replicas: 3', at: '2026-11-20T09:16:40.123Z' });

/** Measures publish -> subscriber latency and pipelined throughput on one channel under a run prefix. */
export async function run(options: RedisPubsubBaselineOptions = {}): Promise<Figures> {
  const roundTrips = options.roundTrips ?? 5_000;
  const messages = options.messages ?? 200_000;
  const maxMs = options.maxMs ?? 60_000;
  const prefix = benchPrefix('pubsub');
  const channel = `${prefix}events`;
  const publisher = connectRedis();
  const subscriber = connectRedis();
  try {
    await subscriber.subscribe(channel);
    let onMessage: () => void = () => undefined;
    subscriber.on('message', () => onMessage());

    const latencies: number[] = [];
    const deadline = nowMs() + maxMs;
    for (let i = 0; i < roundTrips + 200 && nowMs() < deadline; i++) {
      const received = new Promise<void>((resolve) => (onMessage = resolve));
      const sent = nowMs();
      await publisher.publish(channel, PAYLOAD);
      await received;
      // The first 200 warm up the connections and the JIT.
      if (i >= 200) latencies.push(nowMs() - sent);
    }

    let got = 0;
    const allReceived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), maxMs);
      onMessage = () => {
        got += 1;
        if (got === messages) {
          clearTimeout(timer);
          resolve(true);
        }
      };
    });
    const started = nowMs();
    for (let sent = 0; sent < messages; sent += 1_000) {
      const pipeline = publisher.pipeline();
      for (let k = 0; k < Math.min(1_000, messages - sent); k++) pipeline.publish(channel, PAYLOAD);
      await pipeline.exec();
    }
    const complete = await allReceived;
    const elapsed = nowMs() - started;
    return {
      'payload bytes': PAYLOAD.length,
      'round trips': latencies.length,
      'publish -> receive p50 ms': round(percentile(latencies, 0.5), 3),
      'publish -> receive p99 ms': round(percentile(latencies, 0.99), 3),
      'round trips/s (sequential)': perSecond(latencies.length, latencies.reduce((a, b) => a + b, 0)),
      'messages (pipelined)': got,
      'msgs/s pipelined': perSecond(got, elapsed),
      'all delivered': complete ? 'yes' : `no, ${got} of ${messages} within ${maxMs} ms`,
    };
  } finally {
    subscriber.disconnect();
    await deleteKeysWithPrefix(publisher, prefix).catch(() => 0);
    publisher.disconnect();
  }
}

if (isMain(import.meta.url)) {
  printFigures('Redis pub/sub (ioredis, 127.0.0.1)', await run({ roundTrips: readNumberFlag('round-trips'), messages: readNumberFlag('messages') }));
}
