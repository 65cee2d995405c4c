/** Live status changes, with catch-up from the change log when `after` is given. */
import type { SubscriptionPhaseStatusChangedArgs, SubscriptionResolvers } from '../../generated/graphql.ts';
import type { StatusChange } from '../../history/types.ts';
import type { GraphqlContext } from '../context.ts';
import { parseSeq } from '../cursor.ts';
import { badUserInput } from '../errors.ts';
import { toChangeFilter } from './query.ts';
import { toStatusChange } from './shapes.ts';

function subscribeScope(scope: 'phase' | 'resource' | 'cluster' | 'condition') {
  return (
    _parent: unknown,
    args: SubscriptionPhaseStatusChangedArgs,
    ctx: GraphqlContext,
  ): AsyncIterableIterator<StatusChange> => {
    if (ctx.read.changes === undefined) throw new Error('no change feed is wired into this server');
    const filter = toChangeFilter(args.filter);
    if (filter.scopes !== undefined && !filter.scopes.includes(scope))
      throw badUserInput(`this subscription carries ${scope} changes only`);
    return ctx.read.changes.subscribe(ctx.principal.access, { ...filter, scopes: [scope] }, parseSeq(args.after));
  };
}

/** The feed yields the changes as written; `resolve` shapes each into the SDL's StatusChange. */
export const subscriptionResolvers: { Subscription: SubscriptionResolvers } = {
  Subscription: {
    phaseStatusChanged: {
      subscribe: subscribeScope('phase'),
      resolve: (change: StatusChange) => toStatusChange(change),
    },
    phaseConditionChanged: {
      subscribe: subscribeScope('condition'),
      resolve: (change: StatusChange) => toStatusChange(change),
    },
    resourceStatusChanged: {
      subscribe: subscribeScope('resource'),
      resolve: (change: StatusChange) => toStatusChange(change),
    },
    clusterStatusChanged: {
      subscribe: subscribeScope('cluster'),
      resolve: (change: StatusChange) => toStatusChange(change),
    },
  },
};
