#!/usr/bin/env node
/**
 * `npm run build`: resolver types (codegen), a type check, the compiled sources in dist/ (with the
 * stamp that lets bin/phaselog.mjs run them while they match the sources) and the web UI bundle.
 * Images use it to fail on type errors and ship everything prebuilt; `npm start` and `phaselog`
 * compile on their own when dist/ is missing or older than the sources.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { compileSources } from './compile.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run(['scripts/codegen.mjs']);
run([require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noEmit']);
const files = await compileSources(root);
console.log(`compiled ${files} files into dist/`);
run(['scripts/build-ui.mjs']);
