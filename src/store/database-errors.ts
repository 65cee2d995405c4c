/**
 * Whether an error means the database could not be used at all (down, unreachable, gone, out of
 * connections) rather than a statement that failed. The API answers those as SERVICE_UNAVAILABLE, a
 * condition a client may retry, instead of an internal error. Prisma wraps the driver's failure in
 * a P1xxx code (P2024: no pooled connection in time); the read side's prepared statements
 * (read-sql.ts) get `pg`'s own errors, with Node's socket codes or a SQLSTATE.
 */

/** Prisma's codes for a database it cannot reach, log in to, or find. */
const PRISMA_UNAVAILABLE = new Set(['P1000', 'P1001', 'P1002', 'P1003', 'P1008', 'P1011', 'P1017', 'P2024']);
/** Node's socket errors on connecting. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);
/** SQLSTATEs of a server shutting down, not accepting connections, or without the database. */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '3D000', '53300', '28P01', '28000']);

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if ((current as { name?: unknown }).name === 'PrismaClientKnownRequestError' || /^P\d{4}$/.test(code)) {
        if (PRISMA_UNAVAILABLE.has(code)) return true;
      } else if (SOCKET_CODES.has(code) || SQLSTATES.has(code) || code.startsWith('08')) {
        return true;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
