/** Admin mutations: token management. */
import type { MutationResolvers } from '../../generated/graphql.ts';
import { createToken, revokeToken, TokenInputError } from '../../auth/tokens.ts';
import { TokenNameTakenError } from '../../store/api-token-store.ts';
import type { GraphqlContext } from '../context.ts';
import { canSee } from '../../auth/principal.ts';
import type { RefreshOutcome } from '../../services/read-refresh.ts';
import { badUserInput, notFound, serviceUnavailable } from '../errors.ts';
import { requirePhase } from './query.ts';
import { toApiToken } from './shapes.ts';

export const mutationResolvers: { Mutation: MutationResolvers } = {
  Mutation: {
    createToken: async (_parent, args, ctx) => {
      try {
        const created = await createToken(ctx.read.tokens, { name: args.name, scopes: args.scopes, clusters: args.clusters ?? [], namespaces: args.namespaces ?? [] });
        ctx.log.info({ token: created.token.name, by: ctx.principal.name }, 'API token created');
        return { token: toApiToken(created.token), secret: created.secret };
      } catch (error) {
        if (error instanceof TokenInputError || error instanceof TokenNameTakenError) throw badUserInput(error.message);
        throw error;
      }
    },
    revokeToken: async (_parent, args, ctx) => {
      const revoked = await revokeToken(ctx.read.tokens, args.name);
      if (revoked) ctx.log.info({ token: args.name, by: ctx.principal.name }, 'API token revoked');
      return revoked;
    },
    refreshCluster: async (_parent, args, ctx) => {
      const name = args.cluster;
      // A cluster has no row until its first snapshot, so the worker decides whether it is known.
      if (!canSee(ctx.principal, name, null)) throw notFound(`no cluster ${JSON.stringify(name)}`);
      const snapshot = requireSnapshot(await refresh(ctx, name));
      const after = (await ctx.clusters.listClusters()).find((c) => c.name === name);
      if (after === undefined) throw notFound(`no cluster ${JSON.stringify(name)}`);
      return { cluster: after, written: snapshot.written, outcome: snapshot.outcome ?? null, changes: snapshot.changes };
    },
    refreshPhase: async (_parent, args, ctx) => {
      const phase = await requirePhase(ctx, args.phase);
      requireSnapshot(await refresh(ctx, phase.cluster));
      const [fresh] = await ctx.read.phases.getPhasesByIds(ctx.principal.access, [phase.id]);
      return fresh ?? phase;
    },
  },
};

function refresh(ctx: GraphqlContext, cluster: string): Promise<RefreshOutcome> {
  if (ctx.read.refresher === undefined) throw serviceUnavailable('refresh is not available: this server has no snapshot queue');
  return ctx.read.refresher.refreshCluster(cluster);
}

function requireSnapshot(outcome: RefreshOutcome) {
  if (!outcome.ok) throw serviceUnavailable(outcome.message);
  return outcome.snapshot;
}
