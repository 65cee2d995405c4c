/**
 * What a worker process loads: src/app.ts's static imports (a worker process runs nothing else
 * before its workers start) must reach neither Prisma's runtime nor the API's modules, and only
 * client-node's config module. Each of those is loaded with a dynamic import by a process that
 * needs it; a static import added anywhere on the way would put it back into every worker's
 * memory (figures in BENCHMARKS.md). The graph comes from esbuild's metafile, so this holds on any
 * Node version.
 */
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface StaticGraph {
  /** Source files reached through static imports, relative to the project. */
  files: Set<string>;
  /** Packages (and their paths) imported statically by those files. */
  packages: Set<string>;
}

/** The files and packages `entry` reaches through static `import` statements only. */
async function staticGraph(entry: string): Promise<StaticGraph> {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const inputs: Metafile['inputs'] = result.metafile.inputs;
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    for (const imported of inputs[file]?.imports ?? []) {
      if (imported.kind !== 'import-statement') continue;
      if (imported.external === true) packages.add(imported.path);
      else queue.push(imported.path);
    }
  }
  return { files, packages };
}

describe('a worker process', () => {
  it("loads no Prisma client, no API module and not client-node's generated API before its workers run", async () => {
    const { files, packages } = await staticGraph('src/app.ts');
    // The graph is real: it reaches the workers and the stores they write with.
    expect(files).toContain('workers/start-workers.ts');
    expect(files).toContain('src/store/history-write.ts');
    expect(packages).toContain('bullmq');

    // (src/ui/paths.ts, the UI's URL paths that notifications link to, is not the UI.)
    const apiOrPrisma = (f: string) =>
      /^src\/(generated\/prisma|graphql|demo)\//.test(f) ||
      ['src/store/prisma.ts', 'src/serve-api.ts', 'src/ui/serve.ts', 'src/ui/bundle.ts'].includes(f);
    expect([...files].filter(apiOrPrisma)).toEqual([]);
    expect([...packages].filter((p) => /^@prisma\/client|^@apollo\/|^graphql|^ws$/.test(p))).toEqual([]);
    expect([...packages].filter((p) => p.startsWith('@kubernetes/client-node'))).toEqual([
      '@kubernetes/client-node/dist/config.js',
    ]);
  });

  it('is told apart from a process that serves the API, whose modules are loaded on demand', async () => {
    const { files, packages } = await staticGraph('src/serve-api.ts');
    expect(files).toContain('src/graphql/server.ts');
    expect([...packages].some((p) => p.startsWith('@apollo/server'))).toBe(true);
  });
});
