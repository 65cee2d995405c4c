/**
 * Subscription fan-out: one status change published on Redis (as a worker publishes it after its
 * commit) reaching 1,000 graphql-ws clients subscribed to `phaseStatusChanged` on the real API
 * server (run in its own process). For each change: the time from publish to each client's receipt,
 * summarised as the p50 and the slowest client; the median over changes is reported.
 *
 *   node --import tsx bench/subscriptions.ts [--clients 1000] [--events 20]
 */
import { fileURLToPath } from 'node:url';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { createChangePublisher } from '../src/pubsub/change-publisher.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { seed } from './graphql-api.ts';
import { startReadyChild } from './lib/child-server.ts';
import type { ReadyChild } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { BENCH_REDIS_URL, benchPrefix } from './lib/redis-scratch.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { median, nowMs, percentile, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';
import type { SubscriptionsServerOptions } from './subscriptions-server.ts';

/** Options of {@link run}. */
export interface SubscriptionsBenchOptions {
  /** Subscribed graphql-ws clients, one WebSocket each. @default 1000 */
  clients?: number;
  /** Timed changes, published one at a time. @default 20 */
  events?: number;
  /** Give up on one change after this long. @default 30000 */
  eventTimeoutMs?: number;
}

const SERVER_FILE = fileURLToPath(new URL('./subscriptions-server.ts', import.meta.url));
const SUBSCRIPTION = 'subscription { phaseStatusChanged { seq scope toStatus } }';

interface Fleet {
  clients: Client[];
  /** Latest seq each client received and when. */
  seen: { seq: string; at: number }[];
  /** The seq being waited for, and how many clients have it (kept O(1) per message). */
  target: string;
  reached: number;
  onAll: () => void;
}

function subscribeAll(url: string, count: number): Fleet {
  const fleet: Fleet = { clients: [], seen: [], target: '', reached: 0, onAll: () => undefined };
  for (let i = 0; i < count; i++) {
    const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false });
    fleet.seen.push({ seq: '', at: 0 });
    client.subscribe<{ phaseStatusChanged: { seq: string } }>(
      { query: SUBSCRIPTION },
      {
        next: (result) => {
          const slot = fleet.seen[i];
          if (slot !== undefined && result.data) {
            slot.at = nowMs();
            slot.seq = result.data.phaseStatusChanged.seq;
            if (slot.seq === fleet.target && ++fleet.reached === fleet.seen.length) fleet.onAll();
          }
        },
        error: () => undefined,
        complete: () => undefined,
      },
    );
    fleet.clients.push(client);
  }
  return fleet;
}

