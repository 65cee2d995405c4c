/**
 * Every `phaselog` command line the README shows, run as a reader would paste it (through bash, pipes
 * included) against a running demo: each exits as documented and prints output of the promised shape.
 * A README example that stops working fails here, not in a user's terminal. The GraphQL examples run
 * too, with the variables the README tells the reader to give.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { cleanEnv, runPhaselog, freePort } from '../helpers/process.ts';
import type { PhaselogProcess } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import type { TestDatabase } from '../helpers/services.ts';

const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

/** Lines of ```sh blocks that run the phaselog CLI against a server (not the process roles). */
function cliExamples(): string[] {
  const lines: string[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of (block[1] as string).split('\n')) {
      if (!/(^|\s|<\()npx phaselog /.test(line)) continue;
      const sub = /npx phaselog (\S+)/.exec(line)?.[1] ?? '';
      // Servers are started by the test itself; token examples need a database of their own.
      if (['start', 'api', 'worker', 'migrate', 'token'].includes(sub)) continue;
      if (sub === 'emulator' && !/npx phaselog emulator faults?\s/.test(line)) continue;
      lines.push(line);
    }
  }
  return lines;
}

/** The command without its trailing comment (`  # ...`). */
const command = (line: string) => line.replace(/\s+#\s.*$/, '').trim();

const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-readme-'));
const shims = path.join(dir, 'bin');
let database: TestDatabase;
let server: PhaselogProcess;
let emulator: PhaselogProcess;
let url: string;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a README line in bash, `npx phaselog` being this checkout's CLI; a watch is stopped with Ctrl-C. */
function runLine(line: string, stopAfterMs?: number): Promise<Outcome> {
  const child = spawn('bash', ['-c', command(line)], {
    cwd: dir,
    env: cleanEnv({ PATH: `${shims}:${process.env.PATH ?? ''}`, PHASELOG_URL: url }),
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer =
    stopAfterMs === undefined
      ? undefined
      : setTimeout(() => process.kill(-(child.pid as number), 'SIGINT'), stopAfterMs);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

beforeAll(async () => {
  // `npx phaselog` in the README runs this checkout's bin (bin/phaselog.mjs); the shim runs the same file.
  mkdirSync(shims);
  const npx = path.join(shims, 'npx');
  writeFileSync(
    npx,
    `#!/usr/bin/env bash\n[ "$1" = phaselog ] || { echo "README example uses npx for something else: $*" >&2; exit 127; }\nshift\nexec "${process.execPath}" "${path.join(PROJECT_ROOT, 'bin/phaselog.mjs')}" "$@"\n`,
  );
  chmodSync(npx, 0o755);
  // The emulator the fault examples talk to, started as the README starts it (in the reader's
  // directory, so ./emulator.control.json is where `emulator fault` looks), on free ports.
  emulator = runPhaselog(
    [
      'emulator',
      '--cluster',
      'staging',
      '--cluster',
      'prod',
      '--port',
      '0',
      '--kubeconfig',
      path.join(dir, 'emulator.kubeconfig'),
    ],
    cleanEnv(),
  );
  await waitFor(() => existsSync(path.join(dir, 'emulator.control.json')), {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: 'the emulator to write its control file',
  });
  database = await createTestDatabase('readme');
  const port = await freePort();
  server = runPhaselog(
    ['start'],
    cleanEnv({
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: uniquePrefix('readme'),
      PHASELOG_STATE_DIR: path.join(dir, '.phaselog'),
      PHASELOG_PORT: String(port),
      PHASELOG_DEMO: 'true',
    }),
  );
  await server.waitForLog((l) => l.msg === 'phaselog API listening', 90_000);
  url = `http://127.0.0.1:${port}/graphql`;
  // The demo's phases, each with a status, and a first manifest change to diff.
  await waitFor(
    async () => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ phases { edges { node { status } } } }' }),
      });
      const body = (await res.json()) as { data?: { phases: { edges: { node: { status: string | null } }[] } } };
      const phases = body.data?.phases.edges ?? [];
      return phases.length === 9 && phases.every((e) => e.node.status !== null);
    },
    { timeoutMs: 60_000, intervalMs: 500, what: "the demo's nine phases to be recorded" },
  );
}, 120_000);

