import { pino } from 'pino';
import type { Logger } from 'pino';

/** The root logger: JSON lines on stdout, secrets redacted wherever they appear in structured fields. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'phaselog' },
    redact: {
      paths: ['token', '*.token', 'password', '*.password', 'authorization', '*.authorization', 'headers.authorization', 'databaseUrl', 'redisUrl'],
      censor: '[redacted]',
    },
  });
}
