import type { IResolvers } from '@graphql-tools/utils';
import type { GraphqlContext } from './context.ts';
import { DateTimeScalar, JsonScalar } from './scalars.ts';

/** Resolvers: one call into a store or service each, shaping nothing but the result. */
export function createResolvers(): IResolvers<unknown, GraphqlContext> {
  return {
    DateTime: DateTimeScalar,
    JSON: JsonScalar,
    Query: {
      about: (_parent, _args, ctx) => ctx.about,
      clusters: (_parent, _args, ctx) => ctx.clusters.listClusters(),
    },
  };
}
