import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { PROJECT_ROOT } from '../runtime/paths.ts';
import { createResolvers } from './resolvers.ts';
import { refuseNulArguments } from './input-guard.ts';
import { assertRootFieldsDeclared, guardRootFields } from './root-scopes.ts';

/** The SDL in schema.graphql, the single source of the API. */
export const TYPE_DEFS = readFileSync(path.join(PROJECT_ROOT, 'schema.graphql'), 'utf8');

/**
 * The executable schema shared by HTTP (Apollo) and WebSocket (graphql-ws), every root field behind
 * its declared scope and every text argument checked for what PostgreSQL cannot take. Throws a
 * StartupError when a root field has no declared scope.
 */
export function createSchema(): GraphQLSchema {
  const schema = makeExecutableSchema({ typeDefs: TYPE_DEFS, resolvers: createResolvers() });
  assertRootFieldsDeclared(schema);
  // The scope check goes on last, so it runs first: a caller without the scope learns nothing more.
  return guardRootFields(refuseNulArguments(schema));
}
