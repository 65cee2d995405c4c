/**
 * `phaselog token create|list|revoke`. With an API token configured (PHASELOG_TOKEN or --token, admin
 * scope) it goes through the API's admin mutations; without one it works on this machine's phaselog
 * database directly (DATABASE_URL, or the embedded one of a running `phaselog start`), which is how
 * the first admin token is made.
 */
import {
  createTokenInDatabase,
  listTokensInDatabase,
  revokeTokenInDatabase,
  TokenInputError,
} from '../../auth/tokens.ts';
import type { TokenInfo, TokenScope } from '../../auth/tokens.ts';
import { TokenNameTakenError } from '../../store/api-token-store.ts';
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { formatAgo, isDataFormat, renderData, renderList, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { resolveLocalDatabaseUrl } from '../local-database.ts';

const CREATE = `mutation Create($name: String!, $scopes: [TokenScope!]!, $clusters: [String!], $namespaces: [String!]) {
  createToken(name: $name, scopes: $scopes, clusters: $clusters, namespaces: $namespaces) { secret token { name scopes clusters namespaces createdAt } }
}`;
const LIST = `{ tokens { name scopes clusters namespaces createdAt lastUsedAt revokedAt } }`;
const REVOKE = `mutation Revoke($name: String!) { revokeToken(name: $name) }`;

interface TokenRow {
  name: string;
  scopes: readonly string[];
  clusters: readonly string[];
  namespaces: readonly string[];
  createdAt: string | Date;
  lastUsedAt: string | Date | null;
  revokedAt: string | Date | null;
}

export interface TokenOptions {
  action?: string;
  name?: string;
  scopes: string[];
  clusters: string[];
  namespaces: string[];
  output: OutputFormat;
  headers: boolean;
}

async function direct<T>(ctx: CommandContext, run: (url: string) => Promise<T>): Promise<T> {
  const url = resolveLocalDatabaseUrl(ctx.config);
  try {
    return await run(url);
  } catch (error) {
    if (error instanceof TokenNameTakenError || error instanceof TokenInputError)
      throw new CliError(error.message, EXIT.usage);
    throw error;
  }
}

function shown(t: TokenInfo): TokenRow {
  return { ...t, createdAt: t.createdAt, lastUsedAt: t.lastUsedAt ?? null, revokedAt: t.revokedAt ?? null };
}

export async function runToken(ctx: CommandContext, options: TokenOptions): Promise<number> {
  switch (options.action) {
    case 'create': {
      if (!options.name) throw new CliError('token create needs a name', EXIT.usage);
      const scopes = options.scopes.length ? options.scopes : ['read'];
      const bad = scopes.filter((s) => s !== 'read' && s !== 'admin');
      if (bad.length) throw new CliError(`unknown scope ${bad.join(', ')} (use read or admin)`, EXIT.usage);
      const input = {
        name: options.name,
        scopes: scopes as TokenScope[],
        clusters: options.clusters,
        namespaces: options.namespaces,
      };
      const created = ctx.hasToken
        ? (await ctx.api.query<{ createToken: { secret: string; token: TokenRow } }>(CREATE, input)).createToken
        : await direct(ctx, (url) => createTokenInDatabase(url, input)).then((r) => ({
            secret: r.secret,
            token: shown(r.token),
          }));
      if (isDataFormat(options.output)) ctx.out(renderData(created, options.output));
      else
        ctx.out(
          `${created.secret}\n# token "${options.name}" (${scopes.join(',')}) created; the secret is shown only now. Use it as PHASELOG_TOKEN or an "Authorization: Bearer" header.\n`,
        );
      return EXIT.ok;
    }
    case 'list': {
      const tokens: TokenRow[] = ctx.hasToken
        ? (await ctx.api.query<{ tokens: TokenRow[] }>(LIST)).tokens
        : (await direct(ctx, listTokensInDatabase)).map(shown);
      if (isDataFormat(options.output))
        ctx.out(
          renderList(
            tokens.map((t) => ({ kind: 'ApiToken', ...t })),
            options.output,
          ),
        );
      else if (options.output === 'name') ctx.out(tokens.map((t) => `${t.name}\n`).join(''));
      else
        ctx.out(
          renderTable(
            ['NAME', 'SCOPES', 'CLUSTERS', 'NAMESPACES', 'CREATED', 'LAST USED', 'REVOKED'],
            tokens.map((t) => [
              t.name,
              t.scopes.join(','),
              t.clusters.join(',') || '*',
              t.namespaces.join(',') || '*',
              formatAgo(t.createdAt, ctx.now()),
              formatAgo(t.lastUsedAt, ctx.now()),
              formatAgo(t.revokedAt, ctx.now()),
            ]),
            { headers: options.headers },
          ),
        );
      return EXIT.ok;
    }
    case 'revoke': {
      const name = options.name;
      if (!name) throw new CliError('token revoke needs a name', EXIT.usage);
      const revoked = ctx.hasToken
        ? (await ctx.api.query<{ revokeToken: boolean }>(REVOKE, { name })).revokeToken
        : await direct(ctx, (url) =>
            revokeTokenInDatabase(url, name, {
              redisUrl: ctx.config.redis.url ?? 'redis://127.0.0.1:6379',
              prefix: ctx.config.redis.prefix,
            }),
          );
      if (!revoked)
        throw new CliError(
          ctx.hasToken
            ? `no active token named "${name}" that your token may manage`
            : `no active token named "${name}"`,
          EXIT.notFound,
        );
      ctx.out(`token "${name}" revoked\n`);
      return EXIT.ok;
    }
    default:
      throw new CliError(
        'use: phaselog token create <name> [--admin | --scope read|admin] [--cluster C] [--namespace N] | token list | token revoke <name>',
        EXIT.usage,
      );
  }
}
