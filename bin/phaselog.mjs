#!/usr/bin/env node
// The `phaselog` command (npm start, npx phaselog, npm link, the container). Runs the compiled CLI
// in dist/, compiling it first when it is missing or older than the sources (esbuild, well under a
// second), so compiled code older than its sources never runs and an unchanged checkout starts
// without compiling. Where dist/ cannot be written (a read-only checkout), it runs the TypeScript
// sources through tsx instead; a production install has neither and must ship dist/ built.
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
  // Before anything loads client-node, so it loads without its generated API client.
  const { registerLeanClientNode } = await import(
    new URL('../dist/src/kube/lean-client-node.js', import.meta.url).href
  );
  registerLeanClientNode();
  await import(new URL('../dist/src/cli/main.js', import.meta.url).href);
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    // A production install (the container image) has neither esbuild nor tsx: it ships dist/ built.
    console.error(
      'phaselog: dist/ is missing or older than the sources, and this install cannot compile them (no esbuild or tsx: installed with --omit=dev?); run `npm run build` where the dev dependencies are installed',
    );
    process.exit(1);
  }
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
