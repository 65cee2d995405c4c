#!/usr/bin/env node
// The `phaselog` command (npm start, npx phaselog, npm link, the container). Runs the compiled CLI
// in dist/, compiling it first when it is missing or older than the sources (esbuild, well under a
// second), so compiled code older than its sources never runs and an unchanged checkout starts
// without compiling. Where dist/ cannot be written (a read-only install), it runs the TypeScript
// sources through tsx instead.
import { fileURLToPath } from 'node:url';
import { compileSources, isBuildCurrent } from '../scripts/compile.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

async function compiled() {
  if (isBuildCurrent(root)) return true;
  try {
    await compileSources(root);
    return true;
  } catch {
    // A syntax error is reported the same way by tsx below, with its location.
    return false;
  }
}

if (await compiled()) {
  await import(new URL('../dist/src/cli/main.js', import.meta.url).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
