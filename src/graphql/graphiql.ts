/**
 * GraphiQL for people with a browser: GET /graphql asking for HTML gets a page whose script and
 * styles come from the graphiql, react and react-dom packages, bundled by esbuild: no CDN, so it
 * works on an air-gapped machine. `npm run build` writes the bundle to dist/graphiql/ (what a
 * production install, which has none of those packages, serves); a checkout without it bundles once,
 * in memory, on first use. The page holds no data; queries from it carry whatever Authorization
 * header the user sets in its headers tab.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../runtime/paths.ts';

/** Where `npm run build` puts the bundle. */
export const GRAPHIQL_DIST_DIR = path.join(PROJECT_ROOT, 'dist', 'graphiql');

/** The bundled assets. */
export interface GraphiqlAssets {
  js: string;
  css: string;
}

const ENTRY = `
import React from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import 'graphiql/style.css';

const url = window.location.pathname;
async function fetcher(params, options) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(options && options.headers) },
    body: JSON.stringify(params),
  });
  return response.json();
}
createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, { fetcher, defaultEditorToolsVisibility: true }));
`;

/** The prebuilt bundle when there is one, else a fresh bundle. Callers cache the result. */
export async function loadGraphiqlAssets(dir = GRAPHIQL_DIST_DIR): Promise<GraphiqlAssets> {
  const js = path.join(dir, 'app.js');
  const css = path.join(dir, 'app.css');
  if (existsSync(js) && existsSync(css)) return { js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') };
  return bundleGraphiql();
}

/** Bundles into `dir` for {@link loadGraphiqlAssets} (part of `npm run build`). */
export async function writeGraphiqlAssets(dir = GRAPHIQL_DIST_DIR): Promise<GraphiqlAssets> {
  const assets = await bundleGraphiql();
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'app.css'), assets.css);
  writeFileSync(path.join(dir, 'app.js'), assets.js);
  return assets;
}

/** Bundles GraphiQL's page script and styles. Takes a second or two. */
export async function bundleGraphiql(): Promise<GraphiqlAssets> {
  // Loaded here, not at the top: a production install has no esbuild and serves the prebuilt bundle.
  const { build } = await import('esbuild');
  const result = await build({
    stdin: { contents: ENTRY, resolveDir: PROJECT_ROOT, loader: 'js', sourcefile: 'graphiql-entry.js' },
    bundle: true,
    write: false,
    outdir: 'graphiql',
    format: 'iife',
    minify: true,
    platform: 'browser',
    target: 'es2022',
    define: { 'process.env.NODE_ENV': '"production"' },
    loader: { '.woff': 'dataurl', '.woff2': 'dataurl', '.ttf': 'dataurl', '.svg': 'dataurl' },
    logLevel: 'silent',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'))?.text;
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
  if (js === undefined) throw new Error('bundling GraphiQL produced no script');
  return { js, css };
}

/** The HTML page; its assets are served from the same path with `?graphiql=app.js|app.css`. */
export function graphiqlPage(path: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>phaselog GraphiQL</title>
<link rel="stylesheet" href="${path}?graphiql=app.css">
<style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="graphiql">Loading GraphiQL…</div>
<script src="${path}?graphiql=app.js"></script>
</body>
</html>
`;
}
