/**
 * client-node's KubeConfig loads without its generated API client where Node has
 * `module.registerHooks` (the container's Node 22; CI runs this file on Node 22 and 24), and works
 * the same either way. Runs in a child process: hooks apply to a whole process, and this one's
 * module cache already holds client-node.
 */
import { execFileSync } from 'node:child_process';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { leanGenIndexUrl } from '../../../src/kube/lean-client-node.ts';

const CHILD = fileURLToPath(new URL('./fixtures/lean-client-node-child.ts', import.meta.url));

interface ChildReport {
  lean: boolean;
  hooks: boolean;
  errors: number;
  clusters: string[];
  authorization?: string;
  models: number;
  apis: number;
  mainEntryHasApis: boolean;
  modelsAfterMainEntry: number;
}

function runChild(): ChildReport {
  const out = execFileSync(process.execPath, ['--import', 'tsx', CHILD], { encoding: 'utf8', timeout: 60_000 });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as ChildReport;
}

describe('registerLeanClientNode', () => {
  it('loads clusters and their credentials without the generated API client, where Node can hook imports', () => {
    const report = runChild();
    const nodeHasHooks = typeof (module as unknown as { registerHooks?: unknown }).registerHooks === 'function';
    expect(report.hooks).toBe(nodeHasHooks);
    expect(report.lean).toBe(nodeHasHooks);
    // Either way the cluster and its token work as before.
    expect(report.errors).toBe(0);
    expect(report.clusters).toEqual(['prod']);
    expect(report.authorization).toBe('Bearer lean-token');
    expect(report.mainEntryHasApis).toBe(true);
    if (nodeHasHooks) {
      // Not one model or API class was loaded for KubeConfig; the main entry, imported afterwards, loads them.
      expect(report.models).toBe(0);
      expect(report.apis).toBe(0);
      expect(report.modelsAfterMainEntry).toBeGreaterThan(100);
    }
  });

  it('stands in for gen/index.js with exactly the names config.js imports from it, from the same package', async () => {
    const configUrl = new URL('../../../node_modules/@kubernetes/client-node/dist/config.js', import.meta.url).href;
    const url = leanGenIndexUrl(configUrl);
    const source = decodeURIComponent(url.slice('data:text/javascript,'.length));
    const { readFileSync } = await import('node:fs');
    const config = readFileSync(fileURLToPath(configUrl), 'utf8');
    const imported =
      /import\s*\{([^}]*)\}\s*from\s*'\.\/gen\/index\.js'/
        .exec(config)?.[1]
        ?.split(',')
        .map((n) => n.trim())
        .filter((n) => n !== '') ?? [];
    // If client-node starts taking another name from gen/index.js, this fails before any process does.
    expect([...source.matchAll(/export \{ (\w+) \}/g)].map((m) => m[1]).sort()).toEqual(imported.sort());
    const stand = (await import(url)) as Record<string, unknown>;
    const gen = (await import('@kubernetes/client-node')) as Record<string, unknown>;
    for (const name of imported) expect(stand[name]).toBe(gen[name]);
  });
});
