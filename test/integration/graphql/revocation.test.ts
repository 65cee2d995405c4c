/**
 * Revoking an API token closes the WebSockets it authenticated, on every API replica: two replicas
 * share the database and Redis; a subscriber with token T on one of them receives events until T is
 * revoked (through the admin mutation on the other replica, or straight in the database as the CLI
 * does without a token), then its socket closes with 4403 Forbidden, while a subscriber with another
 * token keeps receiving.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, revokeTokenInDatabase } from '../../../src/auth/tokens.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { insertStatusChange } from '../../helpers/history-rows.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { gql, startTestApi, type TestApi } from './helpers.ts';
import { at, seedHistory, type Seeded } from './seed.ts';

let database: TestDatabase;
let db: Db;
let seeded: Seeded;
let replicaA: TestApi;
let replicaB: TestApi;
let publisher: ChangePublisher;
let admin: string;
const prefix = uniquePrefix('gql-revoke');
// Long enough that only the Redis announcement can close sockets within the first test.
const SLOW_RECHECK_MS = 60_000;
const FAST_RECHECK_MS = 500;
let apiOptions: Parameters<typeof startTestApi>[0];

beforeAll(async () => {
  database = await createTestDatabase('gql_revoke');
  seeded = await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  admin = (await createToken(createApiTokenStore(db), { name: 'admin', scopes: ['admin'] })).secret;
  publisher = createChangePublisher(testRedisUrl(), { prefix });
  apiOptions = {
    db,
    anonymousRead: false,
    redisUrl: testRedisUrl(),
    channelPrefix: prefix,
    tokenRecheckMs: SLOW_RECHECK_MS,
  };
  replicaA = await startTestApi(apiOptions);
  replicaB = await startTestApi(apiOptions);
});

afterAll(async () => {
  await replicaA?.close();
  await replicaB?.close();
  await publisher?.close();
  await db?.$disconnect();
  await database?.drop();
});

const WEB = { sourceKind: 'cli-utils', namespace: 'shop', name: 'web' };
const SUB = 'subscription { phaseStatusChanged { seq toStatus } }';

let minute = 100;
/** Writes a change to the log and publishes it, as the snapshot side does; returns its seq. */
async function publishChange(toStatus: string): Promise<string> {
  minute += 1;
  const seq = await insertStatusChange(db, {
    clusterId: seeded.prod,
    phaseId: seeded.web,
    scope: 'phase',
    at: at(minute),
    fromStatus: 'Current',
    toStatus,
    message: '',
  });
  const row = { seq, at: at(minute) };
  await publisher.publish([
    {
      seq: row.seq,
      at: row.at,
      cluster: 'prod',
      clusterId: seeded.prod,
      phaseId: seeded.web,
      phase: WEB,
      scope: 'phase',
      resourceKey: null,
      fromStatus: 'Current',
      toStatus,
      message: '',
    },
  ]);
  return row.seq.toString();
}

interface Subscriber {
  /** The seqs received so far. */
  seqs: string[];
  /** Resolves with the close code once the socket closes. */
  closed: Promise<number>;
  /** Resolves once the server acknowledged the connection and the subscription is live. */
  waitFor(seq: string): Promise<void>;
  dispose(): Promise<void>;
}

function subscribe(url: string, secret: string): Subscriber {
  let onClosed: (code: number) => void = () => {};
  const closed = new Promise<number>((resolve) => (onClosed = resolve));
  const client: Client = createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    // The close is what these tests wait for (on.closed); graphql-ws would also print it.
    onNonLazyError: () => {},
    connectionParams: { authorization: `Bearer ${secret}` },
    on: { closed: (event) => onClosed((event as { code: number }).code) },
  });
  const seqs: string[] = [];
  const waiters: { seq: string; resolve: () => void }[] = [];
  client.subscribe<{ phaseStatusChanged: { seq: string } }>(
    { query: SUB },
    {
      next: (value) => {
        const seq = value.data?.phaseStatusChanged.seq;
        if (seq === undefined) return;
        seqs.push(seq);
        for (const waiter of waiters.filter((w) => w.seq === seq)) waiter.resolve();
      },
      error: () => {},
      complete: () => {},
    },
  );
  return {
    seqs,
    closed,
    waitFor: (seq) =>
      seqs.includes(seq) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ seq, resolve })),
    dispose: async () => {
      await client.dispose();
    },
  };
}

