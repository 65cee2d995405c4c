/**
 * Compiled code that is never older than its sources. `compileSources` turns every TypeScript file
 * under src/ and workers/ into JavaScript under dist/ (esbuild, one output file per source, relative
 * imports rewritten from .ts to .js as tsc's rewriteRelativeImportExtensions does; no type checking,
 * which is `npm run typecheck`'s job) and records a fingerprint of what it compiled in
 * dist/build-stamp.json. `isBuildCurrent` compares that stamp with the working tree, so
 * bin/phaselog.mjs runs dist/ as long as nothing changed and compiles again when something did.
 *
 * The fingerprint is every file under src/ and workers/ (path, size, modification time) plus the
 * files that steer the compiler: stat calls only, no reading, so checking costs far less than
 * starting Node. A file added, removed, edited, or checked out by git changes it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SOURCE_DIRS = ['src', 'workers'];
const COMPILER_FILES = ['package.json', 'tsconfig.json', 'scripts/compile.mjs'];
const OUT_DIR = 'dist';
const STAMP = path.join(OUT_DIR, 'build-stamp.json');

function listFiles(root, dir, out) {
  let entries;
  try {
    entries = readdirSync(path.join(root, dir), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) listFiles(root, rel, out);
    else out.push(rel);
  }
}

function sourceFiles(root) {
  const files = [];
  for (const dir of SOURCE_DIRS) listFiles(root, dir, files);
  return files.sort();
}

/** A hash of the compiler's inputs under `root` as they are on disk now. */
export function fingerprintSources(root) {
  const hash = createHash('sha256');
  for (const rel of [...sourceFiles(root), ...COMPILER_FILES]) {
    let stat;
    try {
      stat = statSync(path.join(root, rel));
    } catch {
      hash.update(`${rel}\0missing\n`);
      continue;
    }
    hash.update(`${rel}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Whether dist/ was compiled from the sources as they are now (false when there is none). */
export function isBuildCurrent(root) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(path.join(root, STAMP), 'utf8'));
  } catch {
    return false;
  }
  return typeof stamp.fingerprint === 'string' && stamp.fingerprint === fingerprintSources(root);
}

/** Writes `contents` to `file` through a temporary file and a rename, so a concurrent reader sees the old file or the new one, never half of one. */
function writeAtomically(file, contents) {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

/**
 * Compiles src/ and workers/ into dist/ and stamps the result. The fingerprint is taken before
 * esbuild reads the sources, so a file saved while it compiles makes the build stale, not current.
 * @returns how many files were compiled
 */
export async function compileSources(root) {
  const { build } = await import('esbuild');
  const fingerprint = fingerprintSources(root);
  rmSync(path.join(root, STAMP), { force: true });
  const entryPoints = sourceFiles(root).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    outdir: OUT_DIR,
    outbase: '.',
    // Bundling only so that the plugin below sees every import; it marks each one external, so
    // every output file holds exactly its own source, as tsc would emit it.
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    // tsconfig.json's target, so the output is what tsc would emit.
    target: 'es2023',
    tsconfig: 'tsconfig.json',
    sourcemap: 'linked',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'keep-relative-imports',
        setup(compile) {
          compile.onResolve({ filter: /^\.\.?\// }, (args) =>
            args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.(m?)ts$/, '.$1js'), external: true },
          );
        },
      },
    ],
  });
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents);
  // Output of a source that is gone would still be found by an import of it that esbuild, which
  // does not resolve external paths, let through; node must fail on such an import as tsx would.
  const produced = new Set(result.outputFiles.map((f) => f.path));
  const previous = [];
  for (const dir of SOURCE_DIRS) listFiles(root, path.join(OUT_DIR, dir), previous);
  // Only compiler output: another process compiling at the same time has its own .tmp files here.
  for (const rel of previous)
    if (/\.js(\.map)?$/.test(rel) && !produced.has(path.join(root, rel))) rmSync(path.join(root, rel), { force: true });
  writeAtomically(
    path.join(root, STAMP),
    `${JSON.stringify({ fingerprint, compiledAt: new Date().toISOString(), files: entryPoints.length }, null, 2)}\n`,
  );
  return entryPoints.length;
}
