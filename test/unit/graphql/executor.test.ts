/**
 * The compiled executor: an operation is compiled on its second use and kept within a bound, and a
 * compiled operation answers as graphql-js does (data, errors with their codes and the errors
 * resolvers threw, variables).
 */
import { makeExecutableSchema } from '@graphql-tools/schema';
import { execute, GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createCompiledExecution, type OperationRequest } from '../../../src/graphql/executor.ts';

class LostTableError extends Error {
  override readonly name = 'LostTableError';
}

const schema = makeExecutableSchema({
  typeDefs: `
    type Query {
      item(id: Int!): Item
      items(first: Int = 2): [Item!]!
      forbidden: String
      broken: String
      brokenNonNull: Item
    }
    type Item { id: Int! name: String! label(upper: Boolean = false): String! required: String! }`,
  resolvers: {
    Query: {
      item: (_p: unknown, { id }: { id: number }) => (id > 0 ? { id, name: `item ${id}` } : null),
      items: (_p: unknown, { first }: { first: number }) =>
        Array.from({ length: first }, (_, i) => ({ id: i + 1, name: `item ${i + 1}` })),
      forbidden: () => {
        throw new GraphQLError('no', { extensions: { code: 'FORBIDDEN' } });
      },
      broken: () => {
        throw new LostTableError('relation "x" does not exist');
      },
      brokenNonNull: () => ({ id: 1, name: 'x', required: null }),
    },
    Item: {
      label: (item: { name: string }, { upper }: { upper: boolean }) => (upper ? item.name.toUpperCase() : item.name),
      required: (item: { required?: string | null }) => (item.required === undefined ? 'yes' : item.required),
    },
  },
});

let hash = 0;
function request(query: string, variables?: Record<string, unknown>, queryHash = `q${++hash}`): OperationRequest {
  return { queryHash, document: parse(query), operationName: null, operationType: 'query', variables, context: {} };
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

const reference = (r: OperationRequest) =>
  execute({ schema, document: r.document, variableValues: r.variables, contextValue: r.context });

describe('compiled execution', () => {
  it('compiles an operation on its second use, and a query sent once never', async () => {
    const execution = createCompiledExecution(schema);
    await execution.execute(request('{ items { id } }', undefined, 'once'));
    expect(execution.compiledCount).toBe(0);
    await execution.execute(request('{ items { id name } }', undefined, 'twice'));
    await execution.execute(request('{ items { id name } }', undefined, 'twice'));
    expect(execution.compiledCount).toBe(1);
  });

  it('keeps at most maxOperations, the least recently used forgotten first, and still answers them all', async () => {
    const execution = createCompiledExecution(schema, { maxOperations: 2, compileOnUse: 1 });
    for (let round = 0; round < 2; round++) {
      for (let first = 1; first <= 5; first++) {
        const result = await execution.execute(
          request(`{ items(first: ${first}) { id } }`, undefined, `first-${first}`),
        );
        expect(result.data).toEqual({ items: Array.from({ length: first }, (_, i) => ({ id: i + 1 })) });
        expect(execution.compiledCount).toBeLessThanOrEqual(2);
      }
    }
    expect(execution.compiledCount).toBe(2);
  });

  // The last column names the error a resolver threw, which the error keeps (masking logs it).
  it.each<[string, string, Record<string, unknown> | undefined, string?]>([
    [
      'variables, @skip and @include',
      'query($id: Int!, $up: Boolean!, $noName: Boolean!) { item(id: $id) { id name @skip(if: $noName) label(upper: $up) @include(if: $up) } }',
      { id: 3, up: true, noName: true },
    ],
    ['a null object', 'query($id: Int!) { item(id: $id) { id } }', { id: -1 }],
    ['a default argument', '{ items { id label } }', undefined],
    ['a GraphQLError with a code from a resolver', '{ items(first: 1) { id } forbidden }', undefined, 'GraphQLError'],
    ['an unexpected error from a resolver', '{ broken }', undefined, 'LostTableError'],
    ['a null in a non-null field', '{ brokenNonNull { id required } }', undefined],
    ['a missing variable', 'query($id: Int!) { item(id: $id) { id } }', {}],
    ['a variable of the wrong type', 'query($id: Int!) { item(id: $id) { id } }', { id: 'three' }],
  ])('answers %s as graphql-js does', async (_name, query, variables, thrown) => {
    const execution = createCompiledExecution(schema, { compileOnUse: 1 });
    const r = request(query, variables);
    const result = await execution.execute(r);
    expect(execution.compiledCount).toBe(1);
    const expected = await reference(r);
    expect(json(result)).toEqual(json(expected));
    // What Apollo's error formatting and phaselog's masking read: extensions, and the error thrown.
    result.errors?.forEach((error, i) => {
      expect(error).toBeInstanceOf(GraphQLError);
      expect(error.extensions).toEqual(expected.errors?.[i]?.extensions);
    });
    if (thrown !== undefined) expect(result.errors?.map((e) => e.originalError?.name)).toContain(thrown);
  });
});
