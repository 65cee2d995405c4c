#!/usr/bin/env node
/**
 * The `phaselog` command. Process roles: `start` (API, workers and schedulers in one process),
 * `api`, `worker`; `migrate` applies database migrations and exits.
 */
import { parseArgs } from 'node:util';
import { serve, exitWithError } from './serve.ts';
import { runMigrate } from './migrate.ts';
import { VERSION } from '../runtime/paths.ts';

const USAGE = `phaselog ${VERSION}: flight recorder and live status gateway for Kubernetes deployment phases

Usage: phaselog <command> [options]

Commands:
  start      run the API, the snapshot workers and the schedulers in one process (default)
  api        run only the GraphQL API
  worker     run only the snapshot workers and schedulers
  migrate    apply database migrations and exit

Options (override phaselog.yaml and environment variables):
  --host <addr>     address the API binds to (PHASELOG_HOST, default 127.0.0.1)
  --port <n>        port of the API (PHASELOG_PORT, default 4000)
  -h, --help        show this help
  -v, --version     print the version
`;

async function main(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    exitWithError(`${(error as Error).message}\n\n${USAGE}`, 2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (values.version) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const command = positionals[0] ?? 'start';
  const overrides = { 'server.host': values.host, 'server.port': values.port };
  switch (command) {
    case 'start':
      return serve('all', overrides);
    case 'api':
      return serve('api', overrides);
    case 'worker':
      return serve('worker', overrides);
    case 'migrate':
      return runMigrate();
    default:
      exitWithError(`unknown command "${command}"\n\n${USAGE}`, 2);
  }
}

await main(process.argv.slice(2));
