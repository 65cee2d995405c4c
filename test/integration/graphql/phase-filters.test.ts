/**
 * The phases filters queries.test.ts does not reach: namespace, includeDeleted, and filters combined
 * (every condition must hold), over the seeded history with one phase's inventory deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, type TestApi } from './helpers.ts';
import { at, seedHistory, type Seeded } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let seeded: Seeded;

beforeAll(async () => {
  database = await createTestDatabase('gql_phase_filters');
  seeded = await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  // staging/web's inventory vanished: the phase is kept, marked deleted.
  await db.phase.update({ where: { id: seeded.stagingWeb }, data: { deletedAt: at(50) } });
  api = await startTestApi({ db });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

async function names(filter: string): Promise<string[]> {
  const data = await gqlData<{ phases: { edges: { node: { cluster: string; namespace: string; name: string; deletedAt: string | null } }[] } }>(
    api.url, `{ phases(filter: ${filter}) { edges { node { cluster namespace name deletedAt } } } }`,
  );
  return data.phases.edges.map((e) => `${e.node.cluster}/${e.node.namespace}/${e.node.name}${e.node.deletedAt ? ' (deleted)' : ''}`);
}

describe('phase filters', () => {
  it('namespace selects phases of that namespace only', async () => {
    expect(await names('{ namespace: "payments" }')).toEqual(['prod/payments/ledger']);
    expect(await names('{ namespace: "shop" }')).toEqual(['prod/shop/api', 'prod/shop/fresh', 'prod/shop/web']);
    expect(await names('{ namespace: "nowhere" }')).toEqual([]);
  });

  it('leaves deleted phases out unless includeDeleted, and then marks them', async () => {
    expect(await names('{ cluster: "staging" }')).toEqual([]);
    expect(await names('{ cluster: "staging", includeDeleted: true }')).toEqual(['staging/shop/web (deleted)']);
    expect(await names('{ search: "web", includeDeleted: true }')).toEqual(['prod/shop/web', 'staging/shop/web (deleted)']);
  });

  it('combines filters: every one must hold', async () => {
    expect(await names('{ namespace: "shop", source: "cli-utils" }')).toEqual(['prod/shop/fresh', 'prod/shop/web']);
    expect(await names('{ namespace: "shop", labels: { team: "payments" } }')).toEqual([]);
    expect(await names('{ cluster: "prod", namespace: "shop", status: [Failed] }')).toEqual(['prod/shop/api']);
  });

  it('refuses labels that are not an object of strings with BAD_USER_INPUT', async () => {
    const result = await gql(api.url, '{ phases(filter: { labels: ["team"] }) { edges { cursor } } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
