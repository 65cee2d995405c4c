/**
 * Live status blocks on demand, between the API and the worker that owns a cluster. Only that
 * worker holds a client of the cluster, and the API may run apart from it (roles `api`, `worker`),
 * so the API asks it over Redis pub/sub: a request on the owner's own channel
 * (`<prefix>:live-status:<instance>`), the answer on the asking process's reply channel.
 *
 * Pub/sub rather than a BullMQ job (as "refresh now" uses): an answer is worth nothing after a few
 * seconds, so nothing should be stored, retried or left behind for an owner that died; a request
 * no live process hears is known at once (PUBLISH counts the receivers) instead of after a timeout.
 * Publishing every member's status all the time, as resource trees are, would cost too much at
 * 50,000 members per worker; this costs nothing until someone asks.
 *
 * Bounds: at most {@link MAX_LIVE_STATUS_OBJECTS} objects per request (one page of resources), an
 * answer within {@link LIVE_STATUS_TIMEOUT_MS} or a `TIMEOUT`, and a few requests at once per worker
 * (`BUSY` beyond). Only `status` blocks travel; the reply channel is built from a checked requester
 * id, so a request cannot make a worker publish anywhere else.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { z } from 'zod';
import { TIMED_OUT, withDeadline } from '../runtime/wait.ts';
import type { LiveStatusMiss, ObjectRef } from '../kube/read-live-status.ts';

/** Most objects one request may name. */
export const MAX_LIVE_STATUS_OBJECTS = 100;
/** Longest wait for an answer. */
export const LIVE_STATUS_TIMEOUT_MS = 3000;
/** Requests a worker answers at once; more are answered `BUSY`. */
export const MAX_LIVE_STATUS_INFLIGHT = 16;

/**
 * Why a live status is not given: those of the read itself ({@link LiveStatusMiss}), and those of
 * the way to it: no worker owns the cluster (`NOT_OWNED`), none answered in time (`TIMEOUT`), the
 * owner is at its limit (`BUSY`), the request named too many objects (`TOO_MANY`) or malformed ones
 * (`INVALID_REQUEST`), Redis is not wired or not reachable (`UNAVAILABLE`).
 */
export type LiveStatusReason = LiveStatusMiss | 'NOT_OWNED' | 'BUSY' | 'TOO_MANY' | 'INVALID_REQUEST' | 'UNAVAILABLE';

/** One object's answer. */
export type LiveStatusAnswer =
  { ok: true; status: Record<string, unknown>; readAt: Date } | { ok: false; reason: LiveStatusReason };

function requestChannel(prefix: string, instance: string): string {
  return `${prefix}:live-status:${encodeURIComponent(instance)}`;
}

function replyChannel(prefix: string, requester: string): string {
  return `${prefix}:live-status-reply:${requester}`;
}

const requesterId = z.string().regex(/^[A-Za-z0-9-]{1,64}$/);
const refSchema = z.strictObject({
  group: z.string().max(253),
  kind: z.string().min(1).max(63),
  namespace: z.string().max(63),
  name: z.string().min(1).max(253),
});
// The object list is checked for its length apart, so an oversized request gets a TOO_MANY answer.
const requestSchema = z.strictObject({
  id: z.string().min(1).max(64),
  from: requesterId,
  cluster: z.string().min(1).max(253),
  objects: z.array(z.unknown()),
});
const reasonSchema = z.enum([
  'NOT_FOUND',
  'TOO_LARGE',
  'UNREACHABLE',
  'TIMEOUT',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'KIND_NOT_FOUND',
  'THROTTLED',
  'SERVER_ERROR',
  'NOT_OWNED',
  'BUSY',
  'TOO_MANY',
  'UNAVAILABLE',
  'INVALID_REQUEST',
]);
const replySchema = z.strictObject({
  id: z.string(),
  at: z.number(),
  reason: reasonSchema.optional(),
  items: z
    .array(
      z.union([
        z.strictObject({ status: z.record(z.string(), z.unknown()) }),
        z.strictObject({ reason: reasonSchema }),
      ]),
    )
    .optional(),
});
type Reply = z.infer<typeof replySchema>;

