/**
 * Opaque page cursors: base64url of a small JSON sort key. A cursor that does not decode, or whose
 * values the database could not take (an id past PostgreSQL's integer, a NUL in a name, an instant
 * outside the years 0-9999), is a BAD_USER_INPUT, never an internal error.
 */
import { badUserInput } from './errors.ts';
import { findNul } from './input-guard.ts';

/** Largest PostgreSQL `integer` (ids of phases, intervals and reports). */
const MAX_INT4 = 2_147_483_647;
/** Largest PostgreSQL `bigint` (the change log's seq). */
const MAX_INT8 = 9_223_372_036_854_775_807n;

/** Whether a cursor value is a row id the database can hold: a whole number 1..2^31-1. */
export function isRowId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_INT4;
}

/** Like {@link isRowId}, for an id written as decimal text. */
export function isRowIdText(value: unknown): value is string {
  return typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value) && Number(value) <= MAX_INT4;
}

/** Whether a cursor value is an instant as this API writes one (ISO 8601 in UTC, years 0-9999). */
export function isCursorInstant(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^\d{4}-/.test(value) &&
    !Number.isNaN(Date.parse(value)) &&
    new Date(value).toISOString() === value
  );
}

/** Largest page a list returns, except {@link MAX_PHASES_PAGE_SIZE}. */
export const MAX_PAGE_SIZE = 100;

/**
 * Largest page of `phases`: a dashboard lists a whole fleet's phases in one request. Each phase is a
 * few fields, so a full page with summaries and worst resources stays well inside the default query
 * cost limit, while asking a connection inside each phase multiplies past it.
 */
export const MAX_PHASES_PAGE_SIZE = 1000;

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
  if (findNul(value, 'cursor') !== null || !guard(value)) throw badUserInput('the cursor is not one this API gave out');
  return value;
}

/** What is wrong with a page size, or undefined when it is one of 1..max. */
export function pageSizeProblem(size: number, max: number): string | undefined {
  return Number.isInteger(size) && size >= 1 && size <= max
    ? undefined
    : `first must be between 1 and ${max}, got ${size}`;
}

/** Checks a page size: 1..max (100 unless said). */
export function pageSize(first: number | null | undefined, fallback: number, max = MAX_PAGE_SIZE): number {
  const size = first ?? fallback;
  const problem = pageSizeProblem(size, max);
  if (problem !== undefined) throw badUserInput(problem);
  return size;
}

/** A change-log cursor: a decimal seq (as the API shows it). */
export function parseSeq(after: string | null | undefined): bigint | undefined {
  if (after === null || after === undefined) return undefined;
  if (!/^\d{1,19}$/.test(after) || BigInt(after) > MAX_INT8)
    throw badUserInput(`after must be a seq (a decimal number up to ${MAX_INT8}), got ${JSON.stringify(after)}`);
  return BigInt(after);
}

/** An edge whose cursor is encoded only when a query selects it (most pages ask for nodes only). */
class Edge<T> {
  readonly node: T;
  readonly #cursorOf: (item: T) => string;
  constructor(node: T, cursorOf: (item: T) => string) {
    this.node = node;
    this.#cursorOf = cursorOf;
  }
  get cursor(): string {
    return this.#cursorOf(this.node);
  }
}

/** A GraphQL connection from a page of items; cursors are encoded when read. */
export function toConnection<T>(page: { items: T[]; hasMore: boolean }, cursorOf: (item: T) => string) {
  const edges = page.items.map((node) => new Edge(node, cursorOf));
  const last = page.items.at(-1);
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasMore,
      get endCursor() {
        return last === undefined ? null : cursorOf(last);
      },
    },
  };
}
