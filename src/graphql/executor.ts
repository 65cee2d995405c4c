/**
 * Executes HTTP operations with queries compiled by graphql-jit instead of graphql-js' interpreter.
 * graphql-js walks every field of a result through the schema at run time (argument coercion, a
 * resolve info, promise checks, for each of the hundreds of fields of a history page); a compiled
 * query is a function made for one document and operation that does the same work without the walk.
 *
 * Apollo Server 5 has no executor option; its gateway interface is the one way to hand it one.
 * Everything else of Apollo's pipeline (parsing, validation with our limits, the document cache,
 * CSRF prevention, plugins, error formatting and masking) runs as before. Subscriptions
 * (graphql-ws) keep graphql-js.
 *
 * An operation is compiled on its second use (compiling costs more than running a document once;
 * a query sent once never pays it) and the compiled ones are kept, most recently used first, up to
 * a bound. Whatever graphql-jit does not answer the way graphql-js does goes to graphql-js: the
 * first use, operations other than queries, a document it cannot compile, and variables
 * it refuses (so that their errors keep graphql-js' wording and Apollo's BAD_USER_INPUT code).
 */
import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { execute, GraphQLError } from 'graphql';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { GraphqlContext } from './context.ts';

type Gateway = ApolloServerOptionsWithGateway<GraphqlContext>['gateway'];

/** Options of {@link createCompiledExecution}. */
export interface CompiledExecutionOptions {
  /**
   * Operations remembered, compiled or only counted so far; the least recently used is forgotten
   * first, so a stream of distinct documents keeps memory bounded. @default 1000
   */
  maxOperations?: number;
  /** The use of an operation at which it is compiled; the earlier ones run on graphql-js. @default 2 */
  compileOnUse?: number;
}

interface Entry {
  uses: number;
  /** The compiled operation; null when graphql-jit cannot compile it (graphql-js runs it). */
  compiled?: CompiledQuery | null;
}

/** One operation to run: what Apollo has parsed and validated. */
export interface OperationRequest {
  /** Identifies the document's text (Apollo's query hash). */
  queryHash: string;
  document: DocumentNode;
  operationName: string | null;
  operationType: 'query' | 'mutation' | 'subscription' | undefined;
  variables: Record<string, unknown> | undefined;
  context: unknown;
}

export interface CompiledExecution {
  /** Runs one operation (compiled when it is one of those kept). */
  execute(request: OperationRequest): Promise<ExecutionResult>;
  /** The operations currently compiled. */
  readonly compiledCount: number;
  /** Apollo's gateway for {@link execute} over `schema`. */
  gateway: Gateway;
}

/**
 * graphql-jit's errors pass for graphql-js' but leave `extensions` undefined when the thrown error
 * had none, which Apollo's error formatting does not survive: the same error as graphql-js makes.
 */
function toGraphqlError(error: GraphQLError): GraphQLError {
  const located = new GraphQLError(error.message, {
    path: error.path,
    originalError: error.originalError,
    ...(error.extensions ? { extensions: error.extensions } : {}),
  });
  return error.locations === undefined ? located : Object.assign(located, { locations: error.locations });
}

/** The operation compiled, or null when graphql-jit cannot compile it. */
function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): CompiledQuery | null {
  try {
    const compiled = compileQuery(schema, document, operationName ?? undefined);
    return isCompiledQuery(compiled) ? compiled : null;
  } catch {
    return null;
  }
}

/** A subscription over HTTP: answered 400 (Apollo takes the status from the error). */
function subscriptionOverHttp(): GraphQLError {
  return new GraphQLError(
    'subscriptions are served over WebSocket with the graphql-ws protocol: connect a graphql-ws client to this same URL',
    {
      extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
    },
  );
}

export function createCompiledExecution(
  schema: GraphQLSchema,
  options: CompiledExecutionOptions = {},
): CompiledExecution {
  const maxOperations = Math.max(1, options.maxOperations ?? 1000);
  const compileOnUse = Math.max(1, options.compileOnUse ?? 2);
  // Keyed by query hash and operation name; Map order is the recency order (oldest first).
  const entries = new Map<string, Entry>();
  let compiledCount = 0;

  const interpret = (request: OperationRequest) =>
    execute({
      schema,
      document: request.document,
      operationName: request.operationName,
      variableValues: request.variables,
      contextValue: request.context,
    });

  const entryOf = (key: string): Entry => {
    const entry = entries.get(key) ?? { uses: 0 };
    entries.delete(key);
    entries.set(key, entry);
    if (entries.size > maxOperations) {
      const [oldestKey, oldest] = entries.entries().next().value as [string, Entry];
      if (oldest.compiled) compiledCount -= 1;
      entries.delete(oldestKey);
    }
    return entry;
  };

  const run = async (request: OperationRequest): Promise<ExecutionResult> => {
    // graphql-js would run a subscription's event resolver once, with no event, and fail inside it.
    if (request.operationType === 'subscription') return { errors: [subscriptionOverHttp()] };
    // Mutations (rare, mostly one-off) stay on graphql-js, and so does a document with no operation
    // of the name asked: graphql-js' error then tells Apollo, which answers 400 with its code.
    if (request.operationType !== 'query') return interpret(request);
    const entry = entryOf(`${request.queryHash}\u0000${request.operationName ?? ''}`);
    entry.uses += 1;
    if (entry.compiled === undefined && entry.uses >= compileOnUse) {
      entry.compiled = compile(schema, request.document, request.operationName);
      if (entry.compiled) compiledCount += 1;
    }
    if (!entry.compiled) return interpret(request);
    const result = await entry.compiled.query(undefined, request.context, request.variables ?? {});
    // Refused variables: no data at all. graphql-js words the errors the way clients and Apollo know.
    if (!('data' in result)) return interpret(request);
    return result.errors === undefined ? result : { ...result, errors: result.errors.map(toGraphqlError) };
  };

  return {
    execute: run,
    get compiledCount() {
      return compiledCount;
    },
    gateway: {
      onSchemaLoadOrUpdate(callback) {
        callback({ apiSchema: schema, coreSupergraphSdl: '' });
        return () => {};
      },
      async load() {
        return {
          executor: (requestContext) =>
            run({
              queryHash: requestContext.queryHash,
              document: requestContext.document,
              // The operation's name once Apollo has found it, else the name asked for (which the
              // document does not define, or a document of several operations that needs one).
              operationName: requestContext.operationName ?? requestContext.request.operationName ?? null,
              operationType: requestContext.operation?.operation,
              variables: requestContext.request.variables,
              context: requestContext.context,
            }),
        };
      },
      async stop() {},
    },
  };
}
