/**
 * The one place where transport and API errors become data. Every read in src/kube returns
 * {@link KubeError}s instead of throwing, so a failing cluster or kind is reported, not fatal
 * (the Backstage kubernetes-backend model).
 */

/** Why a cluster, a kind or a request could not be read. */
export type KubeErrorKind =
  'UNREACHABLE' | 'TIMEOUT' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'KIND_NOT_FOUND' | 'THROTTLED' | 'SERVER_ERROR';

/** A classified failure. Match on `kind`, never on `message`. */
export interface KubeError {
  kind: KubeErrorKind;
  message: string;
  /** From a 429/503 `Retry-After` header (or `details.retryAfterSeconds`), in milliseconds. */
  retryAfterMs?: number;
  /** HTTP status code, when the server answered. */
  statusCode?: number;
}

/** Kinds worth retrying without a configuration change. The only list of its kind. */
export const RETRYABLE_KINDS: readonly KubeErrorKind[] = ['UNREACHABLE', 'TIMEOUT', 'THROTTLED', 'SERVER_ERROR'];

/** Kinds that mean the whole cluster cannot be read, not just one kind. */
export const CLUSTER_LEVEL_KINDS: readonly KubeErrorKind[] = ['UNREACHABLE', 'TIMEOUT', 'UNAUTHORIZED'];

export function isRetryable(error: KubeError): boolean {
  return RETRYABLE_KINDS.includes(error.kind);
}

/** Details a {@link KubeRequestError} may carry. */
export interface KubeRequestErrorDetails {
  statusCode?: number;
  /** Node's socket error code, e.g. `ECONNREFUSED`. */
  code?: string;
  /** The `reason` of a Kubernetes `Status` body, e.g. `Forbidden`, `Expired`. */
  reason?: string;
  retryAfterMs?: number;
  timedOut?: boolean;
}

/** What the HTTP layer throws internally; {@link classifyKubeError} turns it into data. */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';
  readonly details: KubeRequestErrorDetails;

  constructor(message: string, details: KubeRequestErrorDetails = {}) {
    super(message);
    this.details = details;
  }
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'ECONNABORTED',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
  'ETIMEDOUT',
]);

/**
 * Classifies anything thrown while talking to a cluster: our own {@link KubeRequestError}s,
 * Node socket errors, aborts, and client-node's `ApiException` / watch errors (which carry a
 * numeric `code` or `statusCode`).
 */
export function classifyKubeError(err: unknown): KubeError {
  const details = readDetails(err);
  const message = err instanceof Error ? err.message : String(err);
  const base = details.retryAfterMs !== undefined ? { retryAfterMs: details.retryAfterMs } : {};
  const status = details.statusCode;
  if (status !== undefined) {
    const withStatus = { ...base, statusCode: status, message: `HTTP ${status}: ${message}` };
    if (status === 401) return { kind: 'UNAUTHORIZED', ...withStatus };
    if (status === 403) return { kind: 'FORBIDDEN', ...withStatus };
    if (status === 404) return { kind: 'KIND_NOT_FOUND', ...withStatus };
    if (status === 429) return { kind: 'THROTTLED', ...withStatus };
    if (status === 504 || details.reason === 'Timeout') return { kind: 'TIMEOUT', ...withStatus };
    return { kind: 'SERVER_ERROR', ...withStatus };
  }
  if (details.timedOut === true || isAbortError(err)) return { kind: 'TIMEOUT', message, ...base };
  if (details.code !== undefined && UNREACHABLE_CODES.has(details.code)) {
    return { kind: 'UNREACHABLE', message: `${details.code}: ${message}` };
  }
  return { kind: 'SERVER_ERROR', message };
}

function readDetails(err: unknown): KubeRequestErrorDetails {
  if (err instanceof KubeRequestError) return err.details;
  if (typeof err !== 'object' || err === null) return {};
  const record = err as Record<string, unknown>;
  const details: KubeRequestErrorDetails = {};
  const status = typeof record.statusCode === 'number' ? record.statusCode : record.code;
  if (typeof status === 'number' && status >= 100 && status < 600) details.statusCode = status;
  const code = typeof record.code === 'string' ? record.code : readCauseCode(record.cause);
  if (code !== undefined) details.code = code;
  return details;
}

function readCauseCode(cause: unknown): string | undefined {
  if (typeof cause !== 'object' || cause === null) return undefined;
  const code = (cause as Record<string, unknown>).code;
  return typeof code === 'string' ? code : undefined;
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/** Reads `Retry-After` (seconds, or an HTTP date) as milliseconds. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
