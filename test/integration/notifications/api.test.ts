/**
 * Notification deliveries over the API and the CLI: a token restricted to clusters or namespaces
 * sees only the deliveries of the changes it may see (filters cannot widen that), and the CLI lists
 * failed deliveries with their attempts and last error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createApiClient } from '../../../src/cli/api-client.ts';
import { runNotifications } from '../../../src/cli/commands/notifications.ts';
import type { CommandContext } from '../../../src/cli/context.ts';
import { painter } from '../../../src/cli/format.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { insertStatusChange } from '../../helpers/history-rows.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, type TestApi } from '../graphql/helpers.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let admin: string;
let shopReader: string;
let stagingReader: string;

const QUERY = `query($filter: NotificationDeliveryFilter) { notificationDeliveries(filter: $filter, first: 100) {
  edges { node { id route status cluster phase { namespace name } attempts lastError } } } }`;

interface Node {
  id: string;
  route: string;
  status: string;
  cluster: string;
  phase: { namespace: string; name: string } | null;
  attempts: number;
  lastError: string | null;
}

beforeAll(async () => {
  database = await createTestDatabase('notify_api');
  db = createDb(database.url, { poolSize: 4 });
  for (const cluster of ['prod', 'staging']) {
    const c = await db.cluster.create({ data: { name: cluster } });
    // A cluster-level change (reachability): it has no namespace.
    const reach = await insertStatusChange(db, {
      clusterId: c.id,
      phaseId: null,
      scope: 'cluster',
      at: new Date(),
      fromStatus: 'Reachable',
      toStatus: 'Unreachable',
    });
    await db.notificationDelivery.create({
      data: {
        route: 'ops',
        seq: reach,
        kind: 'transition',
        status: 'delivered',
        subject: `${cluster}/reach`,
        clusterId: c.id,
        phaseId: null,
        at: new Date(),
        attempts: 1,
      },
    });
    for (const namespace of ['shop', 'pay']) {
      const p = await db.phase.create({
        data: {
          clusterId: c.id,
          sourceKind: 'cli-utils',
          namespace,
          name: 'api',
          firstSeenAt: new Date(),
          lastSeenAt: new Date(),
        },
      });
      const seq = await insertStatusChange(db, {
        clusterId: c.id,
        phaseId: p.id,
        scope: 'phase',
        at: new Date(),
        fromStatus: 'Current',
        toStatus: 'Failed',
      });
      await db.notificationDelivery.create({
        data: {
          route: 'ops',
          seq,
          kind: 'transition',
          status: 'failed',
          reason: 'exhausted',
          subject: `${cluster}/${namespace}`,
          clusterId: c.id,
          phaseId: p.id,
          at: new Date(),
          attempts: 8,
          lastError: 'HTTP 503',
        },
      });
    }
  }
  const tokens = createApiTokenStore(db);
  admin = (await createToken(tokens, { name: 'root', scopes: ['admin'] })).secret;
  shopReader = (
    await createToken(tokens, { name: 'shop-ci', scopes: ['read'], clusters: ['prod'], namespaces: ['shop'] })
  ).secret;
  stagingReader = (await createToken(tokens, { name: 'staging-ci', scopes: ['read'], clusters: ['staging'] })).secret;
  api = await startTestApi({ db, anonymousRead: false });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

const where = (n: Node) => (n.phase === null ? n.cluster : `${n.cluster}/${n.phase.namespace}`);
async function seen(token: string, filter: Record<string, unknown> = {}): Promise<string[]> {
  const data = await gqlData<{ notificationDeliveries: { edges: { node: Node }[] } }>(
    api.url,
    QUERY,
    { filter },
    token,
  );
  return data.notificationDeliveries.edges.map((e) => where(e.node)).sort();
}

describe('notificationDeliveries', () => {
  it('shows an unrestricted token every delivery, with attempts and the last error', async () => {
    expect(await seen(admin)).toEqual(['prod', 'prod/pay', 'prod/shop', 'staging', 'staging/pay', 'staging/shop']);
    const failed = await gqlData<{ notificationDeliveries: { edges: { node: Node }[] } }>(
      api.url,
      QUERY,
      { filter: { status: ['failed'], cluster: 'prod', namespace: 'shop' } },
      admin,
    );
    expect(failed.notificationDeliveries.edges.map((e) => e.node)).toEqual([
      expect.objectContaining({
        route: 'ops',
        status: 'failed',
        attempts: 8,
        lastError: 'HTTP 503',
        id: expect.stringMatching(/^ops:\d+$/),
      }),
    ]);
  });

  it("shows a restricted token only its clusters' and namespaces' deliveries, whatever it filters on", async () => {
    // The cluster-level change of its cluster has no namespace: a namespace restriction does not hide it (as in statusChanges).
    expect(await seen(shopReader)).toEqual(['prod', 'prod/shop']);
    expect(await seen(shopReader, { cluster: 'staging' })).toEqual([]);
    expect(await seen(shopReader, { namespace: 'pay' })).toEqual([]);
    expect(await seen(stagingReader)).toEqual(['staging', 'staging/pay', 'staging/shop']);
    expect(await seen(stagingReader, { cluster: 'prod' })).toEqual([]);
  });

  it('pages newest first by endCursor, and refuses a cursor it did not give', async () => {
    const PAGE =
      'query($after: String) { notificationDeliveries(first: 4, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }';
    type Page = {
      notificationDeliveries: {
        edges: { node: { id: string } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
    };
    const first = await gqlData<Page>(api.url, PAGE, {}, admin);
    const second = await gqlData<Page>(
      api.url,
      PAGE,
      { after: first.notificationDeliveries.pageInfo.endCursor },
      admin,
    );
    expect(first.notificationDeliveries.pageInfo.hasNextPage).toBe(true);
    expect(second.notificationDeliveries.pageInfo.hasNextPage).toBe(false);
    const ids = [...first.notificationDeliveries.edges, ...second.notificationDeliveries.edges].map((e) => e.node.id);
    expect(new Set(ids).size).toBe(6);
    expect(ids.map((id) => BigInt(id.split(':')[1] as string))).toEqual(
      ids.map((id) => BigInt(id.split(':')[1] as string)).sort((a, b) => (a > b ? -1 : 1)),
    );
    const bad = await gql(api.url, PAGE, { after: '1; DROP TABLE x' }, admin);
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('refuses a caller without a token', async () => {
    const result = await gql(api.url, QUERY, {});
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it("phaselog notifications --status failed lists what receivers never got, within the token's scope", async () => {
    const run = async (token: string, output: 'table' | 'json') => {
      let out = '';
      const ctx = {
        api: createApiClient({ url: api.url, token }),
        out: (t: string) => void (out += t),
        err: () => {},
        paint: painter(false),
        decorated: false,
        now: () => new Date(),
        hasToken: true,
        errIsTerminal: false,
      } as unknown as CommandContext;
      await runNotifications(ctx, { statuses: ['failed'], limit: 50, output, headers: true });
      return out;
    };
    const table = await run(shopReader, 'table');
    expect(table.split('\n')[0]).toMatch(/^TIME\s+ROUTE\s+WHAT\s+STATUS\s+ATTEMPTS\s+LAST ERROR/);
    expect(table).toContain('prod/shop/api');
    expect(table).toMatch(/failed \(exhausted\)\s+8\s+HTTP 503/);
    expect(table).not.toContain('staging');
    const json = JSON.parse(await run(admin, 'json')) as {
      items: { kind: string; notification: string; status: string }[];
    };
    expect(json.items).toHaveLength(4);
    expect(
      json.items.every(
        (i) => i.kind === 'NotificationDelivery' && i.notification === 'transition' && i.status === 'failed',
      ),
    ).toBe(true);
  });
});
