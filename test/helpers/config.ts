/** Configuration test helpers: a folder with a phaselog.yaml (and files beside it), and the issues a load reports. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../src/config.ts';

/** A new folder holding `yaml` as phaselog.yaml (none when undefined) and `files` beside it. */
export function dirWith(yaml?: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-config-'));
  if (yaml !== undefined) writeFileSync(path.join(dir, 'phaselog.yaml'), yaml);
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

/** The issues of the ConfigError `fn` throws; fails when it throws none. */
export function issuesOf(fn: () => unknown): { key: string; message: string }[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
