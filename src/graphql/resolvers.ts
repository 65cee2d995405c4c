/**
 * Resolvers: one call into a store, service or loader each, shaping nothing but the result. Every
 * root field is guarded by a scope: `read` for queries and subscriptions, `admin` for token
 * management; restrictions to clusters/namespaces are applied by the stores themselves. Types come
 * from schema.graphql through graphql-codegen (`npm run codegen`, see codegen.ts).
 */
import { hasScope } from '../auth/principal.ts';
import type { TokenScope } from '../auth/tokens.ts';
import type { Resolvers, ResolverFn } from '../generated/graphql.ts';
import type { GraphqlContext } from './context.ts';
import { forbidden } from './errors.ts';
import { clusterResolvers } from './resolvers/cluster.ts';
import { mutationResolvers } from './resolvers/mutation.ts';
import { phaseResolvers } from './resolvers/phase.ts';
import { queryResolvers } from './resolvers/query.ts';
import { reportResolvers } from './resolvers/reports.ts';
import { subscriptionResolvers } from './resolvers/subscription.ts';
import { DateTimeScalar, DurationScalar, JsonScalar } from './scalars.ts';

/** Root fields that need `admin`; every other root field needs `read`. */
const ADMIN_FIELDS = new Set(['Query.tokens', 'Mutation.createToken', 'Mutation.revokeToken', 'Mutation.refreshCluster', 'Mutation.refreshPhase']);

type AnyResolverFn = ResolverFn<unknown, unknown, GraphqlContext, unknown>;

function guard(field: string, resolve: AnyResolverFn): AnyResolverFn {
  const scope: TokenScope = ADMIN_FIELDS.has(field) ? 'admin' : 'read';
  return (parent, args, ctx, info) => {
    if (!hasScope(ctx.principal, scope)) throw forbidden(`${field.split('.')[1]} needs a token with the ${scope} scope`);
    return resolve(parent, args, ctx, info);
  };
}

/** The same resolvers with a scope check in front of each field (its `subscribe` for subscriptions). */
function guardRoot<T extends object>(typeName: 'Query' | 'Mutation' | 'Subscription', fields: T): T {
  const guarded = Object.entries(fields).map(([name, value]: [string, unknown]) => {
    const key = `${typeName}.${name}`;
    if (typeof value === 'function') return [name, guard(key, value as AnyResolverFn)];
    const object = value as { subscribe?: AnyResolverFn; resolve?: AnyResolverFn };
    if (object.subscribe !== undefined) return [name, { ...object, subscribe: guard(key, object.subscribe) }];
    if (object.resolve !== undefined) return [name, { ...object, resolve: guard(key, object.resolve) }];
    throw new Error(`${key} has neither a resolver nor a subscribe function`);
  });
  return Object.fromEntries(guarded) as T;
}

export function createResolvers(): Resolvers {
  return {
    DateTime: DateTimeScalar,
    JSON: JsonScalar,
    Duration: DurationScalar,
    Query: guardRoot('Query', { ...queryResolvers.Query, ...reportResolvers.Query }),
    Mutation: guardRoot('Mutation', mutationResolvers.Mutation),
    Subscription: guardRoot('Subscription', subscriptionResolvers.Subscription),
    ...phaseResolvers,
    ...clusterResolvers,
  };
}
