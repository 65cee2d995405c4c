/**
 * Root fields are fail-closed: every Query, Mutation and Subscription field of schema.graphql has a
 * declared scope, a schema with an undeclared one does not start, and should one be served anyway
 * it is refused on every request, to every token.
 */
import { makeExecutableSchema } from '@graphql-tools/schema';
import { buildSchema, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/auth/tokens.ts';
import { createResolvers } from '../../../src/graphql/resolvers.ts';
import {
  assertRootFieldsDeclared,
  guardRootFields,
  ROOT_FIELD_RULES,
  undeclaredRootFields,
} from '../../../src/graphql/root-scopes.ts';
import { createSchema, TYPE_DEFS } from '../../../src/graphql/schema.ts';
import { StartupError } from '../../../src/runtime/errors.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, wsClient, type TestApi } from './helpers.ts';

/** Every root field named in schema.graphql, read from the SDL alone. */
function rootFieldsOfSdl(): string[] {
  const schema = buildSchema(TYPE_DEFS);
  const roots: [string, GraphQLObjectType | null | undefined][] = [
    ['Query', schema.getQueryType()],
    ['Mutation', schema.getMutationType()],
    ['Subscription', schema.getSubscriptionType()],
  ];
  return roots
    .flatMap(([name, type]) => Object.keys(type?.getFields() ?? {}).map((field) => `${name}.${field}`))
    .sort();
}

const declared = Object.entries(ROOT_FIELD_RULES)
  .flatMap(([type, fields]) => Object.keys(fields).map((field) => `${type}.${field}`))
  .sort();

/** The real SDL and resolvers plus fields nobody declared a scope for. */
function schemaWithUndeclaredFields(leaked: string[]) {
  const resolvers = createResolvers();
  return makeExecutableSchema({
    typeDefs: [
      TYPE_DEFS,
      'extend type Query { leak: String }',
      'extend type Mutation { wipe: Boolean }',
      'extend type Subscription { tap: String }',
    ],
    resolvers: {
      ...resolvers,
      Query: { ...resolvers.Query, leak: () => (leaked.push('leak'), 'secret data') },
      Mutation: { ...resolvers.Mutation, wipe: () => (leaked.push('wipe'), true) },
      Subscription: {
        ...resolvers.Subscription,
        tap: {
          subscribe: () => (
            leaked.push('tap'),
            (async function* () {
              yield { tap: 'secret' };
            })()
          ),
        },
      },
    },
  });
}

describe('root field declarations', () => {
  it('declare every root field of schema.graphql, and nothing else', () => {
    const fields = rootFieldsOfSdl();
    expect(fields.length).toBeGreaterThan(10);
    expect(declared).toEqual(fields);
    expect(undeclaredRootFields(createSchema())).toEqual([]);
  });

  it.each(rootFieldsOfSdl())('%s has a scope and a restriction rule', (field) => {
    const [type, name] = field.split('.') as [keyof typeof ROOT_FIELD_RULES, string];
    const rule = (ROOT_FIELD_RULES[type] as Record<string, { scope: string; restriction: string } | undefined>)[name];
    expect(['read', 'admin']).toContain(rule?.scope);
    expect(['none', 'narrowed', 'unrestricted-only']).toContain(rule?.restriction);
  });

  it('a schema with an undeclared root field refuses to start, naming each field', () => {
    const schema = schemaWithUndeclaredFields([]);
    expect(undeclaredRootFields(schema)).toEqual(['Query.leak', 'Mutation.wipe', 'Subscription.tap']);
    expect(() => assertRootFieldsDeclared(schema)).toThrow(StartupError);
    expect(() => assertRootFieldsDeclared(schema)).toThrow(/Query\.leak, Mutation\.wipe, Subscription\.tap/);
  });
});

describe('an undeclared root field served anyway', () => {
  let database: TestDatabase;
  let db: Db;
  let api: TestApi;
  let admin: string;
  const leaked: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('gql_root_scopes');
    db = createDb(database.url, { poolSize: 2 });
    admin = (await createToken(createApiTokenStore(db), { name: 'root', scopes: ['admin'] })).secret;
    // The start-up check skipped on purpose: the per-request check alone must refuse.
    api = await startTestApi({ db, anonymousRead: true, schema: guardRootFields(schemaWithUndeclaredFields(leaked)) });
  });

  afterAll(async () => {
    await api?.close();
    await db?.$disconnect();
    await database?.drop();
  });

  it.each([
    ['a query field', '{ leak }', 'leak'],
    ['a mutation field', 'mutation { wipe }', 'wipe'],
  ])(
    'is refused as %s over HTTP, even to an unrestricted admin token (FORBIDDEN, resolver never runs)',
    async (_label, query, field) => {
      for (const token of [admin, undefined]) {
        const result = await gql(api.url, query, {}, token);
        expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
        expect(result.data?.[field] ?? null).toBeNull();
      }
      expect(leaked).toEqual([]);
    },
  );

  it('is refused as a subscription over WebSocket (FORBIDDEN, subscribe never runs)', async () => {
    const client = wsClient(api.wsUrl, admin);
    try {
      const results: unknown[] = [];
      for await (const result of client.iterate({ query: 'subscription { tap }' })) results.push(result);
      expect(results).toEqual([
        { errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })] },
      ]);
    } finally {
      await client.dispose();
    }
    expect(leaked).toEqual([]);
  });

  it('while declared fields of the same schema answer as usual', async () => {
    expect(await gqlData(api.url, '{ about { version } }', {}, admin)).toEqual({ about: { version: 'test' } });
  });
});
