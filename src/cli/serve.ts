/**
 * `phaselog start|api|worker`: run the process roles until SIGINT/SIGTERM, then shut down in order
 * and exit within 10 s.
 */
import type { Role } from '../config.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { startPhaselog } from '../app.ts';
import { StartupError } from '../runtime/errors.ts';
import { createLogger, resolveLogFormat } from '../runtime/logger.ts';
import { exitWithError } from './errors.ts';

const SHUTDOWN_DEADLINE_MS = 10_000;

/** Runs `role`, or with none the role the configuration names (default `all`). */
export async function serve(role: Role | undefined, overrides: Record<string, unknown>): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env, process.cwd(), { ...(role !== undefined ? { role } : {}), ...overrides });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(
        `phaselog: invalid configuration\n${error.issues.map((i) => `  ${i.key}: ${i.message}`).join('\n')}\n`,
      );
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config.log.level, { format: resolveLogFormat(config.log.format) });
  let running;
  try {
    running = await startPhaselog(config, log);
  } catch (error) {
    if (error instanceof StartupError) exitWithError(error.message, 1);
    log.fatal({ err: error }, 'phaselog failed to start');
    exitWithError(`failed to start: ${(error as Error).message}`, 1);
  }
  log.info({ role: config.role }, 'phaselog started');

  let stoppingSince = 0;
  const stop = (signal: string) => {
    if (stoppingSince) {
      // npm forwards the terminal's Ctrl-C to us, so one keypress can arrive twice: only a signal
      // well after the first means "stop waiting".
      if (Date.now() - stoppingSince < 2000) return;
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    stoppingSince = Date.now();
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown took longer than 10 s; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    running.close().then(
      () => {
        log.info('stopped');
        process.exit(process.exitCode ?? 0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  void running.failed.then((error) => {
    log.fatal({ reason: error.message }, 'phaselog cannot go on; shutting down');
    process.exitCode = 1;
    stop('fatal');
  });
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
