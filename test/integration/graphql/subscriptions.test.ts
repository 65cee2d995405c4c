/**
 * Subscriptions over a real graphql-ws client and real Redis: a client resuming with `after`
 * gets what it missed from the change log, then live events, without duplicates; restrictions
 * apply to live events as to the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import type { StatusChange } from '../../../src/history/types.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { insertStatusChange } from '../../helpers/history-rows.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { startTestApi, wsClient, type TestApi } from './helpers.ts';
import { at, seedHistory, type Seeded } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let seeded: Seeded;
let publisher: ChangePublisher;
let paymentsReader: string;
let seqs: bigint[];
const prefix = uniquePrefix('gql-subs');

beforeAll(async () => {
  database = await createTestDatabase('gql_subs');
  seeded = await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  seqs = (await db.statusChange.findMany({ orderBy: { seq: 'asc' }, select: { seq: true } })).map((r) => r.seq);
  paymentsReader = (
    await createToken(createApiTokenStore(db), {
      name: 'payments',
      scopes: ['read'],
      clusters: ['prod'],
      namespaces: ['payments'],
    })
  ).secret;
  publisher = createChangePublisher(testRedisUrl(), { prefix });
  api = await startTestApi({ db, anonymousRead: true, redisUrl: testRedisUrl(), channelPrefix: prefix });
});

afterAll(async () => {
  await api?.close();
  await publisher?.close();
  await db?.$disconnect();
  await database?.drop();
});

/** Writes a change to the log (as the snapshot side does) and returns it as published. */
async function appendChange(
  phaseId: number,
  name: { namespace: string; name: string; sourceKind: string },
  scope: 'phase' | 'resource',
  toStatus: string,
  minutes: number,
  resourceKey: string | null = null,
): Promise<StatusChange> {
  const seq = await insertStatusChange(db, {
    clusterId: seeded.prod,
    phaseId,
    scope,
    at: at(minutes),
    fromStatus: 'Current',
    toStatus,
    resourceKey,
    message: `to ${toStatus}`,
  });
  return {
    seq,
    at: at(minutes),
    cluster: 'prod',
    clusterId: seeded.prod,
    phaseId,
    phase: name,
    scope,
    resourceKey,
    fromStatus: 'Current',
    toStatus,
    message: `to ${toStatus}`,
  };
}

const WEB = { sourceKind: 'cli-utils', namespace: 'shop', name: 'web' };
const LEDGER = { sourceKind: 'argocd', namespace: 'payments', name: 'ledger' };

interface Event {
  seq: string;
  scope: string;
  toStatus: string | null;
  phase: { name: string } | null;
}

function subscribe(query: string, variables: Record<string, unknown>, token?: string) {
  const client = wsClient(api.wsUrl, token);
  const iterator = client.iterate<{ [field: string]: Event }>({ query, variables })[Symbol.asyncIterator]();
  return {
    async next(): Promise<Event> {
      const result = await iterator.next();
      if (result.done) throw new Error('subscription ended');
      if (result.value.errors) throw new Error(JSON.stringify(result.value.errors));
      return Object.values(result.value.data ?? {})[0] as Event;
    },
    async close() {
      await iterator.return?.();
      await client.dispose();
    },
  };
}

const PHASE_SUB =
  'subscription($after: String, $filter: StatusChangeFilter) { phaseStatusChanged(after: $after, filter: $filter) { seq scope toStatus phase { name } } }';

