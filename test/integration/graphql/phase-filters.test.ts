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
  const data = await gqlData<{
    phases: { edges: { node: { cluster: string; namespace: string; name: string; deletedAt: string | null } }[] };
  }>(api.url, `{ phases(filter: ${filter}) { edges { node { cluster namespace name deletedAt } } } }`);
  return data.phases.edges.map(
    (e) => `${e.node.cluster}/${e.node.namespace}/${e.node.name}${e.node.deletedAt ? ' (deleted)' : ''}`,
  );
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
    expect(await names('{ search: "web", includeDeleted: true }')).toEqual([
      'prod/shop/web',
      'staging/shop/web (deleted)',
    ]);
  });

  it('combines filters: every one must hold', async () => {
    expect(await names('{ namespace: "shop", source: "cli-utils" }')).toEqual(['prod/shop/fresh', 'prod/shop/web']);
    expect(await names('{ namespace: "shop", labels: { team: "payments" } }')).toEqual([]);
    expect(await names('{ cluster: "prod", namespace: "shop", status: [Failed] }')).toEqual(['prod/shop/api']);
  });

  it('ids selects those phases only, with the other filters; an id that names no phase matches none', async () => {
    expect(await names(`{ ids: ["${seeded.web}", "${seeded.ledger}"] }`)).toEqual([
      'prod/payments/ledger',
      'prod/shop/web',
    ]);
    expect(await names(`{ ids: ["${seeded.web}", "${seeded.ledger}"], namespace: "shop" }`)).toEqual(['prod/shop/web']);
    expect(await names(`{ ids: ["${seeded.stagingWeb}"] }`)).toEqual([]);
    expect(await names(`{ ids: ["${seeded.stagingWeb}"], includeDeleted: true }`)).toEqual([
      'staging/shop/web (deleted)',
    ]);
    expect(await names('{ ids: ["-1", "1e3", "99999999999", "x; DROP TABLE"] }')).toEqual([]);
    expect(await names('{ ids: [] }')).toEqual([]);
  });

  it('refuses more than 1,000 ids with BAD_USER_INPUT', async () => {
    // In a variable: written inline, so many tokens hit the parser's token limit first.
    const ids = Array.from({ length: 1001 }, (_, i) => String(i + 1));
    const result = await gql(api.url, 'query($ids: [ID!]) { phases(filter: { ids: $ids }) { edges { cursor } } }', {
      ids,
    });
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toBe('filter.ids takes at most 1000 ids, got 1001');
  });

  it('refuses labels that are not an object of strings with BAD_USER_INPUT', async () => {
    const result = await gql(api.url, '{ phases(filter: { labels: ["team"] }) { edges { cursor } } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
