/**
 * Runs every `health_test.yaml` case found under an Argo CD `resource_customizations` checkout
 * through phaselog's Lua health checker and prints pass/fail counts.
 *
 *   node --import tsx scripts/check-argocd-health.ts <resource_customizations dir> [--verbose]
 *
 * A case passes when phaselog reports the same health status and message as the test expects
 * from Argo CD. Inputs are read as Argo CD's test reads them with go-yaml: the first document,
 * the last of duplicate keys. An input the `yaml` package still cannot read (go-yaml accepts some
 * continuation lines of quoted scalars that YAML 1.2 requires to be indented further) is reported
 * as unreadable and counted apart: it says nothing about the Lua checks. Exit code 1 when any
 * case that could be read does not match.
 */
import { access, readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { createHealthChecker, healthConfigSchema } from '../src/status/custom/index.ts';

interface HealthTestCase {
  healthStatus?: { status?: string; message?: string };
  inputPath?: string;
  /** Argo CD reads these files with Go's case-insensitive JSON field matching. */
  inputpath?: string;
}

interface HealthTestFile {
  tests?: HealthTestCase[];
}

async function findTestFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await findTestFiles(path)));
    else if (entry.name === 'health_test.yaml') out.push(path);
  }
  return out.sort();
}

/** The first document, as go-yaml's Unmarshal reads it; throws with the parser's first error. */
function readInput(text: string): Record<string, unknown> {
  const [first] = parseAllDocuments(text, { strict: false, uniqueKeys: false });
  if (first === undefined || !('errors' in first)) throw new Error('no YAML document');
  if (first.errors.length > 0) throw new Error(first.errors[0]!.message);
  return first.toJS() as Record<string, unknown>;
}

async function main(): Promise<number> {
  const [root, ...flags] = process.argv.slice(2);
  if (!root) {
    console.error('usage: check-argocd-health.ts <resource_customizations dir> [--verbose]');
    return 2;
  }
  const verbose = flags.includes('--verbose');
  const config = healthConfigSchema.parse({ luaDirectories: [root] });
  const { checker, errors } = await createHealthChecker(config, { baseDir: process.cwd() });
  for (const e of errors) console.log(`load error ${e.kind} ${e.source}${e.line ? `:${e.line}` : ''}: ${e.message}`);

  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let unreadable = 0;
  const kinds = new Set<string>();
  for (const file of await findTestFiles(root)) {
    const folder = dirname(file);
    const tests = (parseYaml(await readFile(file, 'utf8')) as HealthTestFile).tests ?? [];
    for (const test of tests) {
      const inputPath = test.inputPath ?? test.inputpath ?? '';
      const label = `${relative(root, folder)} ${inputPath}`;
      const inputFile = join(folder, inputPath);
      if (
        inputPath === '' ||
        !(await access(inputFile).then(
          () => true,
          () => false,
        ))
      ) {
        skipped++;
        console.log(`SKIP ${label} (input file not in this checkout)`);
        continue;
      }
      const expected = { status: test.healthStatus?.status ?? '', message: test.healthStatus?.message ?? '' };
      let object: Record<string, unknown>;
      try {
        object = readInput(await readFile(inputFile, 'utf8'));
      } catch (error) {
        unreadable++;
        console.log(`UNREADABLE ${label}: ${(error as Error).message.split('\n')[0]}`);
        continue;
      }
      let actual = { status: '(no check matched)', message: '' };
      const result = checker.evaluate(object);
      if (result?.customHealth) {
        const isError = result.reason === 'HEALTH_CHECK_ERROR' && result.customHealth.health === 'Error';
        actual = { status: isError ? 'Unknown' : result.customHealth.health, message: result.customHealth.message };
      }
      kinds.add(relative(root, folder));
      if (actual.status === expected.status && actual.message === expected.message) {
        passed++;
        if (verbose) console.log(`PASS ${label}`);
      } else {
        failed++;
        console.log(`FAIL ${label}\n  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}`);
      }
    }
  }
  checker.close();
  console.log(
    `\n${kinds.size} kinds, ${passed + failed} cases run: ${passed} matched Argo CD, ${failed} did not; ` +
      `${unreadable} inputs unreadable by the yaml package, ${skipped} skipped (input missing)`,
  );
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main();
