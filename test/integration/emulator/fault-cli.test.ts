/**
 * `phaselog emulator` as a user runs it: two clusters in one process, faults given from another
 * process with `phaselog emulator fault`, the control file's permissions, and usage errors.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { waitFor } from './helpers.ts';

let dir: string;
let kubeconfig: string;
let controlFile: string;
let child: ChildProcessWithoutNullStreams;
let out = '';
let exited: Promise<number | null>;
const urls: Record<string, string> = {};

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/emulator/main.ts', ...args],
      { cwd: process.cwd(), env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const fault = (...args: string[]): Promise<CliResult> => cli(['fault', ...args, '--control-file', controlFile]);

/** The faults in force, read from the control endpoint directly (cheaper than another CLI process). */
async function listFaults(): Promise<unknown[]> {
  const control = JSON.parse(await readFile(controlFile, 'utf8')) as { url: string; token: string };
  const res = await fetch(`${control.url}/v1/faults`, { headers: { Authorization: `Bearer ${control.token}` } });
  return ((await res.json()) as { faults: unknown[] }).faults;
}

async function status(cluster: string): Promise<number | string> {
  try {
    const res = await fetch(`${urls[cluster]}/api/v1/namespaces`, { signal: AbortSignal.timeout(5000) });
    await res.text();
    return res.status;
  } catch (e) {
    return (e as { cause?: { code?: string } }).cause?.code ?? String(e);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'phaselog-emulator-cli-'));
  kubeconfig = join(dir, 'emulator.kubeconfig');
  controlFile = join(dir, 'emulator.control.json');
  child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/emulator/main.ts',
      '--cluster',
      'staging',
      '--cluster',
      'prod',
      '--port',
      '0',
      '--kubeconfig',
      kubeconfig,
    ],
    { cwd: process.cwd() },
  );
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor('the emulator to start', () => (out.includes('Press Ctrl-C') ? true : undefined), 30_000);
  const kc = new KubeConfig();
  kc.loadFromString(await readFile(kubeconfig, 'utf8'));
  for (const c of kc.getClusters()) urls[c.name] = c.server;
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGINT');
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('phaselog emulator start', () => {
  it('serves one kubeconfig context per cluster and writes the kubeconfig and control file readable by the owner only', async () => {
    expect(Object.keys(urls).sort()).toEqual(['prod', 'staging']);
    expect(await status('prod')).toBe(200);
    expect(await status('staging')).toBe(200);
    expect((await stat(kubeconfig)).mode & 0o777).toBe(0o600);
    expect((await stat(controlFile)).mode & 0o777).toBe(0o600);
    const control = JSON.parse(await readFile(controlFile, 'utf8')) as { url: string; token: string };
    expect(control.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(control.token.length).toBeGreaterThanOrEqual(32);
    expect(out).toContain(`fault control on ${control.url}`);
    expect(out).not.toContain(control.token);
  });
});

describe('phaselog emulator fault', () => {
  it('fails only the named cluster, lists the fault, and clears it', async () => {
    const added = await fault('prod', 'status', '503', '--for', '5m');
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(added.stdout).toMatch(/^fault \d+ on prod: status 503 until \d{4}-/);
    expect(await status('prod')).toBe(503);
    expect(await status('staging')).toBe(200);
    const listed = await cli(['faults', '--control-file', controlFile]);
    expect(listed.stdout).toMatch(/^ID\s+CLUSTER\s+FAULT\n\d+\s+prod\s+status 503 until /);
    expect((await fault('prod', 'clear')).stdout).toBe('cleared the faults of prod (1 added through fault control)\n');
    expect(await status('prod')).toBe(200);
  });

  it('ends a fault given --for on its own', async () => {
    expect((await fault('staging', 'reset', '--for', '500ms')).code).toBe(0);
    expect(await status('staging')).toBe('ECONNRESET');
    // Poll with a deadline: the fault ends inside the emulator process, out of the test's sight.
    const deadline = Date.now() + 10_000;
    let last: number | string = '';
    while (Date.now() < deadline && (last = await status('staging')) !== 200)
      await new Promise((r) => setTimeout(r, 50));
    expect(last).toBe(200);
    expect((await cli(['faults', 'staging', '--control-file', controlFile])).stdout).toBe('no faults on staging\n');
  });

  it('refuses connections to a cluster until cleared', async () => {
    expect((await fault('prod', 'refuse')).code).toBe(0);
    expect(await status('prod')).toBe('ECONNREFUSED');
    expect(await status('staging')).toBe(200);
    expect((await fault('prod', 'clear')).code).toBe(0);
    expect(await status('prod')).toBe(200);
  });

  it.each([
    [['prod', 'latency', '2'], 'latency must be a duration with a unit'],
    [['prod', 'latency'], 'latency needs a duration'],
    [['prod', 'status', '99'], 'between 400 and 599'],
    [['prod', 'status', '600'], 'between 400 and 599'],
    [['prod', 'hang', '--for', '30'], '--for must be a duration with a unit'],
    [['prod', 'sneeze'], 'unknown fault "sneeze"'],
    [['qa', 'hang'], 'unknown cluster "qa"; this emulator serves: staging, prod'],
    [['prod', 'hang', '--times', '0'], '--times must be a positive integer'],
    [['prod', 'hang', '--colour', 'red'], "unknown option '--colour'"],
  ])('exits 2 for %j, naming the mistake, and changes nothing', async (args, message) => {
    const result = await fault(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(await listFaults()).toEqual([]);
    expect(await status('prod')).toBe(200);
  });

  it('exits 1 with the control endpoint’s 401 when the token is wrong, and applies nothing', async () => {
    const control = JSON.parse(await readFile(controlFile, 'utf8')) as { url: string };
    const result = await cli(['fault', 'prod', 'hang', '--control-url', control.url], {
      PHASELOG_EMULATOR_CONTROL_TOKEN: 'not-the-token-at-all',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('HTTP 401');
    expect(await status('prod')).toBe(200);
  });

  it('exits 2 saying how to point at the emulator when there is no control file', async () => {
    const result = await cli(['fault', 'prod', 'hang', '--control-file', join(dir, 'missing.json')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is `phaselog emulator` running?');
  });
});

describe('stopping', () => {
  it('exits 0 on SIGINT and removes the control file', async () => {
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect(stat(controlFile)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
