/**
 * The `phaselog` command (bin/phaselog.mjs, what `npm start`, `npx phaselog` and `npm link` run)
 * never runs compiled code older than its sources: it runs dist/ while the build stamp matches the
 * working tree, compiles again when a source was edited, added or removed, and runs the sources
 * through tsx where dist/ cannot be written. Each case runs in a small project of its own laid out
 * like phaselog (bin/, scripts/compile.mjs, src/cli/main.ts), so the real dist/ is never touched.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src/runtime/paths.ts';
import {
  compileSources as compile,
  fingerprintSources as fingerprint,
  isBuildCurrent as isCurrent,
} from '../../../scripts/compile.mjs';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A project laid out like phaselog whose CLI prints the greeting of src/greeting.ts. */
function createProject(greeting = 'hello v1'): string {
  const root = mkdtempSync(path.join(tmpdir(), 'phaselog-bin-'));
  roots.push(root);
  // The hook module too: bin/phaselog.mjs registers it before loading the CLI.
  for (const file of ['bin/phaselog.mjs', 'scripts/compile.mjs', 'tsconfig.json', 'src/kube/lean-client-node.ts']) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    cpSync(path.join(PROJECT_ROOT, file), path.join(root, file));
  }
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'bin-test', type: 'module', private: true }));
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(root, 'node_modules'));
  mkdirSync(path.join(root, 'src', 'cli'), { recursive: true });
  writeGreeting(root, greeting);
  // Type-only syntax and a .ts import, as the real sources use.
  writeFileSync(
    path.join(root, 'src', 'cli', 'main.ts'),
    "import { greeting } from '../greeting.ts';\nconst where: string = import.meta.url.includes('/dist/') ? 'dist' : 'src';\nconsole.log(`${greeting()} from ${where} ${process.argv.slice(2).join(' ')}`);\n",
  );
  return root;
}

function writeGreeting(root: string, greeting: string): void {
  writeFileSync(
    path.join(root, 'src', 'greeting.ts'),
    `export function greeting(): string {\n  return ${JSON.stringify(greeting)};\n}\n`,
  );
}

function runBin(root: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [path.join(root, 'bin', 'phaselog.mjs'), ...args], {
    cwd: tmpdir(),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr };
}

describe('bin/phaselog.mjs', () => {
  it('compiles once, then runs dist/ while nothing changed', () => {
    const root = createProject();
    expect(existsSync(path.join(root, 'dist'))).toBe(false);
    expect(runBin(root, 'status', '-A')).toMatchObject({ status: 0, stdout: 'hello v1 from dist status -A' });
    expect(isCurrent(root)).toBe(true);
    const stamp = readFileSync(path.join(root, 'dist', 'build-stamp.json'), 'utf8');
    expect(runBin(root).stdout).toBe('hello v1 from dist');
    // Not compiled again: the stamp is the first run's.
    expect(readFileSync(path.join(root, 'dist', 'build-stamp.json'), 'utf8')).toBe(stamp);
  });

  it('runs an edited source, never the dist/ compiled before the edit', () => {
    const root = createProject();
    expect(runBin(root).stdout).toBe('hello v1 from dist');
    writeGreeting(root, 'hello v2, a longer greeting');
    expect(isCurrent(root)).toBe(false);
    expect(runBin(root).stdout).toBe('hello v2, a longer greeting from dist');
  });

  it('fails on an import of a source that was removed, as the sources would, instead of running its old output', () => {
    const root = createProject();
    expect(runBin(root).status).toBe(0);
    rmSync(path.join(root, 'src', 'greeting.ts'));
    const run = runBin(root);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/Cannot find module .*greeting/);
    expect(existsSync(path.join(root, 'dist', 'src', 'greeting.js'))).toBe(false);
  });

  it('gives every one of several commands started at once the current code, while they all compile', async () => {
    const root = createProject();
    expect(runBin(root).status).toBe(0);
    writeGreeting(root, 'hello v3, edited while nothing ran');
    const runs = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        promisify(execFile)(process.execPath, [path.join(root, 'bin', 'phaselog.mjs'), String(i)], {
          cwd: tmpdir(),
          encoding: 'utf8',
        }),
      ),
    );
    expect(runs.map((r) => r.stdout.trim()).sort()).toEqual(
      [0, 1, 2, 3].map((i) => `hello v3, edited while nothing ran from dist ${i}`),
    );
    expect(isCurrent(root)).toBe(true);
  });

  it('runs the sources through tsx where dist/ cannot be written', () => {
    const root = createProject();
    // A file where the dist/ directory would go: no compiling there, whoever runs it (even root).
    writeFileSync(path.join(root, 'dist'), 'not a directory');
    expect(runBin(root, 'version')).toMatchObject({ status: 0, stdout: 'hello v1 from src version' });
  });

  it('reports a syntax error with its file and exits non-zero, leaving no stamp that would let old output run', async () => {
    const root = createProject();
    expect(runBin(root).status).toBe(0);
    writeFileSync(
      path.join(root, 'src', 'greeting.ts'),
      'export function greeting(): string {\n  return "unterminated;\n}\n',
    );
    const run = runBin(root);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('greeting.ts');
    expect(run.stdout).toBe('');
    await expect(compile(root)).rejects.toThrow();
    expect(isCurrent(root)).toBe(false);
  });
});

describe('the source fingerprint', () => {
  it('changes when a file is added, edited or removed, and only then', () => {
    const root = createProject();
    const before = fingerprint(root);
    expect(fingerprint(root)).toBe(before);
    writeFileSync(path.join(root, 'src', 'new.ts'), 'export const x = 1;\n');
    const added = fingerprint(root);
    expect(added).not.toBe(before);
    rmSync(path.join(root, 'src', 'new.ts'));
    expect(fingerprint(root)).toBe(before);
    writeFileSync(path.join(root, 'tsconfig.json'), readFileSync(path.join(root, 'tsconfig.json'), 'utf8') + '\n');
    expect(fingerprint(root)).not.toBe(before);
  });
});
