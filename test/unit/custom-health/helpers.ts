import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { createHealthChecker, healthConfigSchema } from '../../../src/status/custom/index.ts';
import type { HealthChecker, HealthLoadError } from '../../../src/status/custom/index.ts';

/** The real-shaped objects in test/fixtures/health/objects.yaml, freshly parsed per call. */
export function loadObject(name: string): Record<string, unknown> {
  const all = parseYaml(readFileSync(new URL('../../fixtures/health/objects.yaml', import.meta.url), 'utf8')) as Record<
    string,
    Record<string, unknown>
  >;
  const object = all[name];
  if (!object) throw new Error(`no fixture object ${name}`);
  return object;
}

/** A temporary directory with the given files (paths relative to it), removed by the returned cleanup. */
export function writeTree(files: Record<string, string>): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'phaselog-health-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A checker over a temporary tree; `health` is the raw `health` section of phaselog.yaml. */
export async function createCheckerFromTree(
  files: Record<string, string>,
  health: Record<string, unknown>,
): Promise<{ checker: HealthChecker; errors: HealthLoadError[]; dir: string; dispose: () => void }> {
  const { dir, cleanup } = writeTree(files);
  const { checker, errors } = await createHealthChecker(healthConfigSchema.parse(health), { baseDir: dir });
  return {
    checker,
    errors,
    dir,
    dispose: () => {
      checker.close();
      cleanup();
    },
  };
}

/** A checker with one Lua script for the object's group/kind, via a resource_customizations folder. */
export async function createLuaChecker(
  folder: string,
  script: string,
  lua?: Record<string, number>,
): Promise<{ checker: HealthChecker; errors: HealthLoadError[]; dispose: () => void }> {
  return createCheckerFromTree(
    { [`rc/${folder}/health.lua`]: script },
    { luaDirectories: ['rc'], ...(lua ? { lua } : {}) },
  );
}
