/**
 * The web UI's bundle: web/ (React + TSX) bundled ahead of time by esbuild into dist/ui/, with
 * content-hashed asset names so a browser may cache them for good. `npm run build` bundles it
 * (scripts/build-ui.mjs); the server bundles it once at start when the bundle is missing or older
 * than its sources, never per request. Nothing in the page loads from another origin.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PROJECT_ROOT } from '../runtime/paths.ts';

/** Where the UI's sources live and where the bundle goes. */
export interface UiPaths {
  /** @default <project>/web */
  sourceDir: string;
  /** @default <project>/dist/ui */
  outDir: string;
}

export const DEFAULT_UI_PATHS: UiPaths = {
  sourceDir: path.join(PROJECT_ROOT, 'web'),
  outDir: path.join(PROJECT_ROOT, 'dist', 'ui'),
};

/** URL prefix of the hashed assets. */
export const UI_ASSET_PREFIX = '/ui/assets/';

/** What a bundle run produced. */
export interface UiBundle {
  /** index.html's path. */
  html: string;
  /** Asset file names (under outDir/assets), the script first. */
  assets: string[];
  /** Bytes of the script, before compression. */
  scriptBytes: number;
  /** Bytes of the script gzipped (what a browser downloads; the board's budget is 250 KB). */
  scriptGzipBytes: number;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** The bundle's stamp: the newest source time it was built from (compared, not the clock: sources may carry any time). */
const STAMP = 'bundle.json';

function readStamp(outDir: string): number | undefined {
  try {
    const stamp = JSON.parse(readFileSync(path.join(outDir, STAMP), 'utf8')) as { sourceMtimeMs?: unknown };
    return typeof stamp.sourceMtimeMs === 'number' ? stamp.sourceMtimeMs : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the bundle must be (re)built: missing, or a file of web/ changed since it was built. */
export function isUiBundleStale(paths: UiPaths = DEFAULT_UI_PATHS): boolean {
  if (!existsSync(path.join(paths.outDir, 'index.html'))) return true;
  // An install without the sources (a copied dist/) serves what it has.
  if (!existsSync(paths.sourceDir)) return false;
  return newestMtime(paths.sourceDir) !== readStamp(paths.outDir);
}

function indexHtml(script: string, style: string | undefined): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>phaselog</title>
<link rel="icon" href="data:,">
${style ? `<link rel="stylesheet" href="${UI_ASSET_PREFIX}${style}">\n` : ''}<script type="module" src="${UI_ASSET_PREFIX}${script}"></script>
</head>
<body>
<div id="root"><p>Loading phaselog…</p></div>
<noscript>phaselog's web UI needs JavaScript; the CLI (phaselog status) and GraphiQL (/graphql) do not.</noscript>
</body>
</html>
`;
}

/** Bundles web/main.tsx into outDir (replacing what was there) and writes index.html last. */
export async function bundleUi(paths: UiPaths = DEFAULT_UI_PATHS): Promise<UiBundle> {
  const assetsDir = path.join(paths.outDir, 'assets');
  const sourceMtimeMs = newestMtime(paths.sourceDir);
  // Loaded here, not at the top: a production install has no esbuild and serves the prebuilt bundle.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { app: path.join(paths.sourceDir, 'main.tsx') },
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    write: false,
    outdir: assetsDir,
    entryNames: '[name]-[hash]',
    format: 'esm',
    minify: true,
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    logLevel: 'silent',
  });
  rmSync(assetsDir, { recursive: true, force: true });
  mkdirSync(assetsDir, { recursive: true });
  let script: string | undefined;
  let style: string | undefined;
  let scriptBytes = 0;
  let scriptGzipBytes = 0;
  for (const file of result.outputFiles) {
    writeFileSync(file.path, file.contents);
    const name = path.basename(file.path);
    if (name.endsWith('.js')) {
      script = name;
      scriptBytes = file.contents.byteLength;
      scriptGzipBytes = gzipSync(file.contents).byteLength;
    } else if (name.endsWith('.css')) style = name;
  }
  if (script === undefined) throw new Error('bundling the web UI produced no script');
  const html = path.join(paths.outDir, 'index.html');
  writeFileSync(html, indexHtml(script, style));
  // Written last: a run that failed before leaves the bundle stale.
  writeFileSync(path.join(paths.outDir, STAMP), JSON.stringify({ sourceMtimeMs }) + '\n');
  return { html, assets: [script, ...(style ? [style] : [])], scriptBytes, scriptGzipBytes };
}

/** Bundles the UI when it is missing or stale; resolves with whether it bundled. */
export async function ensureUiBundle(paths: UiPaths = DEFAULT_UI_PATHS): Promise<boolean> {
  if (!isUiBundleStale(paths)) return false;
  await bundleUi(paths);
  return true;
}
