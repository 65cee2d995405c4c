/** Live status changes, with catch-up from the change log when `after` is given. */
import type { IResolvers } from '@graphql-tools/utils';
import type { StatusChangeItem } from '../../store/read-types.ts';
import type { GraphqlContext } from '../context.ts';
import { parseSeq } from '../cursor.ts';
import { badUserInput } from '../errors.ts';
import { toChangeFilter, type StatusChangeFilterInput } from './query.ts';
import { toStatusChange } from './shapes.ts';

/** Arguments of the Subscription fields. */
interface ChangeSubscriptionArgs {
  filter?: StatusChangeFilterInput | null;
  after?: string | null;
}

function subscribeScope(scope: 'phase' | 'resource') {
  return (_parent: unknown, args: ChangeSubscriptionArgs, ctx: GraphqlContext) => {
    if (ctx.read.changes === undefined) throw new Error('no change feed is wired into this server');
    const filter = toChangeFilter(args.filter);
    if (filter.scopes !== undefined && !filter.scopes.includes(scope)) throw badUserInput(`this subscription carries ${scope} changes only`);
    return ctx.read.changes.subscribe(ctx.principal.access, { ...filter, scopes: [scope] }, parseSeq(args.after));
  };
}

export const subscriptionResolvers: IResolvers<unknown, GraphqlContext> = {
  Subscription: {
    phaseStatusChanged: { subscribe: subscribeScope('phase'), resolve: (change: StatusChangeItem) => toStatusChange(change) },
    resourceStatusChanged: { subscribe: subscribeScope('resource'), resolve: (change: StatusChangeItem) => toStatusChange(change) },
  },
};