/** What the owning worker answers for one request: per object, in order, or one reason for all. */
export type OwnerAnswer = ({ ok: true; status: Record<string, unknown> } | { ok: false; reason: LiveStatusReason })[];

/** Options of {@link startLiveStatusResponder}. */
export interface LiveStatusResponderOptions {
  /** Where requests are heard: a subscriber connection is opened from it. */
  redisUrl: string;
  /** A connection for commands, that answers are published on; the caller owns it. */
  publisher: Redis;
  /** Channel prefix. @default 'phaselog' */
  prefix?: string;
  /** This worker's ownership instance: requests for it arrive on its own channel. */
  instance: string;
  /**
   * Reads the objects of `cluster` (at most {@link MAX_LIVE_STATUS_OBJECTS}), or says the cluster
   * is not this worker's. Should finish within `timeoutMs`; a later answer is dropped.
   */
  answer(cluster: string, objects: readonly ObjectRef[], timeoutMs: number): Promise<OwnerAnswer | 'NOT_OWNED'>;
  log: Logger;
}

/** A running responder. */
export interface LiveStatusResponder {
  close(): Promise<void>;
}

/** Answers the live status requests sent to this worker. */
export async function startLiveStatusResponder(options: LiveStatusResponderOptions): Promise<LiveStatusResponder> {
  const prefix = options.prefix ?? 'phaselog';
  const subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const publisher = options.publisher;
  subscriber.on('error', (err: unknown) => options.log.debug({ err }, 'live status responder: Redis error'));
  let inflight = 0;
  const reply = (to: string, body: Reply): void =>
    void publisher
      .publish(replyChannel(prefix, to), JSON.stringify(body))
      .catch((err: unknown) => options.log.debug({ err }, 'live status answer not sent'));
  const handle = async (message: string): Promise<void> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    const request = requestSchema.safeParse(parsed);
    // Without a valid id and requester there is nobody to answer.
    if (!request.success) return;
    const { id, from, cluster, objects } = request.data;
    const at = Date.now();
    if (objects.length > MAX_LIVE_STATUS_OBJECTS) return reply(from, { id, at, reason: 'TOO_MANY' });
    const refs = z.array(refSchema).safeParse(objects);
    if (!refs.success) return reply(from, { id, at, reason: 'INVALID_REQUEST' });
    if (inflight >= MAX_LIVE_STATUS_INFLIGHT) return reply(from, { id, at, reason: 'BUSY' });
    inflight++;
    try {
      // Half a second of the asker's wait is left for Redis both ways.
      const budgetMs = LIVE_STATUS_TIMEOUT_MS - 500;
      const answer = await withDeadline(options.answer(cluster, refs.data, budgetMs), budgetMs);
      if (answer === TIMED_OUT) return reply(from, { id, at, reason: 'TIMEOUT' });
      if (answer === 'NOT_OWNED') return reply(from, { id, at, reason: 'NOT_OWNED' });
      reply(from, {
        id,
        at: Date.now(),
        items: answer.map((a) => (a.ok ? { status: a.status } : { reason: a.reason })),
      });
    } catch (err) {
      options.log.warn({ err, cluster }, 'reading live statuses failed');
      reply(from, { id, at, reason: 'UNAVAILABLE' });
    } finally {
      inflight--;
    }
  };
  subscriber.on('message', (_channel: string, message: string) => void handle(message));
  await subscriber.subscribe(requestChannel(prefix, options.instance));
  return {
    async close() {
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}

/** Options of {@link createLiveStatusRequester}. */
export interface LiveStatusRequesterOptions {
  /** Where answers are heard: a subscriber connection is opened from it at the first request. */
  redisUrl: string;
  /**
   * A connection for commands, that requests are published on; the caller owns it. It should fail
   * commands at once while Redis is away (no offline queue), so an answer says UNAVAILABLE.
   */
  publisher: Redis;
  /** Channel prefix. @default 'phaselog' */
  prefix?: string;
  /** Which worker instance owns each cluster now (the ownership leases). */
  owners(clusters: readonly string[]): Promise<ReadonlyMap<string, { instance: string }>>;
  /** Longest wait for an answer. @default LIVE_STATUS_TIMEOUT_MS */
  timeoutMs?: number;
  log: Logger;
}

/** Asks clusters' owners for live statuses. */
export interface LiveStatusRequester {
  /**
   * The live status of each object of `cluster`, in order. Never rejects: every failure, including
   * too many objects, is an answer with a reason, within the timeout.
   */
  read(cluster: string, objects: readonly ObjectRef[]): Promise<LiveStatusAnswer[]>;
  close(): Promise<void>;
}

export function createLiveStatusRequester(options: LiveStatusRequesterOptions): LiveStatusRequester {
  const prefix = options.prefix ?? 'phaselog';
  const timeoutMs = options.timeoutMs ?? LIVE_STATUS_TIMEOUT_MS;
  const self = randomUUID();
  const pending = new Map<string, (reply: Reply) => void>();
  const publisher = options.publisher;
  let started: Promise<Redis> | undefined;
  const start = () =>
    (started ??= (async () => {
      const subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
      subscriber.on('error', (err: unknown) => options.log.debug({ err }, 'live status requester: Redis error'));
      subscriber.on('message', (_channel: string, message: string) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(message);
        } catch {
          return;
        }
        const reply = replySchema.safeParse(parsed);
        if (reply.success) pending.get(reply.data.id)?.(reply.data);
      });
      try {
        await subscriber.subscribe(replyChannel(prefix, self));
      } catch (err) {
        // The next request starts afresh; this one would otherwise reconnect for ever.
        started = undefined;
        subscriber.disconnect();
        throw err;
      }
      return subscriber;
    })());
  const all = (objects: readonly ObjectRef[], reason: LiveStatusReason): LiveStatusAnswer[] =>
    objects.map(() => ({ ok: false, reason }));
  return {
    async read(cluster, objects) {
      if (objects.length === 0) return [];
      if (objects.length > MAX_LIVE_STATUS_OBJECTS) return all(objects, 'TOO_MANY');
      let ready;
      try {
        // Connecting waits while Redis is away; the answer may not.
        ready = await withDeadline(
          start().then(async () => (await options.owners([cluster])).get(cluster)),
          timeoutMs,
        );
      } catch (err) {
        options.log.warn({ err, cluster }, 'asking for live statuses: Redis not available');
        return all(objects, 'UNAVAILABLE');
      }
      if (ready === TIMED_OUT) return all(objects, 'UNAVAILABLE');
      const owner = ready;
      if (owner === undefined) return all(objects, 'NOT_OWNED');
      const id = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      const answered = new Promise<Reply | 'TIMEOUT'>((resolve) => {
        pending.set(id, resolve);
        timer = setTimeout(() => resolve('TIMEOUT'), timeoutMs);
      });
      try {
        const receivers = await publisher.publish(
          requestChannel(prefix, owner.instance),
          JSON.stringify({ id, from: self, cluster, objects }),
        );
        // The lease's holder is not listening (it died and its lease has not run out yet).
        if (receivers === 0) return all(objects, 'NOT_OWNED');
        const reply = await answered;
        if (reply === 'TIMEOUT') return all(objects, 'TIMEOUT');
        if (reply.reason !== undefined || reply.items?.length !== objects.length)
          return all(objects, reply.reason ?? 'UNAVAILABLE');
        const readAt = new Date(reply.at);
        return reply.items.map((item): LiveStatusAnswer =>
          'status' in item ? { ok: true, status: item.status, readAt } : { ok: false, reason: item.reason },
        );
      } catch (err) {
        options.log.warn({ err, cluster }, 'asking for live statuses failed');
        return all(objects, 'UNAVAILABLE');
      } finally {
        clearTimeout(timer);
        pending.delete(id);
      }
    },
    async close() {
      const current = started;
      started = undefined;
      if (current === undefined) return;
      const subscriber = await current.catch(() => undefined);
      await subscriber?.quit().catch(() => subscriber.disconnect());
    },
  };
}
