/** Admin mutations: token management. */
import type { IResolvers } from '@graphql-tools/utils';
import { createToken, revokeToken, TokenInputError, type TokenScope } from '../../auth/tokens.ts';
import { TokenNameTakenError } from '../../store/api-token-store.ts';
import type { GraphqlContext } from '../context.ts';
import { badUserInput } from '../errors.ts';

type Args = Record<string, unknown>;

export const mutationResolvers: IResolvers<unknown, GraphqlContext> = {
  Mutation: {
    createToken: async (_parent, args: Args, ctx) => {
      try {
        const created = await createToken(ctx.read.tokens, {
          name: args.name as string,
          scopes: args.scopes as TokenScope[],
          clusters: (args.clusters as string[] | null) ?? [],
          namespaces: (args.namespaces as string[] | null) ?? [],
        });
        ctx.log.info({ token: created.token.name, by: ctx.principal.name }, 'API token created');
        return created;
      } catch (error) {
        if (error instanceof TokenInputError || error instanceof TokenNameTakenError) throw badUserInput(error.message);
        throw error;
      }
    },
    revokeToken: async (_parent, args: Args, ctx) => {
      const revoked = await revokeToken(ctx.read.tokens, args.name as string);
      if (revoked) ctx.log.info({ token: args.name, by: ctx.principal.name }, 'API token revoked');
      return revoked;
    },
  },
};
