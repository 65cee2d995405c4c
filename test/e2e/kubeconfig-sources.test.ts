/**
 * Where `phaselog start` finds its clusters, tried the way a new user tries it: a KUBECONFIG list
 * with a file that does not exist is read like kubectl reads it, a kubeconfig that cannot be used
 * stops the start with its name, and the demo appears only where no cluster source exists at all,
 * saying loudly that it is the demo.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let db: TestDatabase;
let dir: string;
const running: PhaselogProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'phaselog-kubeconfig-sources-'));
  em = await startEmulator({ port: 0, clusterName: 'from-kubeconfig' });
  db = await createTestDatabase('kubeconfig_sources');
}, 60_000);

afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await em?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A user's environment: an empty home (no ~/.kube/config), not in a pod, plus `extra`. */
function userEnv(extra: Record<string, string>): Record<string, string> {
  const home = mkdtempSync(path.join(dir, 'home-'));
  return cleanEnv({
    HOME: home,
    DATABASE_URL: db.url,
    REDIS_URL: testRedisUrl(),
    PHASELOG_REDIS_PREFIX: uniquePrefix('kubeconfig-sources'),
    PHASELOG_PORT: '0',
    PHASELOG_STATE_DIR: mkdtempSync(path.join(dir, 'state-')),
    ...extra,
  });
}

function start(env: Record<string, string>): PhaselogProcess {
  const proc = runPhaselog(['start'], env);
  running.push(proc);
  return proc;
}

async function clusterNames(url: string): Promise<string[]> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ clusters { name reachable } }' }),
  });
  const answer = (await res.json()) as { data?: { clusters: Array<{ name: string; reachable: boolean | null }> } };
  return (answer.data?.clusters ?? []).filter((c) => c.reachable === true).map((c) => c.name);
}

describe('phaselog start and its cluster sources', () => {
  it('KUBECONFIG=missing:good reads the good file (kubectl skips missing files), not the demo', async () => {
    const good = path.join(dir, 'good.kubeconfig');
    await em.writeKubeconfig(good);
    const proc = start(userEnv({ KUBECONFIG: [path.join(dir, 'does-not-exist'), good].join(path.delimiter) }));
    const skipped = await proc.waitForLog(
      (l) => l.msg === 'kubeconfig files that do not exist were skipped, as kubectl skips them',
      60_000,
    );
    expect(skipped.missing).toEqual([path.join(dir, 'does-not-exist')]);
    const listening = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 60_000);
    await waitFor(async () => (await clusterNames(String(listening.graphql))).includes('from-kubeconfig'), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: 'the kubeconfig cluster to be recorded as reachable',
    });
    expect(await clusterNames(String(listening.graphql))).toEqual(['from-kubeconfig']);
    expect(proc.stdout()).not.toContain('DEMO MODE');
    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 15_000)).toBe(0);
  }, 120_000);

  it.each([
    [
      'a KUBECONFIG file that is not YAML',
      () => ({ KUBECONFIG: writeFile('broken.kubeconfig', 'clusters: [\n') }),
      /cannot parse kubeconfig .*broken\.kubeconfig/,
    ],
    [
      'a KUBECONFIG that is a folder',
      () => ({ KUBECONFIG: makeFolder('a-folder') }),
      /cannot read kubeconfig .*a-folder: EISDIR/,
    ],
    [
      'a KUBECONFIG list of which no file exists',
      () => ({ KUBECONFIG: [path.join(dir, 'gone-1'), path.join(dir, 'gone-2')].join(path.delimiter) }),
      /none of the kubeconfig files exists: .*gone-1, .*gone-2/,
    ],
    [
      'a broken ~/.kube/config',
      () => ({ HOME: homeWithConfig('apiVersion: v1\nclusters:\n- name: x\n  cluster: {}\n') }),
      /cannot parse kubeconfig .*\.kube\/config/,
    ],
  ])(
    '%s stops the start with one line naming it, never the demo',
    async (_what, env, message) => {
      const proc = start(userEnv(env()));
      expect(await exitCodeWithin(proc, 60_000)).toBe(1);
      expect(proc.stderr()).toMatch(message);
      expect(proc.stderr()).not.toMatch(/\n\s+at /);
      expect(proc.stdout()).not.toContain('DEMO MODE');
    },
    90_000,
  );

  it('with no cluster source at all, the demo starts and says so loudly', async () => {
    const proc = start(userEnv({}));
    const line = await proc.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('DEMO MODE'), 60_000);
    expect(line.level).toBe(40); // warn: it stands out in a log of info lines
    expect(line.msg).toContain('not a real cluster');
    proc.child.kill('SIGTERM');
    await exitCodeWithin(proc, 15_000);
  }, 90_000);
});

function writeFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

function makeFolder(name: string): string {
  const folder = path.join(dir, name);
  mkdirSync(folder, { recursive: true });
  return folder;
}

function homeWithConfig(text: string): string {
  const home = mkdtempSync(path.join(dir, 'home-with-config-'));
  mkdirSync(path.join(home, '.kube'));
  writeFileSync(path.join(home, '.kube', 'config'), text);
  return home;
}
