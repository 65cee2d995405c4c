import { defineConfig } from 'vitest/config';

export default defineConfig({
  // One graphql module for everyone: Apollo and graphql-tools (loaded by Node) get graphql's CJS
  // entry, and Vite would otherwise give our sources its ESM entry ("Cannot use GraphQLObjectType
  // from another module or realm").
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
