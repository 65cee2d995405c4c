/**
 * Resolvers: one call into a store, service or loader each, shaping nothing but the result. Every
 * root field is guarded by a scope: `read` for queries and subscriptions, `admin` for token
 * management; restrictions to clusters/namespaces are applied by the stores themselves.
 */
import type { IFieldResolver, IResolvers } from '@graphql-tools/utils';
import { hasScope } from '../auth/principal.ts';
import type { TokenScope } from '../auth/tokens.ts';
import type { GraphqlContext } from './context.ts';
import { forbidden } from './errors.ts';
import { mutationResolvers } from './resolvers/mutation.ts';
import { phaseResolvers } from './resolvers/phase.ts';
import { queryResolvers } from './resolvers/query.ts';
import { reportResolvers } from './resolvers/reports.ts';
import { subscriptionResolvers } from './resolvers/subscription.ts';
import { DateTimeScalar, DurationScalar, JsonScalar } from './scalars.ts';

/** Root fields that need `admin`; every other root field needs `read`. */
const ADMIN_FIELDS = new Set(['Query.tokens', 'Mutation.createToken', 'Mutation.revokeToken', 'Mutation.refreshCluster', 'Mutation.refreshPhase']);

type Resolver = IFieldResolver<unknown, GraphqlContext>;

function guard(field: string, resolve: Resolver): Resolver {
  const scope: TokenScope = ADMIN_FIELDS.has(field) ? 'admin' : 'read';
  return (parent, args, ctx, info) => {
    if (!hasScope(ctx.principal, scope)) throw forbidden(`${field.split('.')[1]} needs a token with the ${scope} scope`);
    return resolve(parent, args, ctx, info);
  };
}

function guardRoot(typeName: string, fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, value]) => {
      const key = `${typeName}.${name}`;
      if (typeof value === 'function') return [name, guard(key, value as Resolver)];
      const sub = value as { subscribe: Resolver; resolve?: Resolver };
      return [name, { ...sub, subscribe: guard(key, sub.subscribe) }];
    }),
  );
}

export function createResolvers(): IResolvers<unknown, GraphqlContext> {
  return {
    DateTime: DateTimeScalar,
    JSON: JsonScalar,
    Duration: DurationScalar,
    Query: guardRoot('Query', { ...(queryResolvers.Query as Record<string, unknown>), ...reportResolvers.Query }),
    Mutation: guardRoot('Mutation', mutationResolvers.Mutation as Record<string, unknown>),
    Subscription: guardRoot('Subscription', subscriptionResolvers.Subscription as Record<string, unknown>),
    ...phaseResolvers,
  } as IResolvers<unknown, GraphqlContext>;
}