describe('phaseStatusChanged', () => {
  it('replays what was missed after the cursor, then delivers live events once each', async () => {
    const sub = subscribe(PHASE_SUB, { after: String(seqs[0]) });
    try {
      const replayed = [await sub.next(), await sub.next(), await sub.next(), await sub.next()];
      expect(replayed.map((e) => [e.seq, e.toStatus, e.phase?.name])).toEqual([
        [String(seqs[2]), 'Failed', 'web'],
        [String(seqs[4]), 'Current', 'web'],
        [String(seqs[5]), 'Current', 'ledger'],
        [String(seqs[6]), 'Failed', 'api'],
      ]);
      // The last replayed change arrives again live (published late): it is not delivered twice.
      const lateDuplicate = await db.statusChange.findUniqueOrThrow({ where: { seq: seqs[6] as bigint } });
      const fresh = await appendChange(seeded.web, WEB, 'phase', 'InProgress', 70);
      const resourceOnly = await appendChange(seeded.web, WEB, 'resource', 'Failed', 70, 'apps/Deployment/shop/web');
      await publisher.publish([
        {
          seq: lateDuplicate.seq,
          at: lateDuplicate.at,
          cluster: 'prod',
          clusterId: seeded.prod,
          phaseId: seeded.api,
          phase: { sourceKind: 'flux', namespace: 'shop', name: 'api' },
          scope: 'phase',
          resourceKey: null,
          fromStatus: 'Current',
          toStatus: 'Failed',
          message: '',
        },
        resourceOnly,
        fresh,
      ]);
      const live = await sub.next();
      expect([live.seq, live.scope, live.toStatus, live.phase?.name]).toEqual([
        String(fresh.seq),
        'phase',
        'InProgress',
        'web',
      ]);
    } finally {
      await sub.close();
    }
  });

  it('delivers only what a restricted token may see, live as from the log', async () => {
    const sub = subscribe(PHASE_SUB, { after: String(seqs[0]) }, paymentsReader);
    try {
      const replayed = await sub.next();
      expect([replayed.seq, replayed.phase?.name]).toEqual([String(seqs[5]), 'ledger']);
      const hidden = await appendChange(seeded.web, WEB, 'phase', 'Failed', 80);
      const visible = await appendChange(seeded.ledger, LEDGER, 'phase', 'Failed', 80);
      await publisher.publish([hidden, visible]);
      const live = await sub.next();
      expect([live.seq, live.phase?.name, live.toStatus]).toEqual([String(visible.seq), 'ledger', 'Failed']);
    } finally {
      await sub.close();
    }
  });

  it('applies the filter to replayed and live events', async () => {
    const sub = subscribe(PHASE_SUB, { after: String(seqs[0]), filter: { toStatus: ['Failed'] } });
    try {
      const replayed = [await sub.next(), await sub.next()];
      expect(replayed.map((e) => [e.seq, e.phase?.name])).toEqual([
        [String(seqs[2]), 'web'],
        [String(seqs[6]), 'api'],
      ]);
    } finally {
      await sub.close();
    }
  });
});

describe('resourceStatusChanged', () => {
  it('carries resource changes only', async () => {
    const sub = subscribe(
      'subscription($after: String) { resourceStatusChanged(after: $after) { seq scope toStatus phase { name } } }',
      { after: String(seqs[0]) },
    );
    try {
      const first = await sub.next();
      expect([first.seq, first.scope, first.toStatus]).toEqual([String(seqs[1]), 'resource', 'Failed']);
    } finally {
      await sub.close();
    }
  });
});

describe('reconnecting', () => {
  it('a change committed and published while the client (re)subscribes arrives exactly once, in order', async () => {
    const last = await db.statusChange.findFirstOrThrow({ orderBy: { seq: 'desc' } });
    const sub = subscribe(PHASE_SUB, { after: String(last.seq), filter: { phaseId: String(seeded.ledger) } });
    try {
      // Racing the subscription: it may come from the log replay, from the Redis buffer, or both.
      const racing = await appendChange(seeded.ledger, LEDGER, 'phase', 'InProgress', 90);
      const publishing = publisher.publish([racing]);
      const first = await sub.next();
      await publishing;
      expect([first.seq, first.toStatus]).toEqual([String(racing.seq), 'InProgress']);
      const next = await appendChange(seeded.ledger, LEDGER, 'phase', 'Current', 91);
      await publisher.publish([racing, next]);
      const second = await sub.next();
      expect([second.seq, second.toStatus]).toEqual([String(next.seq), 'Current']);
    } finally {
      await sub.close();
    }
  });
});
