import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { PROJECT_ROOT } from '../runtime/paths.ts';
import { createResolvers } from './resolvers.ts';

/** The SDL in schema.graphql, the single source of the API. */
export const TYPE_DEFS = readFileSync(path.join(PROJECT_ROOT, 'schema.graphql'), 'utf8');

/** The executable schema shared by HTTP (Apollo) and WebSocket (graphql-ws). */
export function createSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs: TYPE_DEFS, resolvers: createResolvers() });
}
