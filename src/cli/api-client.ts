/**
 * The CLI's connection to a phaselog server: queries over HTTP, subscriptions over graphql-ws. The
 * CLI uses the same GraphQL API as any dashboard, so both always see the same thing.
 */
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { CliError, EXIT } from './errors.ts';

export interface ApiClientOptions {
  /** GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql */
  url: string;
  token?: string;
  /** Request timeout. @default 30000 */
  timeoutMs?: number;
}

interface GraphqlResponse<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export interface SubscriptionHandlers<T> {
  onEvent: (data: T) => void;
  onError: (error: CliError) => void;
  /** The cursor (`after:`) to resume from after this event. */
  resumeFrom?: (data: T) => string | undefined;
  /** The connection dropped; retrying. */
  onReconnecting?: () => void;
  /** Connected again after a drop. */
  onReconnected?: () => void;
}

/** Wait before the n-th retry: doubling from half a second, at most 5 s. */
const retryDelay = (retries: number) => Math.min(500 * 2 ** retries, 5000);
/** About five minutes of retries at the capped delay before a watch gives up. */
const RETRY_ATTEMPTS = 64;

export interface ApiClient {
  query<T>(document: string, variables?: Record<string, unknown>): Promise<T>;
  /**
   * Calls `onEvent` for each event until the returned function is called or the server ends it. A
   * lost connection is retried (with backoff, for about five minutes); with `resumeFrom`, each retry
   * asks for the events after the last one received (the subscription's `after:` argument), so none
   * is lost or repeated across a server restart.
   */
  subscribe<T>(document: string, variables: Record<string, unknown>, handlers: SubscriptionHandlers<T>): () => void;
  close(): Promise<void>;
}

/** Map a GraphQL error code to what the CLI user should hear and the exit code. */
function toCliError(errors: NonNullable<GraphqlResponse<unknown>['errors']>): CliError {
  const first = errors[0];
  const code = first?.extensions?.code;
  const message = errors.map((e) => e.message).join('; ');
  switch (code) {
    case 'NOT_FOUND':
      return new CliError(message, EXIT.notFound);
    case 'BAD_USER_INPUT':
    case 'GRAPHQL_VALIDATION_FAILED':
      return new CliError(message, EXIT.usage);
    case 'UNAUTHENTICATED':
      return new CliError(`${message} (set PHASELOG_TOKEN or --token)`, EXIT.auth);
    case 'FORBIDDEN':
      return new CliError(message, EXIT.auth);
    default:
      return new CliError(message, EXIT.server);
  }
}

/** What a closed socket or failed connection says, in a few words. */
function describeClose(error: unknown): string {
  if (error instanceof Error) return error.message;
  const close = error as { code?: number; reason?: string } | undefined;
  if (close && typeof close.code === 'number')
    return `closed with code ${close.code}${close.reason ? ` (${close.reason})` : ''}`;
  return String(error);
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  let ws: Client | undefined;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'apollo-require-preflight': 'true' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  return {
    async query<T>(document: string, variables: Record<string, unknown> = {}): Promise<T> {
      let res: Response;
      try {
        res = await fetch(options.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ query: document, variables }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        });
      } catch (error) {
        const cause = (error as Error & { cause?: { code?: string; message?: string; errors?: { code?: string }[] } })
          .cause;
        const reason = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
        throw new CliError(
          `cannot reach phaselog at ${options.url} (${reason}); is it running? (set PHASELOG_URL or --url)`,
          EXIT.server,
        );
      }
      let body: GraphqlResponse<T>;
      try {
        body = (await res.json()) as GraphqlResponse<T>;
      } catch {
        throw new CliError(
          `${options.url} answered HTTP ${res.status} without a GraphQL response; is that a phaselog server?`,
          EXIT.server,
        );
      }
      if (body.errors?.length) throw toCliError(body.errors);
      if (!body.data) throw new CliError(`empty answer from ${options.url} (HTTP ${res.status})`, EXIT.server);
      return body.data;
    },
    subscribe<T>(document: string, variables: Record<string, unknown>, handlers: SubscriptionHandlers<T>) {
      let dropped = false;
      ws ??= createClient({
        url: options.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: options.token ? { authorization: `Bearer ${options.token}` } : {},
        retryAttempts: RETRY_ATTEMPTS,
        retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, retryDelay(retries))),
        // A server restart closes with 1001 or 1006: retry those and whatever else is not fatal.
        shouldRetry: () => true,
        on: {
          closed: () => {
            if (dropped) return;
            dropped = true;
            handlers.onReconnecting?.();
          },
          connected: (_socket, _payload, wasRetry) => {
            if (!wasRetry) return;
            dropped = false;
            handlers.onReconnected?.();
          },
        },
      });
      // graphql-ws sends this payload again on every retry, serialising it then: updating `after`
      // in place is what makes the retry resume after the last event received.
      const payload = { query: document, variables: { ...variables } };
      let stopped = false;
      const unsubscribe = ws.subscribe<T>(payload, {
        next: (value) => {
          if (value.errors?.length)
            return handlers.onError(toCliError(value.errors as NonNullable<GraphqlResponse<unknown>['errors']>));
          if (!value.data) return;
          const cursor = handlers.resumeFrom?.(value.data);
          if (cursor !== undefined) payload.variables.after = cursor;
          handlers.onEvent(value.data);
        },
        error: (error) =>
          handlers.onError(
            Array.isArray(error)
              ? toCliError(error)
              : new CliError(`lost the connection to ${options.url}: ${describeClose(error)}`, EXIT.server),
          ),
        // graphql-ws also completes the sink when we unsubscribe: only the server ending it is news.
        complete: () => stopped || handlers.onError(new CliError(`${options.url} ended the stream`, EXIT.server)),
      });
      return () => {
        stopped = true;
        unsubscribe();
      };
    },
    async close() {
      await ws?.dispose();
    },
  };
}
