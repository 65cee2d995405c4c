import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';

/**
 * Fields holding secrets, censored wherever they appear in a log line. `token` is a secret's field:
 * a line about a token names it with `tokenName` (its name is no secret, and an audit line that
 * hides which token was created or revoked says nothing).
 */
export const REDACTED_PATHS: readonly string[] = ['token', '*.token', 'secret', '*.secret', 'password', '*.password', 'authorization', '*.authorization', 'headers.authorization', 'databaseUrl', 'redisUrl'];

/**
 * The root logger: JSON lines, secrets redacted wherever they appear in structured fields.
 * @param destination where lines go @default stdout
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'phaselog' }, redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
