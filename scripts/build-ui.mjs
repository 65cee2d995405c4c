#!/usr/bin/env node
/**
 * Bundles the web UI (web/ -> dist/ui/) and GraphiQL's page (-> dist/graphiql/) with esbuild; part
 * of `npm run build`, so an install without esbuild, React or GraphiQL (the container image) serves both.
 */
import { tsImport } from 'tsx/esm/api';

const kib = (bytes) => (bytes / 1024).toFixed(1);
const { bundleUi } = await tsImport('../src/ui/bundle.ts', import.meta.url);
const bundle = await bundleUi();
console.log(
  `web UI bundled: ${bundle.html} (${bundle.assets.join(', ')}; script ${kib(bundle.scriptBytes)} KiB, ${kib(bundle.scriptGzipBytes)} KiB gzipped)`,
);
const { GRAPHIQL_DIST_DIR, writeGraphiqlAssets } = await tsImport('../src/graphql/graphiql.ts', import.meta.url);
const graphiql = await writeGraphiqlAssets();
console.log(`GraphiQL bundled: ${GRAPHIQL_DIST_DIR} (script ${kib(Buffer.byteLength(graphiql.js))} KiB)`);
