/**
 * Query limits, the same over HTTP (Apollo) and WebSocket (graphql-ws), all applied before any
 * resolver runs:
 * - while parsing: the document's length and its number of lexical tokens (graphql-js' own parse
 *   options; the parser stops at the limit, so a huge document costs no more than one at the limit);
 * - as validation rules: depth, aliases and directives (graphql-armor's rules, which measure each
 *   fragment once), then page sizes written in the document and cost (query-cost.ts);
 * - before execution: page sizes given by variables (a validated document is cached by its text,
 *   so validation rules never see variables).
 */
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { GraphQLError, Kind, TypeInfo, parse, specifiedRules, validate, visit, visitWithTypeInfo } from 'graphql';
import type {
  DocumentNode,
  ExecutionArgs,
  GraphQLSchema,
  ParseOptions,
  ValidationContext,
  ValidationRule,
} from 'graphql';
import { pageSizeProblem } from './cursor.ts';
import { createCostRule, limitError, maxPageSizeOf, pageSizeError } from './query-cost.ts';

/** Limits a query must stay within. */
export interface QueryLimits {
  /** Deepest field nesting (fragments add no level; `__schema` introspection is not counted). @default 12 */
  maxDepth: number;
  /** Largest computed cost (query-cost.ts). @default 50000 */
  maxCost: number;
  /** Most aliases in an operation, counted as the operation expands its fragments (`__typename` included). @default 30 */
  maxAliases: number;
  /** Most lexical tokens in a document (the standard introspection query has about 190). @default 1000 */
  maxTokens: number;
  /** Most directives in an operation, counted as it expands its fragments. @default 50 */
  maxDirectives: number;
  /** Longest document, in UTF-16 code units (the request body is capped apart from this). @default 65536 */
  maxLength: number;
}

export const DEFAULT_LIMITS: Readonly<QueryLimits> = {
  maxDepth: 12,
  maxCost: 50_000,
  maxAliases: 30,
  maxTokens: 1_000,
  maxDirectives: 50,
  maxLength: 64 * 1024,
};

/** graphql-js' parse options enforcing the limits that apply before a document is parsed. */
export function parseOptionsOf(limits: QueryLimits): ParseOptions {
  return { maxLexicalTokens: limits.maxTokens, maxSourceLength: limits.maxLength };
}

/** Reports graphql-armor's refusal as our own validation error (graphql-armor's would throw out of validate). */
function reportAs(message: string, limit: string) {
  return [(context: ValidationContext | null) => context?.reportError(limitError(message, limit))];
}

/** The validation rules enforcing `limits`, to run after graphql-js' specified rules. */
export function createLimitRules(limits: QueryLimits): ValidationRule[] {
  const common = { propagateOnRejection: false, exposeLimits: false };
  return [
    maxDepthRule({
      ...common,
      n: limits.maxDepth,
      flattenFragments: true,
      ignoreIntrospection: true,
      onReject: reportAs(`the query is more than ${limits.maxDepth} levels deep (the limit)`, 'depth'),
    }),
    maxAliasesRule({
      ...common,
      n: limits.maxAliases,
      allowList: [],
      onReject: reportAs(`the query has more than ${limits.maxAliases} aliases (the limit)`, 'aliases'),
    }),
    maxDirectivesRule({
      ...common,
      n: limits.maxDirectives,
      onReject: reportAs(`the query has more than ${limits.maxDirectives} directives (the limit)`, 'directives'),
    }),
    createCostRule(limits.maxCost),
  ];
}

/** A page size given by a variable: the variable, the field and its largest page. */
interface PageVariable {
  variable: string;
  field: string;
  max: number;
}

/** Found once per parsed document (Apollo hands back the same object for the same text). */
const pageVariablesOfDocument = new WeakMap<DocumentNode, { uses: PageVariable[]; defaults: Map<string, number> }>();

function pageVariablesOf(schema: GraphQLSchema, document: DocumentNode) {
  const known = pageVariablesOfDocument.get(document);
  if (known !== undefined) return known;
  const found = { uses: [] as PageVariable[], defaults: new Map<string, number>() };
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      VariableDefinition(node) {
        if (node.defaultValue?.kind === Kind.INT)
          found.defaults.set(node.variable.name.value, Number(node.defaultValue.value));
      },
      Argument(node) {
        if (node.name.value !== 'first' || node.value.kind !== Kind.VARIABLE || typeInfo.getArgument() === null) return;
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (parent == null || field == null) return;
        found.uses.push({
          variable: node.value.name.value,
          field: field.name,
          max: maxPageSizeOf(`${parent.name}.${field.name}`),
        });
      },
    }),
  );
  pageVariablesOfDocument.set(document, found);
  return found;
}

/**
 * The error for a page size given by a variable (or a variable's default) outside what its field
 * allows, before anything runs; undefined when every one is allowed.
 */
export function checkPageSizeVariables(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
): GraphQLError | undefined {
  const { uses, defaults } = pageVariablesOf(schema, document);
  for (const use of uses) {
    const value = variables?.[use.variable] ?? defaults.get(use.variable);
    // null or absent: the field's default; not a number: refused by variable coercion.
    if (typeof value !== 'number') continue;
    const problem = pageSizeProblem(value, use.max);
    if (problem !== undefined) return pageSizeError(`${use.field}: ${problem} (variable $${use.variable})`);
  }
  return undefined;
}

/** `error` with `code` in its extensions, unless it names one already. */
function withCode(error: GraphQLError, code: string): GraphQLError {
  if (typeof error.extensions.code === 'string') return error;
  return new GraphQLError(error.message, {
    ...(error.nodes ? { nodes: error.nodes } : {}),
    ...(error.source ? { source: error.source } : {}),
    ...(error.positions ? { positions: error.positions } : {}),
    ...(error.originalError ? { originalError: error.originalError } : {}),
    extensions: { ...error.extensions, code },
  });
}

/** What a graphql-ws client asks to run. */
export interface OperationPayload {
  query: string;
  operationName?: string | null | undefined;
  variables?: Readonly<Record<string, unknown>> | null | undefined;
}

/**
 * Parses and validates an operation under `limits` the way Apollo does for HTTP (codes
 * GRAPHQL_PARSE_FAILED and GRAPHQL_VALIDATION_FAILED, unless a rule names its own), for graphql-ws'
 * `onSubscribe`: its own parse has no options, and an error thrown from it closes the socket.
 */
export function prepareOperation(
  schema: GraphQLSchema,
  payload: OperationPayload,
  limits: QueryLimits,
  rules: readonly ValidationRule[],
): ExecutionArgs | GraphQLError[] {
  let document: DocumentNode;
  try {
    document = parse(payload.query, parseOptionsOf(limits));
  } catch (error) {
    if (error instanceof GraphQLError) return [withCode(error, 'GRAPHQL_PARSE_FAILED')];
    throw error;
  }
  const errors = validate(schema, document, [...specifiedRules, ...rules]);
  if (errors.length > 0) return errors.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED'));
  const pageError = checkPageSizeVariables(schema, document, payload.variables);
  if (pageError !== undefined) return [pageError];
  return { schema, document, operationName: payload.operationName, variableValues: payload.variables };
}
