/** Errors the API client sees, each with its `extensions.code`. Never match on their messages. */
import { GraphQLError } from 'graphql';

/** Input the API refuses: HTTP 400, as Apollo answers variables it cannot coerce. */
export function badUserInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
}

export function notFound(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'NOT_FOUND' } });
}

export function forbidden(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'FORBIDDEN', http: { status: 403 } } });
}

export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } });
}

/** A part the request needs (snapshot workers, Redis) did not answer in time or failed. */
export function serviceUnavailable(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'SERVICE_UNAVAILABLE' } });
}
