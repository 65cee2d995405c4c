#!/usr/bin/env node
/**
 * The `phaselog` command. Process roles (`start`, `api`, `worker`, `migrate`) run phaselog itself;
 * client commands (`status`, `history`, `manifest`, `gate`, `clusters`, `token`) talk to a running
 * server's GraphQL API, so the CLI sees exactly what any other API client sees.
 */
// First: sets NODE_ENV before any module reads it.
import './node-env.ts';
import { parseArgs } from 'node:util';
import { VERSION } from '../runtime/paths.ts';
import { CliError, EXIT, exitWithError } from './errors.ts';
import { createCommandContext } from './context.ts';
import type { CommandContext } from './context.ts';
import { parseOutputFormat } from './format.ts';
import { runStatus } from './commands/status.ts';
import { runGate } from './commands/gate.ts';
import { runHistory } from './commands/history.ts';
import { runManifest } from './commands/manifest.ts';
import { runClusters } from './commands/clusters.ts';
import { runToken } from './commands/token.ts';
import { runReport } from './commands/report.ts';

const USAGE = `phaselog ${VERSION}: flight recorder and live status gateway for Kubernetes deployment phases

Usage: phaselog <command> [options]

Run phaselog:
  start                          the API, the snapshot workers and the schedulers in one process (default)
  api                            only the GraphQL API
  worker                         only the snapshot workers and schedulers
  migrate                        apply database migrations to DATABASE_URL and exit
  emulator [options]             a Kubernetes API emulator (see: phaselog emulator --help)

Ask a running phaselog (PHASELOG_URL, default http://127.0.0.1:4000/graphql; PHASELOG_TOKEN):
  status [phase] [-w]            phases now: NAME CLUSTER STATUS SINCE MESSAGE; --watch streams changes
  history <phase> [--all]        the phase's status intervals; --all: every change of it and its resources
  manifest <phase> [--at T]      what the phase's inventory listed (now, or at time T); --diff: how it changed
  gate <phase> --for 10m         exit 0 if the phase held --status (default Current) for the whole window, else 1
  report --from T [--to T] [--format json|csv|markdown|html] [--out FILE] [--cluster C] [--namespace N] [--phase P]
                                 an audit report: availability, failures, time to recover, manifest changes
  clusters                       clusters: observed, unobserved or retired, and their reachability
  token create <name> [--admin | --scope read|admin] [--cluster C] [--namespace N] | token list | token revoke <name>
                                 without PHASELOG_TOKEN these work on this machine's phaselog database directly
                                 (DATABASE_URL or the running embedded one): that is how the first admin token is made

A phase is cluster/namespace/name, cluster/name, or a name that is unique.
Times: RFC 3339 (2026-11-17T14:00:00Z), a date (2026-11-17), "now", or a duration ago (90m, 7d).

Options:
  -o, --output table|json|yaml   output format of client commands (default table)
  --url <url>                    GraphQL endpoint of the phaselog to ask
  --token <secret>               API token (prefer PHASELOG_TOKEN)
  --host <addr>, --port <n>      where start/api listen (PHASELOG_HOST, PHASELOG_PORT)
  -h, --help, -v, --version

Exit codes: 0 ok, 1 gate not passed, 2 bad usage or input, 3 server unreachable or failing,
4 no such phase/cluster/token, 5 missing or insufficient token.
`;

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  output: { type: 'string', short: 'o' },
  watch: { type: 'boolean', short: 'w' },
  all: { type: 'boolean' },
  at: { type: 'string' },
  diff: { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  status: { type: 'string' },
  for: { type: 'string' },
  scope: { type: 'string', multiple: true },
  admin: { type: 'boolean' },
  cluster: { type: 'string', multiple: true },
  namespace: { type: 'string', multiple: true },
  phase: { type: 'string', multiple: true },
  format: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

async function runClient(command: string, flags: { url?: string; token?: string }, run: (ctx: CommandContext) => Promise<number>): Promise<never> {
  let code: number;
  let ctx: CommandContext;
  try {
    ctx = createCommandContext(flags);
  } catch (error) {
    if (error instanceof CliError) exitWithError(error.message, error.exitCode);
    throw error;
  }
  try {
    code = await run(ctx);
  } catch (error) {
    if (error instanceof CliError) exitWithError(error.message, error.exitCode);
    exitWithError(`${command} failed: ${(error as Error).message}`, EXIT.server);
  } finally {
    await ctx.api.close();
  }
  process.exit(code);
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0] && !argv[0].startsWith('-') ? argv[0] : 'start';
  if (command === 'emulator') {
    const { runEmulatorCli } = await import('../emulator/main.ts');
    process.exitCode = await runEmulatorCli(argv.slice(1));
    return;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    exitWithError(`${(error as Error).message}\n\n${USAGE}`, EXIT.usage);
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (v.version) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const rest = positionals.slice(1);
  const overrides = { 'server.host': v.host, 'server.port': v.port };
  const flags = { ...(v.url ? { url: v.url } : {}), ...(v.token ? { token: v.token } : {}) };
  const output = () => {
    try {
      return parseOutputFormat(v.output);
    } catch (error) {
      exitWithError((error as Error).message, EXIT.usage);
    }
  };
  // The process roles load the whole server; client commands stay light and start fast.
  switch (command) {
    case 'start':
    case 'api':
    case 'worker': {
      const { serve } = await import('./serve.ts');
      // `start` runs the configured role (`role`, PHASELOG_ROLE; all by default); `api` and `worker` set it.
      return serve(command === 'start' ? undefined : command, overrides);
    }
    case 'migrate': {
      const { runMigrate } = await import('./migrate.ts');
      return runMigrate();
    }
    case 'status':
      return runClient(command, flags, (ctx) => runStatus(ctx, { ...(rest[0] ? { phase: rest[0] } : {}), output: output(), watch: v.watch ?? false, ...(v.cluster?.[0] ? { cluster: v.cluster[0] } : {}) }));
    case 'gate':
      return runClient(command, flags, (ctx) => runGate(ctx, { ...(rest[0] ? { phase: rest[0] } : {}), status: v.status ?? 'Current', ...(v.for ? { for: v.for } : {}), output: output() }));
    case 'history':
      return runClient(command, flags, (ctx) => runHistory(ctx, { ...(rest[0] ? { phase: rest[0] } : {}), all: v.all ?? false, ...(v.from ? { from: v.from } : {}), ...(v.to ? { to: v.to } : {}), output: output() }));
    case 'manifest':
      return runClient(command, flags, (ctx) => runManifest(ctx, { ...(rest[0] ? { phase: rest[0] } : {}), ...(v.at ? { at: v.at } : {}), diff: v.diff ?? false, output: output() }));
    case 'report':
      return runClient(command, flags, (ctx) =>
        runReport(ctx, { ...(v.from ? { from: v.from } : {}), ...(v.to ? { to: v.to } : {}), ...(v.format ? { format: v.format } : {}), ...(v.out ? { out: v.out } : {}), clusters: v.cluster ?? [], namespaces: v.namespace ?? [], phases: v.phase ?? [] }),
      );
    case 'clusters':
      return runClient(command, flags, (ctx) => runClusters(ctx, { output: output() }));
    case 'token':
      return runClient(command, flags, (ctx) =>
        runToken(ctx, { ...(rest[0] ? { action: rest[0] } : {}), ...(rest[1] ? { name: rest[1] } : {}), scopes: [...(v.scope ?? []), ...(v.admin ? ['admin'] : [])], clusters: v.cluster ?? [], namespaces: v.namespace ?? [], output: output() }),
      );
    default:
      exitWithError(`unknown command "${command}"\n\n${USAGE}`, EXIT.usage);
  }
}

await main(process.argv.slice(2));
