/**
 * Text arguments phaselog cannot store or match are refused at the edge, for every field at once.
 * PostgreSQL's text and jsonb refuse the NUL character (U+0000), so a NUL in a filter, a name or a
 * JSON label reached the database as an error and the client saw INTERNAL_SERVER_ERROR. The check
 * runs on arguments as coerced (literals and variables alike, over HTTP and WebSocket), before the
 * field's resolver or subscribe function.
 */
import {
  defaultFieldResolver,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isIntrospectionType,
  isScalarType,
} from 'graphql';
import type { GraphQLArgument, GraphQLField, GraphQLFieldResolver, GraphQLInputType, GraphQLSchema } from 'graphql';
import { badUserInput } from './errors.ts';

/** Scalars that never carry text. */
const TEXTLESS_SCALARS = new Set(['Int', 'Float', 'Boolean']);

/** Whether a value of `type` may hold a string (a String, ID or custom scalar, or an input object with one). */
function mayHoldText(type: GraphQLInputType, seen = new Set<string>()): boolean {
  const named = getNamedType(type);
  if (isEnumType(named)) return false;
  if (isScalarType(named)) return !TEXTLESS_SCALARS.has(named.name);
  if (!isInputObjectType(named) || seen.has(named.name)) return false;
  seen.add(named.name);
  return Object.values(named.getFields()).some((field) => mayHoldText(field.type, seen));
}

/**
 * The path (`filter.labels.team`) of the first string in `value`, keys included, that holds a NUL;
 * null when none does. Iterative, depth-first in order: a deeply nested value cannot overflow the
 * stack here (JSON scalars also bound their depth, scalars.ts).
 */
export function findNul(value: unknown, path: string): string | null {
  const stack: [unknown, string][] = [[value, path]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, at] = item;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return at;
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${at}[${i}]`]);
    } else if (typeof current === 'object' && current !== null && !(current instanceof Date)) {
      const entries = Object.entries(current);
      // Its keys before its values: a NUL key is named as a key.
      for (const [key] of entries) if (key.includes('\u0000')) return `${at} (a key)`;
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i] as [string, unknown];
        stack.push([inner, `${at}.${key}`]);
      }
    }
  }
  return null;
}

/** Throws BAD_USER_INPUT when an argument of `checked` holds a NUL. */
function refuseNul(field: string, checked: readonly GraphQLArgument[], args: Record<string, unknown>): void {
  for (const arg of checked) {
    const found = findNul(args[arg.name], arg.name);
    if (found !== null)
      throw badUserInput(
        `${field}: argument ${found} holds a NUL character (\\u0000), which phaselog cannot store or match`,
      );
  }
}

/**
 * Puts the NUL check in front of every field that has an argument able to carry text. The schema
 * is changed in place (as root-scopes.ts does), so graphql-js, graphql-jit and graphql-ws all run it.
 */
export function refuseNulArguments(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || !('getFields' in type) || isInputObjectType(type)) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      const checked = field.args.filter((arg) => mayHoldText(arg.type));
      if (checked.length === 0) continue;
      const key = `${type.name}.${field.name}`;
      const wrap =
        (run: GraphQLFieldResolver<unknown, unknown>): GraphQLFieldResolver<unknown, unknown> =>
        (parent, args: Record<string, unknown>, ctx, info) => {
          refuseNul(key, checked, args);
          return run(parent, args, ctx, info);
        };
      if (field.subscribe !== undefined) field.subscribe = wrap(field.subscribe);
      else field.resolve = wrap(field.resolve ?? defaultFieldResolver);
    }
  }
  return schema;
}
