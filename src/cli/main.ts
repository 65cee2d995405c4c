#!/usr/bin/env node
/**
 * The `phaselog` command: parses the command line with the tree in program.ts and runs it. Process
 * roles load the whole server; client commands load only what they use and start fast.
 */
// First: sets NODE_ENV before any module reads it.
import './node-env.ts';
import { CliError, EXIT } from './errors.ts';
import { createCommandContext } from './context.ts';
import type { CommandContext } from './context.ts';
import { buildProgram, runProgram } from './program.ts';
import type { ProgramHooks } from './program.ts';

const write: ProgramHooks['write'] = (stream, text) =>
  void (stream === 'out' ? process.stdout : process.stderr).write(text);

/** Run a client command and exit with its code; an expected failure is one line on stderr. */
async function client(
  flags: { url?: string; token?: string },
  run: (ctx: CommandContext) => Promise<number>,
): Promise<void> {
  let ctx: CommandContext | undefined;
  let code: number;
  try {
    ctx = createCommandContext(flags);
    code = await run(ctx);
  } catch (error) {
    if (!(error instanceof CliError)) {
      write('err', `phaselog: ${(error as Error).message}\n`);
      code = EXIT.server;
    } else {
      write('err', `phaselog: ${error.message}\n`);
      code = error.exitCode;
    }
  } finally {
    await ctx?.api.close();
  }
  // Open sockets (a watch's) must not keep the process alive after the command is done.
  process.exit(code);
}

const hooks: ProgramHooks = {
  client,
  async serve(role, overrides) {
    const { serve } = await import('./serve.ts');
    // `start` runs the configured role (`role`, PHASELOG_ROLE; all by default); `api` and `worker` set it.
    await serve(role === 'start' ? undefined : role, overrides);
  },
  async migrate() {
    const { runMigrate } = await import('./migrate.ts');
    await runMigrate();
  },
  async emulator(args) {
    const { runEmulatorCli } = await import('../emulator/main.ts');
    process.exitCode = await runEmulatorCli(args);
  },
  write,
};

// `phaselog status | head` closes the pipe early: that ends the output, it is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const argv = process.argv.slice(2);
// The emulator parses its own command line (its flags are not phaselog's).
if (argv[0] === 'emulator') await hooks.emulator(argv.slice(1));
else {
  const code = await runProgram(buildProgram(hooks), argv, hooks);
  if (code !== 0) process.exit(code);
}
