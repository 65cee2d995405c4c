/**
 * GraphiQL for people with a browser: GET /graphql asking for HTML gets a page whose script and
 * styles are bundled once, on first use, from the graphiql, react and react-dom packages installed
 * with phaselog (esbuild, in memory): no CDN, so it works on an air-gapped machine. The page holds
 * no data; queries from it carry whatever Authorization header the user sets in its headers tab.
 */
import { build } from 'esbuild';
import { PROJECT_ROOT } from '../runtime/paths.ts';

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

/** Bundles GraphiQL's page script and styles. Takes a second or two; callers cache the result. */
export async function bundleGraphiql(): Promise<GraphiqlAssets> {
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
