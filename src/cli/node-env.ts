/**
 * Imported first by the `phaselog` entry point (before anything loads graphql-js or Apollo, which
 * read NODE_ENV once, when they load): phaselog runs as production code unless NODE_ENV says
 * otherwise, as the Docker image does. In development mode graphql-js re-checks every failed
 * `instanceof` of its type tests for a second copy of graphql, work on the execution path of every
 * request that production mode skips. What the API shows does not depend on it: introspection,
 * GraphiQL and error masking come from phaselog's configuration, never from NODE_ENV.
 */
process.env['NODE_ENV'] ??= 'production';
