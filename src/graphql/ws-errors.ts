/**
 * Errors sent over graphql-ws go through the same `formatError` as Apollo's HTTP answers: expected
 * codes pass, anything else is masked as "Internal server error (request id ...)" and logged under
 * that id. graphql-ws would otherwise send `error.toJSON()`, a database error's text included.
 *
 * Apollo gives every error a code before formatting; graphql-ws does not, so the code an error
 * without one gets here follows Apollo's: an error blaming a variable definition is a variable
 * that failed coercion (BAD_USER_INPUT); a GraphQL error no code threw is a validation error;
 * what code threw (a resolver, a stream) is internal.
 */
import {
  GraphQLError,
  Kind,
  type ExecutionResult,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
} from 'graphql';
import type { GraphqlContext } from './context.ts';

/** Options of {@link createWebSocketErrorFormatter}. */
export interface WebSocketErrorFormatterOptions {
  /** The server's error formatter (masks and logs). */
  format: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  /** Where `format` finds the operation context of an error (for its request id). */
  contexts: WeakMap<object, GraphqlContext>;
}

/** The graphql-ws hooks' side of error formatting; `connection` is graphql-ws' per-connection context. */
export interface WebSocketErrorFormatter {
  /** Keeps an operation's context until it completes, so a late error names its request id. */
  remember(connection: object, id: string, context: GraphqlContext): GraphqlContext;
  forget(connection: object, id: string): void;
  /** For graphql-ws' `onNext`: the result with its errors formatted, or undefined when it has none. */
  formatResult(connection: object, id: string, result: ExecutionResult): FormattedExecutionResult | undefined;
  /** For graphql-ws' `onError`: validation errors, refusals and errors a subscription's stream threw. */
  formatErrors(connection: object, id: string, errors: readonly GraphQLError[]): GraphQLFormattedError[];
}

/** Whether the error came from code (a resolver, a stream) rather than from GraphQL's own checks. */
function isThrownByCode(error: GraphQLError): boolean {
  return (
    error.originalError !== undefined && error.originalError !== null && !(error.originalError instanceof GraphQLError)
  );
}

/** Whether the error is a variable's value refused before execution (Apollo's UserInputError). */
function isVariableError(error: GraphQLError): boolean {
  return error.nodes?.length === 1 && error.nodes[0]?.kind === Kind.VARIABLE_DEFINITION;
}

export function createWebSocketErrorFormatter(options: WebSocketErrorFormatterOptions): WebSocketErrorFormatter {
  const operations = new WeakMap<object, Map<string, GraphqlContext>>();
  const contextOf = (connection: object, id: string) => operations.get(connection)?.get(id);

  const formatOne = (
    error: GraphQLError,
    context: GraphqlContext | undefined,
    fallbackCode: string,
  ): GraphQLFormattedError => {
    if (context !== undefined) options.contexts.set(error, context);
    // `http` tells Apollo an HTTP status; it is not part of the answer.
    const { http: _http, ...extensions } = error.extensions;
    return options.format(
      { ...error.toJSON(), extensions: { ...extensions, code: extensions.code ?? fallbackCode } },
      error,
    );
  };

  return {
    remember(connection, id, context) {
      let byId = operations.get(connection);
      if (byId === undefined) operations.set(connection, (byId = new Map()));
      byId.set(id, context);
      return context;
    },
    forget(connection, id) {
      operations.get(connection)?.delete(id);
    },
    formatResult(connection, id, result) {
      if (result.errors === undefined || result.errors.length === 0) return undefined;
      const context = contextOf(connection, id);
      const { errors, ...rest } = result;
      return {
        ...rest,
        errors: errors.map((error) =>
          formatOne(error, context, isVariableError(error) ? 'BAD_USER_INPUT' : 'INTERNAL_SERVER_ERROR'),
        ),
      };
    },
    formatErrors(connection, id, errors) {
      const context = contextOf(connection, id);
      return errors.map((error) =>
        formatOne(error, context, isThrownByCode(error) ? 'INTERNAL_SERVER_ERROR' : 'GRAPHQL_VALIDATION_FAILED'),
      );
    },
  };
}
