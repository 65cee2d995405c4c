/** Admin mutations: token management. */
import type { MutationResolvers } from '../../generated/graphql.ts';
import { createToken, revokeToken, TokenAccessError, TokenInputError, type TokenInfo } from '../../auth/tokens.ts';
import { TokenNameTakenError } from '../../store/api-token-store.ts';
import type { GraphqlContext } from '../context.ts';
import { canSee } from '../../auth/principal.ts';
import type { RefreshOutcome } from '../../services/refresh-cluster.ts';
import { badUserInput, forbidden, notFound, serviceUnavailable } from '../errors.ts';
import { requirePhase } from './query.ts';
import { toApiToken } from './shapes.ts';

export const mutationResolvers: { Mutation: MutationResolvers } = {
  Mutation: {
    createToken: async (_parent, args, ctx) => {
      try {
        const created = await createToken(
          ctx.read.tokens,
          { name: args.name, scopes: args.scopes, clusters: args.clusters ?? [], namespaces: args.namespaces ?? [] },
          ctx.principal.access,
        );
        ctx.log.info(auditFields(created.token, ctx), 'API token created');
        return { token: toApiToken(created.token), secret: created.secret };
      } catch (error) {
        throw toTokenApiError(error);
      }
    },
    revokeToken: async (_parent, args, ctx) => {
      try {
        const revoked = await revokeToken(ctx.read.tokens, args.name, ctx.principal.access);
        if (revoked !== null) ctx.log.info(auditFields(revoked, ctx), 'API token revoked');
        return revoked !== null;
      } catch (error) {
        throw toTokenApiError(error);
      }
    },
    refreshCluster: async (_parent, args, ctx) => {
      const name = args.cluster;
      // A cluster has no row until its first snapshot, so the worker decides whether it is known.
      if (!canSee(ctx.principal, name, null)) throw notFound(`no cluster ${JSON.stringify(name)}`);
      const snapshot = requireSnapshot(await refresh(ctx, name));
      const after = (await ctx.clusters.listClusters()).find((c) => c.name === name);
      if (after === undefined) throw notFound(`no cluster ${JSON.stringify(name)}`);
      return {
        cluster: after,
        written: snapshot.written,
        outcome: snapshot.outcome ?? null,
        changes: snapshot.changes,
      };
    },
    refreshPhase: async (_parent, args, ctx) => {
      const phase = await requirePhase(ctx, args.phase);
      requireSnapshot(await refresh(ctx, phase.cluster));
      const [fresh] = await ctx.read.phases.getPhasesByIds(ctx.principal.access, [phase.id]);
      return fresh ?? phase;
    },
  },
};

/**
 * The audit line's fields: which token (its name, scopes and restriction) and who acted. `tokenName`,
 * not `token`: the logger censors `token` fields, which are for secrets.
 */
function auditFields(token: TokenInfo, ctx: GraphqlContext) {
  return {
    tokenName: token.name,
    scopes: token.scopes,
    clusters: token.clusters,
    namespaces: token.namespaces,
    by: ctx.principal.name,
  };
}

function toTokenApiError(error: unknown): unknown {
  if (error instanceof TokenInputError || error instanceof TokenNameTakenError) return badUserInput(error.message);
  if (error instanceof TokenAccessError) return forbidden(error.message);
  return error;
}

function refresh(ctx: GraphqlContext, cluster: string): Promise<RefreshOutcome> {
  if (ctx.read.refresher === undefined)
    throw serviceUnavailable('refresh is not available: this server has no snapshot queue');
  return ctx.read.refresher.refreshCluster(cluster);
}

function requireSnapshot(outcome: RefreshOutcome) {
  if (!outcome.ok) throw serviceUnavailable(outcome.message);
  return outcome.snapshot;
}
