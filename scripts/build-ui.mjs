#!/usr/bin/env node
/** Bundles the web UI (web/ -> dist/ui/) with esbuild; part of `npm run build`. */
import { tsImport } from 'tsx/esm/api';

const { bundleUi } = await tsImport('../src/ui/bundle.ts', import.meta.url);
const bundle = await bundleUi();
const kib = (bytes) => (bytes / 1024).toFixed(1);
console.log(`web UI bundled: ${bundle.html} (${bundle.assets.join(', ')}; script ${kib(bundle.scriptBytes)} KiB, ${kib(bundle.scriptGzipBytes)} KiB gzipped)`);
