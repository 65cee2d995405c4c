#!/usr/bin/env node
// Generates src/generated/graphql.ts (resolver types) from schema.graphql with graphql-codegen, as
// configured in codegen.ts. Reads local files only, so it works offline. Usage: npm run codegen.
// With --if-installed (postinstall), it skips instead of failing where dev dependencies or the
// config are absent (an install with --omit=dev, a Docker layer before the sources are copied):
// nothing at run time imports the generated file, only the type checker and `npm run build` do.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const optional = process.argv.includes('--if-installed');
const require = createRequire(import.meta.url);

let bin;
try {
  const manifest = require.resolve('@graphql-codegen/cli/package.json');
  bin = path.join(path.dirname(manifest), require(manifest).bin['graphql-codegen']);
} catch {
  bin = undefined;
}
const missing =
  bin === undefined
    ? '@graphql-codegen/cli is not installed'
    : ['codegen.ts', 'schema.graphql']
        .filter((f) => !existsSync(path.join(root, f)))
        .map((f) => `${f} is missing`)
        .join(', ');
if (missing) {
  if (optional) {
    console.log(`codegen skipped: ${missing} (run npm run codegen once it is there)`);
    process.exit(0);
  }
  console.error(`codegen: ${missing}`);
  process.exit(1);
}

// Quiet when it works; the CLI's whole output (which names the failing step) when it does not.
const result = spawnSync(process.execPath, [bin, '--config', 'codegen.ts'], { cwd: root, encoding: 'utf8' });
if (result.status !== 0) {
  process.stdout.write(result.stdout ?? '');
  process.stderr.write(result.stderr ?? String(result.error ?? ''));
  process.exit(result.status ?? 1);
}
console.log('codegen: src/generated/graphql.ts is up to date with schema.graphql');
