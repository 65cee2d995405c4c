import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import pinoPretty from 'pino-pretty';

/**
 * Fields holding secrets, censored wherever they appear in a log line. `token` is a secret's field:
 * a line about a token names it with `tokenName` (its name is no secret, and an audit line that
 * hides which token was created or revoked says nothing).
 */
export const REDACTED_PATHS: readonly string[] = [
  'token',
  '*.token',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'databaseUrl',
  'redisUrl',
];

/** How log lines are written: one JSON object per line (for machines), or pino-pretty's text (for people). */
export type LogFormat = 'json' | 'pretty';

/** The `log.format` setting: `auto` is pretty on a terminal and JSON anywhere else. */
export type LogFormatSetting = LogFormat | 'auto';

/**
 * The format `setting` means for output going to `stream`: `auto` picks pretty only when a person
 * is watching (a TTY), so pipes, files, containers and log collectors always get JSON.
 */
export function resolveLogFormat(setting: LogFormatSetting, stream: { isTTY?: boolean } = process.stdout): LogFormat {
  if (setting !== 'auto') return setting;
  return stream.isTTY === true ? 'pretty' : 'json';
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'json' */
  format?: LogFormat;
  /** Where lines go. @default stdout */
  destination?: DestinationStream;
  /** Colours in the pretty format. @default whether stdout supports them (a TTY, NO_COLOR unset) when writing to stdout, else false */
  colorize?: boolean;
}

/**
 * The root logger, secrets redacted wherever they appear in structured fields. Redaction happens
 * in pino before a line is serialized, so it holds for both formats.
 */
export function createLogger(level: string, options: LoggerOptions = {}): Logger {
  const pinoOptions = {
    level,
    base: { service: 'phaselog' },
    redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
  };
  if ((options.format ?? 'json') === 'json')
    return options.destination === undefined ? pino(pinoOptions) : pino(pinoOptions, options.destination);
  const pretty = pinoPretty({
    destination: options.destination ?? 1,
    // Synchronous like pino's own stdout, so the last lines before process.exit are not lost.
    sync: true,
    ...(options.colorize !== undefined
      ? { colorize: options.colorize }
      : options.destination !== undefined
        ? { colorize: false }
        : {}),
    translateTime: 'SYS:HH:MM:ss.l',
    // One line per event, its fields after the message: a terminal that follows a running service stays scannable.
    singleLine: true,
    ignore: 'pid,hostname,service,part',
    // The component a child logger names, in front of the message rather than on a line of its own.
    messageFormat: '{if part}[{part}] {end}{msg}',
  });
  return pino(pinoOptions, pretty);
}
