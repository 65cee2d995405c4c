import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HealthLoadError } from './load-errors.ts';

/** A `health.lua` found in a directory laid out like Argo CD's `resource_customizations`. */
export interface LuaDirectoryScript {
  /** `group/Kind` (or `Kind` for the core group); `_` folder names become `*` wildcards. */
  key: string;
  script: string;
  file: string;
}

async function listDirectories(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

async function readScript(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Argo CD spells a wildcard folder `_` (`_.crossplane.io/_`), because `*` is awkward in paths. */
function toKey(folder: string): string {
  return folder.replaceAll('_', '*');
}

/**
 * Finds `<group>/<Kind>/health.lua` (and `<Kind>/health.lua` for core kinds) under one directory.
 * Unreadable directories or files are reported, and the rest still load.
 */
export async function readLuaDirectory(
  root: string,
): Promise<{ scripts: LuaDirectoryScript[]; errors: HealthLoadError[] }> {
  const scripts: LuaDirectoryScript[] = [];
  const errors: HealthLoadError[] = [];
  let top: string[];
  try {
    top = await listDirectories(root);
  } catch (error) {
    return { scripts, errors: [{ kind: 'READ_FAILED', source: root, message: (error as Error).message }] };
  }
  for (const first of top) {
    const firstPath = join(root, first);
    try {
      const coreScript = await readScript(join(firstPath, 'health.lua'));
      if (coreScript !== undefined) {
        scripts.push({ key: toKey(first), script: coreScript, file: join(firstPath, 'health.lua') });
      }
      for (const second of await listDirectories(firstPath)) {
        const file = join(firstPath, second, 'health.lua');
        const script = await readScript(file);
        if (script !== undefined) scripts.push({ key: `${toKey(first)}/${toKey(second)}`, script, file });
      }
    } catch (error) {
      errors.push({ kind: 'READ_FAILED', source: firstPath, message: (error as Error).message });
    }
  }
  return { scripts, errors };
}
