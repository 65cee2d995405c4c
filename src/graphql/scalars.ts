import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import type { ValueNode } from 'graphql';
import type { Scalars } from '../generated/graphql.ts';
import { formatDuration, parseDuration } from '../duration.ts';

function parseDate(value: unknown): Date {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new GraphQLError(`DateTime must be an RFC 3339 timestamp such as 2026-11-22T03:04:05Z, got ${JSON.stringify(value)}`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
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
      throw new GraphQLError('variables are not allowed inside a JSON literal', { extensions: { code: 'BAD_USER_INPUT' } });
  }
}

/** Any JSON value. */
export const JsonScalar = new GraphQLScalarType<Scalars['JSON']['input'], unknown>({
  name: 'JSON',
  description: 'A JSON value (labels, conditions, raw Kubernetes objects).',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literalToJson,
});

function parseDurationValue(value: unknown): number {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) {
    throw new GraphQLError(`Duration must look like 30s, 5m, 1h30m or 7d, got ${JSON.stringify(value)}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return ms;
}

/** Durations: `30s`, `5m`, `1h30m`, `7d` (or a number of milliseconds) in; the same short form out. */
export const DurationScalar = new GraphQLScalarType<Scalars['Duration']['input'], string>({
  name: 'Duration',
  description: 'A duration such as 30s, 5m, 1h30m or 7d (a bare number is milliseconds); returned in the same form.',
  serialize: (value) => formatDuration(parseDurationValue(value)),
  parseValue: parseDurationValue,
  parseLiteral: (ast) => parseDurationValue(ast.kind === Kind.STRING ? ast.value : ast.kind === Kind.INT ? Number(ast.value) : undefined),
});