afterAll(() => {
  server?.child.kill('SIGKILL');
  emulator?.child.kill('SIGKILL');
  void database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('README examples', () => {
  const examples = cliExamples();

  it('has CLI examples to run, each naming a command the CLI has', () => {
    expect(examples.length).toBeGreaterThanOrEqual(20);
  });

  it.each(examples)(
    '%s',
    async (line) => {
      const text = command(line);
      const watch = /\s(-w|--watch)(\s|$)/.test(text);
      const { code, stdout, stderr } = await runLine(line, watch ? 4000 : undefined);
      const context = `\n$ ${text}\nexit ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`;
      // gate's outcome depends on the demo's moment: 0 (passed) and 1 (not held) are both documented.
      if (/ gate /.test(text)) expect([0, 1], context).toContain(code);
      else expect(code, context).toBe(0);

      if (/-o json/.test(text)) {
        const lines = stdout.trim().split('\n');
        // One document, or NDJSON when watching.
        if (watch) for (const l of lines) expect(() => JSON.parse(l), context).not.toThrow();
        else expect(() => JSON.parse(stdout), context).not.toThrow();
        if (!watch && / (status|history|clusters)\b/.test(text) && !/status \S+\/\S+/.test(text))
          expect(JSON.parse(stdout), context).toMatchObject({ kind: 'List' });
      } else if (/-o yaml/.test(text)) expect(() => parseYaml(stdout), context).not.toThrow();
      else if (/-o name/.test(text))
        for (const l of stdout.split('\n').filter(Boolean))
          expect(l, context).toMatch(/^[\w.-]+\/([\w.-]+\/)?[\w.-]+$/);
      else if (/ gate /.test(text)) expect(stdout, context).toMatch(/^(PASS|FAIL) {2}(plan )?\S+: /);
      else if (/ plan status /.test(text)) {
        // The plan's line, then its phases in order, a step each.
        expect(stdout, context).toMatch(/^demo-staging-rollout: \w+/);
        expect(stdout, context).toMatch(/^STEP +PHASE +STATUS/m);
        expect(
          stdout
            .trim()
            .split('\n')
            .filter((l) => /^\d+ +demo-staging\//.test(l)),
          context,
        ).toHaveLength(4);
      } else if (/ emulator fault /.test(text)) expect(stdout + stderr, context).toMatch(/prod/);
      else if (/ emulator faults/.test(text)) expect(stdout, context).toMatch(/^ID\s+CLUSTER\s+FAULT\n/);
      else if (/ version/.test(text)) expect(stdout, context).toMatch(/^Client Version: .*\nServer Version: /);
      else if (/ report .*--out (\S+)/.test(text)) {
        const out = path.join(dir, /--out (\S+)/.exec(text)?.[1] as string);
        expect(existsSync(out), context).toBe(true);
        expect(stderr, context).toMatch(/^wrote html report on 9 phases/);
      } else if (/ manifest .*--diff/.test(text)) expect(stdout, context).toMatch(/entries/);
      else if (/completion/.test(text)) expect(stdout + stderr, context).toBe('');
      else if (stdout === '' && / notifications/.test(text))
        expect(stderr, context).toMatch(/^no notification deliveries found( matching the filter)?\n$/);
      else if (/ -o detail/.test(text))
        expect(stdout, context).toMatch(/^# \S+: \w+ at \S+ \(\d+\/\d+ Current\)\n---\n# /);
      else if (stdout === '' && / status /.test(text)) {
        // A filter or a moment that matches nothing right now (the demo just started) says so.
        expect(stderr, context).toMatch(/^no phase(s found| had a status at \S+)\n$/);
      } else {
        // A table: a header row of capitals, then rows.
        expect(stdout, context).toMatch(/^[A-Z][A-Z ]+[A-Z]\n/);
        expect(stdout.trim().split('\n').length, context).toBeGreaterThan(1);
      }
      expect(stdout + stderr, context).not.toContain('\x1b[');
    },
    180_000,
  );

  it('runs the GraphQL examples with the variables the README says to give', async () => {
    const block = /```graphql\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('### Try it')))?.[1] as string;
    const operations = block.split(/\n\s*\n/).filter((op) => !op.trim().startsWith('subscription'));
    expect(operations.length).toBe(2);
    const now = Date.now();
    for (const query of operations) {
      const variables = query.includes('$from')
        ? { from: new Date(now - 3_600_000).toISOString(), at: new Date(now - 5_000).toISOString() }
        : {};
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as {
        data?: {
          phases?: { edges: unknown[] };
          phase?: { history: { edges: unknown[] }; statusAt: { status: string } | null };
        };
        errors?: unknown;
      };
      expect(body.errors, query).toBeUndefined();
      if (body.data?.phases) expect(body.data.phases.edges).toHaveLength(9);
      else {
        expect(body.data?.phase?.history.edges.length).toBeGreaterThan(0);
        expect(body.data?.phase?.statusAt?.status).toMatch(/^(Current|InProgress|Failed)$/);
      }
    }
  });
});
