/**
 * The UI's one way to the server: the same GraphQL endpoint the CLI uses, over fetch. The token a
 * person signs in with lives in session storage (gone with the tab) and goes in the Authorization
 * header, exactly as `phaselog --token` sends it.
 */
import { useCallback, useEffect, useRef, useState } from 'react';

const TOKEN_KEY = 'phaselog.token';
export const GRAPHQL_PATH = '/graphql';

export function readToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function saveToken(token: string | undefined): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** A GraphQL error answer, with its `extensions.code` (UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, ...). */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

interface GraphqlAnswer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const token = readToken();
  const response = await fetch(GRAPHQL_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  let answer: GraphqlAnswer<T>;
  try {
    answer = (await response.json()) as GraphqlAnswer<T>;
  } catch {
    throw new ApiError(
      `the server answered HTTP ${response.status} without GraphQL`,
      response.status === 401 ? 'UNAUTHENTICATED' : undefined,
    );
  }
  const first = answer.errors?.[0];
  if (first)
    throw new ApiError(
      first.message,
      first.extensions?.code ?? (response.status === 401 ? 'UNAUTHENTICATED' : undefined),
    );
  if (answer.data == null) throw new ApiError(`the server answered HTTP ${response.status} with no data`, undefined);
  return answer.data;
}

export interface QueryState<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  /** Ask again (keeps showing the old data meanwhile). */
  reload: () => void;
}

/** Runs `query` whenever its variables change; an answer to stale variables is dropped. */
export function useQuery<T>(
  query: string,
  variables: Record<string, unknown>,
  options: { skip?: boolean } = {},
): QueryState<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: !options.skip });
  const [tick, setTick] = useState(0);
  const key = JSON.stringify(variables);
  const latest = useRef(0);
  useEffect(() => {
    if (options.skip) return;
    const id = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    gql<T>(query, JSON.parse(key) as Record<string, unknown>).then(
      (data) => id === latest.current && setState({ data, loading: false }),
      (error: unknown) =>
        id === latest.current &&
        setState((s) => ({
          ...s,
          error: error instanceof ApiError ? error : new ApiError(String(error), undefined),
          loading: false,
        })),
    );
  }, [query, key, tick, options.skip]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
