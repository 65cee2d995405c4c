/** Reading a whole GraphQL connection page by page, so large phases are never cut off at one page. */
import type { ApiClient } from './api-client.ts';

export interface Connection<T> {
  edges: { node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Every node of the connection `pick` finds in each answer, following `endCursor` as `$after`. */
export async function collectPages<T, D = never>(
  api: ApiClient,
  document: string,
  variables: Record<string, unknown>,
  pick: (data: D) => Connection<T> | null | undefined,
): Promise<T[]> {
  const nodes: T[] = [];
  let after: string | null = null;
  do {
    const connection: Connection<T> | null | undefined = pick(await api.query<D>(document, { ...variables, after }));
    if (!connection) break;
    nodes.push(...connection.edges.map((e) => e.node));
    after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;
  } while (after);
  return nodes;
}
