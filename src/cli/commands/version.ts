/** `phaselog version`: this CLI's version and, unless `--client`, the server's (like `kubectl version`). */
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { isDataFormat, renderData } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { VERSION } from '../../runtime/paths.ts';

const ABOUT = '{ about { version role startedAt } }';

export async function runVersion(
  ctx: CommandContext,
  options: { clientOnly: boolean; output: OutputFormat },
): Promise<number> {
  const client = { version: VERSION, node: process.version };
  let server: { version: string; role: string; startedAt: string } | undefined;
  let unreachable: CliError | undefined;
  if (!options.clientOnly) {
    try {
      server = (await ctx.api.query<{ about: { version: string; role: string; startedAt: string } }>(ABOUT)).about;
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      unreachable = error;
    }
  }
  if (isDataFormat(options.output)) ctx.out(renderData({ client, ...(server ? { server } : {}) }, options.output));
  else {
    ctx.out(`Client Version: ${client.version} (Node ${client.node})\n`);
    if (server) ctx.out(`Server Version: ${server.version} (role ${server.role}, up since ${server.startedAt})\n`);
  }
  // Like kubectl: the client's version is printed either way, and an unreachable server is an error.
  if (unreachable) {
    ctx.err(`phaselog: ${unreachable.message}\n`);
    return unreachable.exitCode === EXIT.ok ? EXIT.server : unreachable.exitCode;
  }
  return EXIT.ok;
}
