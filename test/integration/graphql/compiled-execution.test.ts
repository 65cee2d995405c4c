/**
 * Compiled queries (graphql-jit) answer exactly as graphql-js does: the same data, the same errors
 * with the same codes and HTTP status, through the whole server. Two servers over one seeded
 * database: one that never compiles (graphql-js, the reference) and one that compiles every query
 * at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, startTestApi, type TestApi } from './helpers.ts';
import { iso, seedHistory } from './seed.ts';

let database: TestDatabase;
let db: Db;
let reference: TestApi;
let compiled: TestApi;

beforeAll(async () => {
  database = await createTestDatabase('gql_compiled');
  await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  reference = await startTestApi({ db, compileOnUse: Number.MAX_SAFE_INTEGER });
  compiled = await startTestApi({ db, compileOnUse: 1 });
});

afterAll(async () => {
  await reference?.close();
  await compiled?.close();
  await db?.$disconnect();
  await database?.drop();
});

const HISTORY = `query History($cluster: String!, $namespace: String!, $name: String!, $from: DateTime!, $first: Int, $after: String, $details: Boolean!, $noCursor: Boolean!) {
  phase(cluster: $cluster, namespace: $namespace, name: $name) {
    name
    history(from: $from, first: $first, after: $after) {
      edges { cursor @skip(if: $noCursor) node { status from to ...Details @include(if: $details) } }
      pageInfo { hasNextPage endCursor }
    }
  }
}
fragment Details on PhaseInterval { message summary { current failed total } worstResource }`;

const web = { cluster: 'prod', namespace: 'shop', name: 'web' };

const cases: [string, string, Record<string, unknown>][] = [
  ['a history page with variables', HISTORY, { ...web, from: iso(0), first: 2, details: false, noCursor: false }],
  [
    'the same page with details and without cursors (@include, @skip)',
    HISTORY,
    { ...web, from: iso(0), first: 2, details: true, noCursor: true },
  ],
  [
    'another phase, all of its history',
    HISTORY,
    { cluster: 'prod', namespace: 'shop', name: 'api', from: iso(0), first: 100, details: true, noCursor: false },
  ],
  [
    'a phase that does not exist',
    HISTORY,
    { cluster: 'prod', namespace: 'shop', name: 'nope', from: iso(0), details: false, noCursor: false },
  ],
  [
    'a page size out of range (BAD_USER_INPUT)',
    HISTORY,
    { ...web, from: iso(0), first: 1000, details: false, noCursor: false },
  ],
  [
    'a cursor this API did not give out (BAD_USER_INPUT)',
    HISTORY,
    { ...web, from: iso(0), after: 'not-a-cursor', details: false, noCursor: false },
  ],
  ['a variable that is not a DateTime', HISTORY, { ...web, from: 'yesterday', details: false, noCursor: false }],
  ['a missing required variable', HISTORY, { ...web, details: false, noCursor: false }],
  ['a variable of the wrong type', HISTORY, { ...web, from: iso(0), first: 'two', details: false, noCursor: false }],
  [
    'phases with aliases, inline fragments, enums and JSON',
    `{ all: phases(orderBy: SEVERITY) { edges { node { ... on Phase { id cluster name status since labels } summary { total failed } worstResource { key kind status since } } } }
       shop: phases(filter: { namespace: "shop", labels: { team: "shop" } }, first: 2) { edges { node { name } } pageInfo { hasNextPage } } }`,
    {},
  ],
  [
    'statusAt with resources, a gate with a Duration, the change log',
    `query($at: DateTime!) { phase(cluster: "prod", namespace: "shop", name: "web") { statusAt(at: $at) { status message from to resources { edges { node { key status since } } } } }
       gate(phase: { cluster: "prod", namespace: "shop", name: "web" }, for: "10m") { passed reason status heldSince remaining }
       statusChanges(first: 3) { edges { cursor node { seq scope toStatus resourceKey } } } }`,
    { at: iso(25) },
  ],
  [
    'a gate on a phase that does not exist (NOT_FOUND)',
    '{ gate(phase: { cluster: "prod", namespace: "shop", name: "nope" }, for: "1m") { passed } }',
    {},
  ],
  [
    'a bad Duration literal',
    '{ gate(phase: { cluster: "prod", namespace: "shop", name: "web" }, for: "soon") { passed } }',
    {},
  ],
  [
    'an admin field for an anonymous reader (FORBIDDEN, HTTP 403), which nulls the whole answer',
    '{ about { version } tokens { name } }',
    {},
  ],
  [
    '__typename and introspection',
    '{ __typename __schema { queryType { name } } __type(name: "GateReason") { enumValues { name } } }',
    {},
  ],
];

describe('compiled queries', () => {
  it.each(cases)('answer as graphql-js does: %s', async (_name, query, variables) => {
    const expected = await gql(reference.url, query, variables);
    // Twice: the first use compiles, the second runs the kept compiled query.
    expect(await gql(compiled.url, query, variables)).toEqual(expected);
    expect(await gql(compiled.url, query, variables)).toEqual(expected);
  });

  it('honour the variables of each request', async () => {
    const page = (name: string, first: number) =>
      gql<{ phase: { name: string; history: { edges: unknown[] } } }>(compiled.url, HISTORY, {
        cluster: 'prod',
        namespace: 'shop',
        name,
        from: iso(0),
        first,
        details: false,
        noCursor: true,
      });
    const [web2, api1, web3] = await Promise.all([page('web', 2), page('api', 1), page('web', 3)]);
    expect([web2.data?.phase.name, web2.data?.phase.history.edges.length]).toEqual(['web', 2]);
    expect([api1.data?.phase.name, api1.data?.phase.history.edges.length]).toEqual(['api', 1]);
    expect([web3.data?.phase.name, web3.data?.phase.history.edges.length]).toEqual(['web', 3]);
  });
});
