/**
 * One `http` check request and what it says as a condition. The condition's message names the
 * URL without its query (which may carry a key) and never the latency: a message that changed on
 * every run would make every run write.
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

/** Runs the check's request once; never throws (failures are Unknown verdicts). */
export async function runHttpCheck(
  check: HttpCheckConfig,
  options: HttpRequestOptions,
  now: () => number = performance.now.bind(performance),
): Promise<CheckVerdict> {
  const shown = `${check.method} ${displayUrl(options.url)}`;
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
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return { status: 'Unknown', reason: 'Timeout', message: `${shown} did not answer within ${options.timeoutMs}ms` };
    return { status: 'Unknown', reason: 'ConnectionFailed', message: `${shown} failed: ${causeOf(error)}` };
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

/** The network error's code (ECONNREFUSED, ENOTFOUND, ...) rather than fetch's "fetch failed". */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return (error as Error).message;
}
