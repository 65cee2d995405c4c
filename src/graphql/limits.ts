/**
 * Query limits, as validation rules so HTTP and WebSocket apply the same ones before anything runs:
 * a maximum depth and a simple cost (every field costs 1, and a field taking `first` multiplies
 * what is below it by its page size, the default when none is given).
 */
import { GraphQLError, Kind } from 'graphql';
import type { ASTVisitor, FieldNode, FragmentDefinitionNode, GraphQLField, GraphQLNamedType, GraphQLSchema, SelectionSetNode, ValidationContext, ValidationRule } from 'graphql';
import { getNamedType, isObjectType, isInterfaceType } from 'graphql';
import { MAX_PAGE_SIZE, MAX_PHASES_PAGE_SIZE } from './cursor.ts';

/** Limits a query must stay within. */
export interface QueryLimits {
  /** Deepest field nesting. @default 12 */
  maxDepth: number;
  /** Largest computed cost. @default 50000 */
  maxCost: number;
}

export const DEFAULT_LIMITS: QueryLimits = { maxDepth: 12, maxCost: 50_000 };

/** A validation error (code GRAPHQL_VALIDATION_FAILED, as Apollo gives every one) naming the limit hit. */
function tooComplex(message: string, limit: 'depth' | 'cost'): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit } });
}

interface Walk {
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  schema: GraphQLSchema;
}

function pageArg(field: FieldNode, def: GraphQLField<unknown, unknown> | undefined, walk: Walk, parent: GraphQLNamedType | undefined): number | undefined {
  // A page size given by a variable the rule cannot see is priced at the field's largest page.
  const argDef = def?.args.find((a) => a.name === 'first');
  if (argDef === undefined) return undefined;
  const node = field.arguments?.find((a) => a.name.value === 'first');
  if (node?.value.kind === Kind.INT) return Number(node.value.value);
  if (node?.value.kind === Kind.VARIABLE) {
    const value = walk.variables[node.value.name.value];
    return typeof value === 'number' ? value : parent === walk.schema.getQueryType() && def?.name === 'phases' ? MAX_PHASES_PAGE_SIZE : MAX_PAGE_SIZE;
  }
  return typeof argDef.defaultValue === 'number' ? argDef.defaultValue : 1;
}

/** Returns [depth, cost] of a selection set on `type`. */
function measure(set: SelectionSetNode, type: GraphQLNamedType | undefined, walk: Walk, seen: Set<string>): [number, number] {
  let depth = 0;
  let cost = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      const def = type && (isObjectType(type) || isInterfaceType(type)) ? type.getFields()[selection.name.value] : undefined;
      let [childDepth, childCost] = [0, 0];
      if (selection.selectionSet) [childDepth, childCost] = measure(selection.selectionSet, def ? getNamedType(def.type) : undefined, walk, seen);
      const multiplier = pageArg(selection, def, walk, type) ?? 1;
      depth = Math.max(depth, 1 + childDepth);
      cost += 1 + multiplier * childCost;
    } else {
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : walk.fragments[selection.name.value];
      if (fragment === undefined) continue;
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        if (seen.has(selection.name.value)) continue;
        seen = new Set(seen).add(selection.name.value);
      }
      const onType = fragment.typeCondition ? (walk.schema.getType(fragment.typeCondition.name.value) ?? undefined) : type;
      const [d, c] = measure(fragment.selectionSet, onType, walk, seen);
      depth = Math.max(depth, d);
      cost += c;
    }
  }
  return [depth, cost];
}

/** A validation rule enforcing `limits` (variables are needed to price `first: $n`). */
export function createLimitsRule(limits: QueryLimits, variables: Record<string, unknown> = {}): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const document = context.getDocument();
    const fragments: Record<string, FragmentDefinitionNode> = {};
    for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments[def.name.value] = def;
    const schema = context.getSchema();
    return {
      OperationDefinition(operation) {
        const root = operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
        const [depth, cost] = measure(operation.selectionSet, root ?? undefined, { fragments, variables, schema }, new Set());
        if (depth > limits.maxDepth) context.reportError(tooComplex(`the query is ${depth} levels deep; the limit is ${limits.maxDepth}`, 'depth'));
        if (cost > limits.maxCost) context.reportError(tooComplex(`the query costs ${cost}; the limit is ${limits.maxCost} (a field with first: N counts what it selects N times)`, 'cost'));
      },
    };
  };
}
