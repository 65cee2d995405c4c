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

export interface ApiClient {
  query<T>(document: string, variables?: Record<string, unknown>): Promise<T>;
  /** Calls `onEvent` for each event until the returned function is called or the server ends it. */
  subscribe<T>(document: string, variables: Record<string, unknown>, onEvent: (data: T) => void, onError: (error: CliError) => void): () => void;
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
        const cause = (error as Error & { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
        const reason = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
        throw new CliError(`cannot reach phaselog at ${options.url} (${reason}); is it running? (set PHASELOG_URL or --url)`, EXIT.server);
      }
      let body: GraphqlResponse<T>;
      try {
        body = (await res.json()) as GraphqlResponse<T>;
      } catch {
        throw new CliError(`${options.url} answered HTTP ${res.status} without a GraphQL response; is that a phaselog server?`, EXIT.server);
      }
      if (body.errors?.length) throw toCliError(body.errors);
      if (!body.data) throw new CliError(`empty answer from ${options.url} (HTTP ${res.status})`, EXIT.server);
      return body.data;
    },
    subscribe(document, variables, onEvent, onError) {
      ws ??= createClient({
        url: options.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: options.token ? { authorization: `Bearer ${options.token}` } : {},
        retryAttempts: 5,
        shouldRetry: () => true,
      });
      return ws.subscribe(
        { query: document, variables },
        {
          next: (value) => {
            if (value.errors?.length) onError(toCliError(value.errors as NonNullable<GraphqlResponse<unknown>['errors']>));
            else if (value.data) onEvent(value.data as Parameters<typeof onEvent>[0]);
          },
          error: (error) => onError(Array.isArray(error) ? toCliError(error) : new CliError(`subscription failed: ${(error as Error).message ?? String(error)}`, EXIT.server)),
          complete: () => {},
        },
      );
    },
    async close() {
      await ws?.dispose();
    },
  };
}