/** Starts waiting for every client to see `seq` (call before publishing it); rejects after `timeoutMs`. */
function allSeen(fleet: Fleet, seq: string, timeoutMs: number): Promise<void> {
  fleet.target = seq;
  fleet.reached = fleet.seen.filter((s) => s.seq === seq).length;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      fleet.onAll = () => undefined;
      reject(
        new Error(
          `${fleet.seen.length - fleet.reached} of ${fleet.seen.length} clients did not get seq ${seq} within ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    fleet.onAll = () => {
      clearTimeout(timer);
      fleet.onAll = () => undefined;
      resolve();
    };
    if (fleet.reached === fleet.seen.length) fleet.onAll();
  });
}

/** Publishes changes one at a time to `clients` subscribers and returns fan-out latencies. */
export async function run(options: SubscriptionsBenchOptions = {}): Promise<Figures> {
  const clientCount = options.clients ?? 1_000;
  const events = options.events ?? 20;
  const timeoutMs = options.eventTimeoutMs ?? 30_000;
  const prefix = benchPrefix('queue');
  const db = await createScratchDatabase('subs');
  const sql = new pg.Client({ connectionString: db.connectionString });
  const publisher = createChangePublisher(BENCH_REDIS_URL, { prefix });
  let server: ReadyChild | undefined;
  let fleet: Fleet | undefined;
  try {
    await migrateDatabase(db.connectionString);
    await seed(db.connectionString, 1, 1, 1);
    await sql.connect();
    const ids = await sql.query<{ clusterId: number; phaseId: number; namespace: string; name: string }>(
      `SELECT "clusterId", "id" AS "phaseId", "namespace", "name" FROM "Phase" LIMIT 1`,
    );
    const phase = ids.rows[0];
    if (phase === undefined) throw new Error('seed made no phase');
    const serverOptions: SubscriptionsServerOptions = {
      databaseUrl: db.connectionString,
      redisUrl: BENCH_REDIS_URL,
      channelPrefix: prefix,
    };
    server = await startReadyChild(SERVER_FILE, [JSON.stringify(serverOptions)], 60_000);
    /** Writes a change to the log as a worker does, starts waiting for it, publishes it; returns when it was published. */
    const sendChange = async (
      toStatus: string,
      wait: (seq: string) => Promise<void>,
    ): Promise<{ sentAt: number; delivered: Promise<void> }> => {
      const row = await sql.query<{ seq: string; at: Date }>(
        `WITH d AS (
           INSERT INTO "StatusDetail" ("hash", "body") VALUES ('bench-message', '{"message":"bench"}') ON CONFLICT ("hash") DO UPDATE SET "body" = excluded."body" RETURNING "id"
         )
         INSERT INTO "StatusChange" ("at", "clusterId", "phaseId", "scope", "fromStatus", "toStatus", "detailId")
         SELECT now(), $1, $2, 'phase', 'Current', $3, d."id" FROM d RETURNING "seq"::text AS "seq", "at"`,
        [phase.clusterId, phase.phaseId, toStatus],
      );
      const { seq, at } = row.rows[0] ?? { seq: '0', at: new Date() };
      const delivered = wait(seq);
      const sentAt = nowMs();
      await publisher.publish([
        {
          seq: BigInt(seq),
          at,
          cluster: 'bench-a',
          clusterId: phase.clusterId,
          phaseId: phase.phaseId,
          phase: { sourceKind: 'cli-utils', namespace: phase.namespace, name: phase.name },
          scope: 'phase',
          resourceKey: null,
          fromStatus: 'Current',
          toStatus,
          message: 'bench',
        },
      ]);
      return { sentAt, delivered };
    };

    const connectStarted = nowMs();
    fleet = subscribeAll(server.ready.url, clientCount);
    // Subscriptions become active on the server some time after the sockets open: publish until all hear one.
    let warm = false;
    for (let attempt = 0; attempt < 60 && !warm; attempt++) {
      const current = fleet;
      const { delivered } = await sendChange('InProgress', (seq) => allSeen(current, seq, 1_000));
      warm = await delivered.then(
        () => true,
        () => false,
      );
    }
    if (!warm) throw new Error(`not every client was subscribed after 60 attempts`);
    const connectMs = nowMs() - connectStarted;

    const p50s: number[] = [];
    const maxes: number[] = [];
    for (let e = 0; e < events; e++) {
      const current = fleet;
      const { sentAt, delivered } = await sendChange(e % 2 === 0 ? 'Current' : 'InProgress', (seq) =>
        allSeen(current, seq, timeoutMs),
      );
      await delivered;
      const latencies = fleet.seen.map((s) => s.at - sentAt);
      p50s.push(percentile(latencies, 0.5));
      maxes.push(Math.max(...latencies));
    }
    return {
      clients: clientCount,
      'changes timed': events,
      'connect + subscribe all clients ms': Math.round(connectMs),
      'publish -> client p50 ms (median change)': round(median(p50s), 1),
      'publish -> slowest client ms (median change)': round(median(maxes), 1),
      'publish -> slowest client ms (worst change)': round(Math.max(...maxes), 1),
      'client deliveries/s during a fan-out': Math.round((clientCount / Math.max(0.001, median(maxes))) * 1000),
    };
  } finally {
    await Promise.all((fleet?.clients ?? []).map((c) => c.dispose()));
    await server?.stop(10_000);
    await publisher.close();
    await sql.end().catch(() => undefined);
    await db.drop();
  }
}

if (isMain(import.meta.url)) {
  printFigures(
    'subscription fan-out (graphql-ws)',
    await run({ clients: readNumberFlag('clients'), events: readNumberFlag('events') }),
  );
}