/** Publishes changes until `subscriber` received one (the subscription is live), with a deadline. */
async function untilLive(...subscribers: Subscriber[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const seq = await publishChange('Failed');
    const all = Promise.all(subscribers.map((s) => s.waitFor(seq)));
    const got = await Promise.race([
      all.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 200)),
    ]);
    if (got) return;
  }
  throw new Error('subscriptions did not go live within 10 s');
}

async function readToken(name: string): Promise<string> {
  return (await createToken(createApiTokenStore(db), { name, scopes: ['read'] })).secret;
}

async function canQuery(api: TestApi, secret: string): Promise<boolean> {
  const result = await gql(api.url, '{ clusters { name } }', {}, secret);
  return result.status === 200 && result.errors === undefined;
}

describe('revoking a token', () => {
  it('through the admin mutation on one replica closes its sockets on another with 4403, and other tokens keep receiving', async () => {
    const revoked = await readToken('ci-revoked');
    const kept = await readToken('dashboard-kept');
    const victim = subscribe(replicaB.wsUrl, revoked);
    const survivor = subscribe(replicaB.wsUrl, kept);
    try {
      await untilLive(victim, survivor);
      expect(await canQuery(replicaB, revoked)).toBe(true);

      const answer = await gql<{ revokeToken: boolean }>(
        replicaA.url,
        'mutation($name: String!) { revokeToken(name: $name) }',
        { name: 'ci-revoked' },
        admin,
      );
      expect(answer.data?.revokeToken).toBe(true);

      expect(await victim.closed).toBe(4403);
      const after = await publishChange('Current');
      await survivor.waitFor(after);
      expect(victim.seqs).not.toContain(after);
      // Replica B forgot the token: HTTP requests and new connections with it are refused.
      expect(await canQuery(replicaB, revoked)).toBe(false);
      expect(await canQuery(replicaA, revoked)).toBe(false);
      const retry = subscribe(replicaB.wsUrl, revoked);
      expect(await retry.closed).toBe(4403);
      await retry.dispose();
      expect(await canQuery(replicaB, kept)).toBe(true);
    } finally {
      await victim.dispose();
      await survivor.dispose();
    }
  });

  it('straight in the database by the CLI, announced on Redis, closes its sockets at once', async () => {
    const revoked = await readToken('cli-announced');
    const kept = await readToken('cli-announced-kept');
    const victim = subscribe(replicaA.wsUrl, revoked);
    const survivor = subscribe(replicaA.wsUrl, kept);
    try {
      await untilLive(victim, survivor);

      expect(await revokeTokenInDatabase(database.url, 'cli-announced', { redisUrl: testRedisUrl(), prefix })).toBe(
        true,
      );

      // Replica A re-checks only every minute: the announcement closed the socket.
      expect(await victim.closed).toBe(4403);
      const after = await publishChange('Current');
      await survivor.waitFor(after);
      expect(await canQuery(replicaA, revoked)).toBe(false);
    } finally {
      await victim.dispose();
      await survivor.dispose();
    }
  });

  it('straight in the database with no announcement (Redis unreachable) closes its sockets at the next re-check', async () => {
    // No announcement reaches the replicas on this path; their periodic re-check must find it.
    const replicaC = await startTestApi({ ...apiOptions, tokenRecheckMs: FAST_RECHECK_MS });
    const replicaD = await startTestApi({ ...apiOptions, tokenRecheckMs: FAST_RECHECK_MS });
    const revoked = await readToken('cli-revoked');
    const kept = await readToken('cli-kept');
    const victimA = subscribe(replicaC.wsUrl, revoked);
    const victimB = subscribe(replicaD.wsUrl, revoked);
    const survivor = subscribe(replicaC.wsUrl, kept);
    try {
      await untilLive(victimA, victimB, survivor);

      expect(
        await revokeTokenInDatabase(database.url, 'cli-revoked', { redisUrl: 'redis://127.0.0.1:1', prefix }),
      ).toBe(true);

      expect(await victimA.closed).toBe(4403);
      expect(await victimB.closed).toBe(4403);
      const after = await publishChange('Current');
      await survivor.waitFor(after);
      expect(await canQuery(replicaC, revoked)).toBe(false);
      expect(await canQuery(replicaD, revoked)).toBe(false);
    } finally {
      await victimA.dispose();
      await victimB.dispose();
      await survivor.dispose();
      await replicaC.close();
      await replicaD.close();
    }
  });
});
