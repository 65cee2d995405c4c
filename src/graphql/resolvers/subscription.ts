/** Live status changes, with catch-up from the change log when `after` is given. */
import type { IResolvers } from '@graphql-tools/utils';
import type { StatusChangeItem } from '../../store/read-types.ts';
import type { GraphqlContext } from '../context.ts';
import { parseSeq } from '../cursor.ts';
import { badUserInput } from '../errors.ts';
import { toChangeFilter, type StatusChangeFilterInput } from './query.ts';
import { toStatusChange } from './shapes.ts';

type Args = Record<string, unknown>;

function subscribeScope(scope: 'phase' | 'resource') {
  return (_parent: unknown, args: Args, ctx: GraphqlContext) => {
    if (ctx.read.changes === undefined) throw new Error('no change feed is wired into this server');
    const filter = toChangeFilter(args.filter as StatusChangeFilterInput);
    if (filter.scopes !== undefined && !filter.scopes.includes(scope)) throw badUserInput(`this subscription carries ${scope} changes only`);
    return ctx.read.changes.subscribe(ctx.principal.access, { ...filter, scopes: [scope] }, parseSeq(args.after as string | null));
  };
}

export const subscriptionResolvers: IResolvers<unknown, GraphqlContext> = {
  Subscription: {
    phaseStatusChanged: { subscribe: subscribeScope('phase'), resolve: (change: StatusChangeItem) => toStatusChange(change) },
    resourceStatusChanged: { subscribe: subscribeScope('resource'), resolve: (change: StatusChangeItem) => toStatusChange(change) },
  },
};
