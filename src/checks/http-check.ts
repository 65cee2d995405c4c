/**
 * One `http` check request and what it says as a condition. A condition's message is stored, served
 * to every reader and sent to receivers, so it is built from known parts only: the method, the
 * URL's scheme, host and path (never its userinfo or query), the status code, an error code or a
 * reason word; never another library's error text, which may quote a header value or the whole URL.
 * Never the latency either: a message that changed on every run would make every run write.
 */
import { JSONPath } from 'jsonpath-plus';
import type { ConditionStatus } from '../history/condition-changes.ts';
import type { HttpCheckConfig } from './config.ts';

/** A condition's status, reason and message, before it is tied to a phase. */
export interface CheckVerdict {
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** Options of one request. */
export interface HttpRequestOptions {
  url: string;
  timeoutMs: number;
  /** Header values read from files or the environment; never logged. */
  headers: Record<string, string>;
}

/** The URL as messages show it: no query, no fragment, no credentials. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Reads at most `maxBytes` of a response body and cancels the rest: a check endpoint that streams
 * without end must not fill the worker's memory.
 */
export async function readCappedBody(response: Response, maxBytes: number): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const all = Buffer.concat(chunks);
  return all.subarray(0, Math.min(all.byteLength, maxBytes)).toString('utf8');
}

/**
 * Why a request cannot be sent as configured, in phaselog's words, or undefined when it can: URL
 * credentials (fetch refuses them, quoting the URL) and header values that are not valid HTTP
 * header values (fetch refuses them, quoting the value). Names the header, never its value.
 */
export function requestProblem(url: string, headers: Record<string, string>): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the URL is not valid';
  }
  if (parsed.username !== '' || parsed.password !== '')
    return 'the URL carries credentials (user:password@), which are never sent';
  for (const [name, value] of Object.entries(headers)) {
    try {
      new Headers([[name, value]]);
    } catch {
      return `the value of header ${name} is not a valid HTTP header value`;
    }
  }
  return undefined;
}

/** A failed fetch as a verdict's reason and the words after `<method> <url>`. */
export function requestFailure(error: unknown, timeoutMs: number): { reason: string; words: string } {
  const name = (error as { name?: unknown }).name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return { reason: 'Timeout', words: `did not answer within ${timeoutMs}ms` };
  return { reason: 'ConnectionFailed', words: `failed: ${errorCodeOf(error)}` };
}

/**
 * The network error's code (ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET, ...) when it has the shape of
 * one, else `network error`: a code is a constant of Node or undici, a message may quote anything.
 */
function errorCodeOf(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } }).cause?.code ?? (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,47}$/.test(code) ? code : 'network error';
}

/** Runs the check's request once; never throws (failures are Unknown verdicts). */
export async function runHttpCheck(
  check: HttpCheckConfig,
  options: HttpRequestOptions,
  now: () => number = performance.now.bind(performance),
): Promise<CheckVerdict> {
  const shown = `${check.method} ${displayUrl(options.url)}`;
  const problem = requestProblem(options.url, options.headers);
  if (problem !== undefined) return { status: 'Unknown', reason: 'InvalidRequest', message: `${shown}: ${problem}` };
  const started = now();
  let response: Response;
  let body = '';
  try {
    response = await fetch(options.url, {
      method: check.method,
      headers: options.headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (check.method === 'GET' && (check.bodyContains !== undefined || check.jsonPath !== undefined))
      body = await readCappedBody(response, check.maxBodyBytes);
    else await response.body?.cancel().catch(() => undefined);
  } catch (error) {
    const { reason, words } = requestFailure(error, options.timeoutMs);
    return { status: 'Unknown', reason, message: `${shown} ${words}` };
  }
  const latency = now() - started;
  if (!check.expectStatus.includes(response.status)) {
    return {
      status: 'False',
      reason: 'UnexpectedStatus',
      message: `${shown} answered ${response.status}, expected ${check.expectStatus.join(' or ')}`,
    };
  }
  if (check.maxLatency !== undefined && latency > check.maxLatency) {
    return {
      status: 'False',
      reason: 'SlowResponse',
      message: `${shown} answered ${response.status} slower than ${check.maxLatency}ms`,
    };
  }
  if (check.bodyContains !== undefined && !body.includes(check.bodyContains)) {
    return {
      status: 'False',
      reason: 'BodyMismatch',
      message: `${shown} answered ${response.status} without ${JSON.stringify(check.bodyContains)} in its body`,
    };
  }
  if (check.jsonPath !== undefined) {
    let matches: unknown[];
    try {
      matches = JSONPath({
        path: check.jsonPath,
        json: JSON.parse(body) as object,
        wrap: true,
        eval: false,
      }) as unknown[];
    } catch {
      return {
        status: 'Unknown',
        reason: 'InvalidBody',
        message: `${shown} answered ${response.status} with a body that is not JSON (or was cut at ${check.maxBodyBytes} bytes)`,
      };
    }
    const [first] = matches;
    if (matches.length === 0)
      return { status: 'False', reason: 'JsonPathMismatch', message: `${shown}: ${check.jsonPath} matches nothing` };
    if (check.equals !== undefined && first !== check.equals) {
      return {
        status: 'False',
        reason: 'JsonPathMismatch',
        message: `${shown}: ${check.jsonPath} is ${shortJson(first)}, expected ${JSON.stringify(check.equals)}`,
      };
    }
  }
  return { status: 'True', reason: 'Succeeded', message: `${shown} answered ${response.status}` };
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
