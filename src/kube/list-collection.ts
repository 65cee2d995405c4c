/**
 * One paginated LIST (`limit` + `continue`), as data. Honours `Retry-After` on 429 when the wait
 * is short, and restarts from the first page once when a continue token has expired (410 Gone).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { classifyKubeError, KubeRequestError, type KubeError } from './errors.ts';
import type { KubeObject } from './slim.ts';
import type { KubeTransport, Query } from './transport.ts';

/** Options of {@link listCollection}. */
export interface ListOptions {
  /** Objects per page. @default 500 */
  pageSize?: number;
  labelSelector?: string;
  /** Retries of a throttled (429) page whose Retry-After is at most `maxRetryAfterMs`. @default 2 */
  maxThrottleRetries?: number;
  /** Longest Retry-After honoured in-line; longer waits are returned as THROTTLED data. @default 5000 */
  maxRetryAfterMs?: number;
  /** Per-request timeout. */
  timeoutMs?: number;
  /** Set on every item, because a LIST's items omit them for built-in kinds. */
  apiVersion?: string;
  kind?: string;
}

/** What a LIST gave: the collection's resourceVersion, or the error that stopped it. */
export type ListOutcome =
  { ok: true; resourceVersion: string; requests: number } | { ok: false; error: KubeError; requests: number };

/**
 * Lists a collection page by page, handing each item to `visit`. When the server expires the
 * continue token mid-way, `restart` is called and the listing starts over once.
 */
export async function listCollection(
  transport: KubeTransport,
  path: string,
  options: ListOptions,
  visit: (item: KubeObject) => void,
  restart: () => void = () => undefined,
): Promise<ListOutcome> {
  let requests = 0;
  let restarted = false;
  let token: string | undefined;
  let throttleRetries = 0;
  for (;;) {
    const query: Query = { limit: options.pageSize ?? 500, continue: token, labelSelector: options.labelSelector };
    let page: unknown;
    try {
      requests += 1;
      page = await transport.getJson(
        path,
        query,
        options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {},
      );
    } catch (err) {
      const error = classifyKubeError(err);
      if (isGone(err) && token !== undefined && !restarted) {
        restarted = true;
        token = undefined;
        restart();
        continue;
      }
      if (error.kind === 'THROTTLED' && throttleRetries < (options.maxThrottleRetries ?? 2)) {
        const wait = error.retryAfterMs ?? 1000;
        if (wait <= (options.maxRetryAfterMs ?? 5000)) {
          throttleRetries += 1;
          await delay(wait);
          continue;
        }
      }
      return { ok: false, error, requests };
    }
    const body = (page ?? {}) as { items?: unknown; metadata?: { continue?: unknown; resourceVersion?: unknown } };
    for (const item of Array.isArray(body.items) ? (body.items as unknown[]) : []) {
      if (typeof item !== 'object' || item === null) continue;
      const obj = item as KubeObject;
      if (options.apiVersion !== undefined) obj.apiVersion ??= options.apiVersion;
      if (options.kind !== undefined) obj.kind ??= options.kind;
      visit(obj);
    }
    const next = body.metadata?.continue;
    if (typeof next === 'string' && next !== '') {
      token = next;
      continue;
    }
    const rv = body.metadata?.resourceVersion;
    return { ok: true, resourceVersion: typeof rv === 'string' ? rv : '', requests };
  }
}

function isGone(err: unknown): boolean {
  return err instanceof KubeRequestError && err.details.statusCode === 410;
}
