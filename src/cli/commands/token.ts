/** `phaselog token create|list|revoke`: API tokens, through the admin-scope GraphQL mutations. */
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { formatAgo, renderData, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';

const CREATE = `mutation Create($name: String!, $scopes: [TokenScope!]!, $clusters: [String!], $namespaces: [String!]) {
  createToken(name: $name, scopes: $scopes, clusters: $clusters, namespaces: $namespaces) { secret token { name scopes clusters namespaces } }
}`;
const LIST = `{ tokens { name scopes clusters namespaces createdAt lastUsedAt revokedAt } }`;
const REVOKE = `mutation Revoke($name: String!) { revokeToken(name: $name) }`;

export async function runToken(
  ctx: CommandContext,
  options: { action?: string; name?: string; scopes: string[]; clusters: string[]; namespaces: string[]; output: OutputFormat },
): Promise<number> {
  switch (options.action) {
    case 'create': {
      if (!options.name) throw new CliError('token create needs a name', EXIT.usage);
      const scopes = options.scopes.length ? options.scopes : ['read'];
      const bad = scopes.filter((s) => s !== 'read' && s !== 'admin');
      if (bad.length) throw new CliError(`unknown scope ${bad.join(', ')} (use read or admin)`, EXIT.usage);
      const { createToken } = await ctx.api.query<{ createToken: { secret: string; token: Record<string, unknown> } }>(CREATE, { name: options.name, scopes, clusters: options.clusters, namespaces: options.namespaces });
      if (options.output !== 'table') ctx.out(renderData(createToken, options.output));
      else ctx.out(`${createToken.secret}\n# token "${options.name}" created; this secret is shown once. Use it as PHASELOG_TOKEN or an Authorization: Bearer header.\n`);
      return 0;
    }
    case 'list': {
      const { tokens } = await ctx.api.query<{ tokens: { name: string; scopes: string[]; clusters: string[]; namespaces: string[]; createdAt: string; lastUsedAt: string | null; revokedAt: string | null }[] }>(LIST);
      if (options.output !== 'table') ctx.out(renderData(tokens, options.output));
      else
        ctx.out(
          renderTable(
            ['NAME', 'SCOPES', 'CLUSTERS', 'NAMESPACES', 'CREATED', 'LAST USED', 'REVOKED'],
            tokens.map((t) => [t.name, t.scopes.join(','), t.clusters.join(',') || '*', t.namespaces.join(',') || '*', formatAgo(t.createdAt, ctx.now()), formatAgo(t.lastUsedAt, ctx.now()), formatAgo(t.revokedAt, ctx.now())]),
          ),
        );
      return 0;
    }
    case 'revoke': {
      if (!options.name) throw new CliError('token revoke needs a name', EXIT.usage);
      const { revokeToken } = await ctx.api.query<{ revokeToken: boolean }>(REVOKE, { name: options.name });
      if (!revokeToken) throw new CliError(`no active token named "${options.name}"`, EXIT.notFound);
      ctx.out(`token "${options.name}" revoked\n`);
      return 0;
    }
    default:
      throw new CliError('use: phaselog token create <name> [--scope read|admin] [--cluster C] [--namespace N] | token list | token revoke <name>', EXIT.usage);
  }
}
