/**
 * Opaque page cursors: base64url of a small JSON sort key. A cursor that does not decode is a
 * BAD_USER_INPUT, never an internal error.
 */
import { badUserInput } from './errors.ts';

/** Largest page any list returns. */
export const MAX_PAGE_SIZE = 100;

export function encodeCursor(key: unknown): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

/** Decodes a cursor and checks its shape with `guard`. */
export function decodeCursor<T>(cursor: string, guard: (value: unknown) => value is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badUserInput('the cursor is not one this API gave out');
  }
  if (!guard(value)) throw badUserInput('the cursor is not one this API gave out');
  return value;
}

/** Checks a page size: 1..100. */
export function pageSize(first: number | null | undefined, fallback: number): number {
  const size = first ?? fallback;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) throw badUserInput(`first must be between 1 and ${MAX_PAGE_SIZE}, got ${size}`);
  return size;
}

/** A change-log cursor: a decimal seq (as the API shows it). */
export function parseSeq(after: string | null | undefined): bigint | undefined {
  if (after === null || after === undefined) return undefined;
  if (!/^\d{1,19}$/.test(after)) throw badUserInput(`after must be a seq (a decimal number), got ${JSON.stringify(after)}`);
  return BigInt(after);
}

/** A GraphQL connection from a page of items. */
export function toConnection<T>(page: { items: T[]; hasMore: boolean }, cursorOf: (item: T) => string) {
  const edges = page.items.map((node) => ({ cursor: cursorOf(node), node }));
  return { edges, pageInfo: { hasNextPage: page.hasMore, endCursor: edges.at(-1)?.cursor ?? null } };
}
