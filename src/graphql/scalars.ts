import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import type { ValueNode } from 'graphql';
import type { Scalars } from '../generated/graphql.ts';
import { formatDuration, parseDuration } from '../duration.ts';

/** RFC 3339 date-time: date, `T`, time with optional fraction, and `Z` or a numeric offset. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?$/;

function badDate(value: unknown, why: string): GraphQLError {
  return new GraphQLError(
    `DateTime must be an RFC 3339 timestamp such as 2026-11-22T03:04:05Z (${why}), got ${JSON.stringify(value)}`,
    {
      extensions: { code: 'BAD_USER_INPUT' },
    },
  );
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * An RFC 3339 timestamp, checked field by field and built from its fields: `Date` alone rolls
 * 2026-02-31 over to March 3 and reads a timestamp without an offset as the server's local time,
 * so both are refused here. Fractions past milliseconds are cut (the API keeps milliseconds).
 */
function parseDate(value: unknown): Date {
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  if (match === null) throw badDate(value, 'date, "T" and time');
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = match[7] ?? '';
  const zone = match[8];
  if (zone === undefined) throw badDate(value, 'it needs Z or an offset such as +02:00');
  const days = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
  if (days === undefined || day < 1 || day > days) throw badDate(value, 'no such date');
  if (hour > 23 || minute > 59 || second > 59) throw badDate(value, 'no such time of day');
  const offsetHours = zone.length === 1 ? 0 : Number(zone.slice(1, 3));
  const offsetMinutes = zone.length === 1 ? 0 : Number(zone.slice(4, 6));
  if (offsetHours > 23 || offsetMinutes > 59) throw badDate(value, 'no such offset');
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number(`${fraction.slice(1)}000`.slice(0, 3)));
  const sign = zone.startsWith('-') ? -1 : 1;
  return new Date(date.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000);
}

// The internal types below are the ones codegen.ts maps each scalar to, so the two cannot drift apart.

// The same instants are answered over and over (interval edges, since): their text is kept, up to a
// bound, keyed by the instant (a pure function of it).
const isoTexts = new Map<number, string>();
const MAX_ISO_TEXTS = 100_000;

function toIso(date: Date): string {
  const ms = date.getTime();
  let text = isoTexts.get(ms);
  if (text === undefined) {
    text = date.toISOString();
    if (isoTexts.size >= MAX_ISO_TEXTS) isoTexts.clear();
    isoTexts.set(ms, text);
  }
  return text;
}

/** RFC 3339 timestamps in UTC with milliseconds. */
export const DateTimeScalar = new GraphQLScalarType<Scalars['DateTime']['input'], string>({
  name: 'DateTime',
  description: 'An RFC 3339 timestamp with milliseconds, always in UTC (e.g. 2026-11-22T03:04:05.000Z).',
  serialize: (value) => toIso(value instanceof Date ? value : parseDate(value)),
  parseValue: parseDate,
  parseLiteral: (ast) => parseDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

function literalToJson(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literalToJson);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literalToJson(f.value)]));
    default:
      throw new GraphQLError('variables are not allowed inside a JSON literal', {
        extensions: { code: 'BAD_USER_INPUT' },
      });
  }
}

/**
 * Deepest nesting of arrays and objects a JSON input may have. A variable is parsed by JSON.parse
 * (which does not recurse) and could nest 100,000 levels in the 1 MiB body; everything that walks
 * it afterwards (the NUL check, label matching, JSON.stringify) recurses and would overflow the
 * stack. No JSON argument of this API needs more than a few levels.
 */
export const MAX_JSON_INPUT_DEPTH = 64;

/** `value` when it nests at most {@link MAX_JSON_INPUT_DEPTH} levels; BAD_USER_INPUT otherwise. Iterative. */
export function boundJsonDepth(value: unknown): unknown {
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, depth] = item;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= MAX_JSON_INPUT_DEPTH)
      throw new GraphQLError(`a JSON value may not be nested deeper than ${MAX_JSON_INPUT_DEPTH} levels`, {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    for (const inner of Array.isArray(current) ? current : Object.values(current)) stack.push([inner, depth + 1]);
  }
  return value;
}

/** Any JSON value. */
export const JsonScalar = new GraphQLScalarType<Scalars['JSON']['input'], unknown>({
  name: 'JSON',
  description: 'A JSON value (labels, conditions, raw Kubernetes objects).',
  serialize: (value) => value,
  parseValue: boundJsonDepth,
  // A literal's depth is bounded by api.maxTokens already; the same rule keeps both paths alike.
  parseLiteral: (ast) => boundJsonDepth(literalToJson(ast)),
});

function parseDurationValue(value: unknown): number {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) {
    throw new GraphQLError(`Duration must look like 30s, 5m, 1h30m or 7d, got ${JSON.stringify(value)}`, {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  return ms;
}

/** Durations: `30s`, `5m`, `1h30m`, `7d` (or a number of milliseconds) in; the same short form out. */
export const DurationScalar = new GraphQLScalarType<Scalars['Duration']['input'], string>({
  name: 'Duration',
  description: 'A duration such as 30s, 5m, 1h30m or 7d (a bare number is milliseconds); returned in the same form.',
  serialize: (value) => formatDuration(parseDurationValue(value)),
  parseValue: parseDurationValue,
  parseLiteral: (ast) =>
    parseDurationValue(ast.kind === Kind.STRING ? ast.value : ast.kind === Kind.INT ? Number(ast.value) : undefined),
});
