#!/usr/bin/env node
// Runs the Prisma CLI with the bundled WebAssembly schema engine instead of the native binary that
// Prisma would download at start-up (impossible on air-gapped machines). Usage: npm run prisma -- <args>
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const cli = require.resolve('prisma/build/index.js');
const shim = fileURLToPath(new URL('./schema-engine-shim.mjs', import.meta.url));
const result = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: shim,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
    PRISMA_DISABLE_WARNINGS: process.env.PRISMA_DISABLE_WARNINGS ?? '1',
  },
});
process.exit(result.status ?? 1);
