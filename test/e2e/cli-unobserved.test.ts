/**
 * `phaselog gate` on a cluster nobody reads (issue #17, item 2), as a user meets it: phaselog reads
 * an emulated cluster, then only its API runs (every worker gone), then it restarts with another
 * cluster list. The gate must fail (exit 1) once the cluster is unobserved, and on a retired one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPhaselog, type RunningPhaselog } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { shopRelease } from '../helpers/demo-cluster.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let database: TestDatabase;
let phaselog: RunningPhaselog | undefined;
let url: string;
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-cli-unobserved-'));
const prefix = uniquePrefix('cli-unobserved');

/** Starts phaselog in `role` reading the clusters named (each the same emulator). */
async function start(role: 'all' | 'api', clusters: string[]): Promise<void> {
  const file = path.join(dir, `phaselog-${clusters.join('-')}.yaml`);
  writeFileSync(file, `clusters:\n${clusters.map((name) => `  - name: ${name}\n    server: ${em.url}\n`).join('')}`);
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_PORT: '0',
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_CONFIG: file,
      PHASELOG_SNAPSHOT_INTERVAL: '300ms',
      PHASELOG_DEMO: 'false',
      PHASELOG_REDIS_PREFIX: prefix,
      PHASELOG_ROLE: role,
    },
    dir,
  );
  phaselog = await startPhaselog(config, pino({ level: 'silent' }));
  url = `${phaselog.url}/graphql`;
}

async function cli(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = runPhaselog(args, cleanEnv({ PHASELOG_URL: url }));
  const code = await exitCodeWithin(proc, 30_000);
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

beforeAll(async () => {
  em = await startEmulator({ port: 0 });
  em.apply(shopRelease());
  database = await createTestDatabase('cli_unobserved');
}, 60_000);

afterAll(async () => {
  await phaselog?.close();
  await em?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('phaselog gate on a cluster nobody reads', () => {
  it('passes while the cluster is read, and fails (exit 1) once only the API runs', async () => {
    await start('all', ['test']);
    await waitFor(async () => (await cli(['gate', 'test/shop/release', '--for', '1s'])).code === 0, {
      timeoutMs: 30_000,
      intervalMs: 300,
      what: 'the gate to pass',
    });

    await phaselog?.close();
    await start('api', ['test']);
    await waitFor(async () => (await cli(['gate', 'test/shop/release', '--for', '1s'])).code !== 0, {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: 'the gate to fail',
    });
    const gate = await cli(['gate', 'test/shop/release', '--for', '1s']);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toMatch(
      /^FAIL {2}test\/shop\/release: cluster test is unobserved: no snapshot of it completed since /,
    );
    const status = await cli(['status']);
    expect(status.stdout).toMatch(/shop\/release\s+test\s+Current \(unobserved\)/);
    const clusters = await cli(['clusters']);
    expect(clusters.stdout).toMatch(/^test\s+UNOBSERVED\s+-\s+/m);
  }, 120_000);

  it('fails (exit 1) on a cluster a restart with another cluster list retired', async () => {
    await phaselog?.close();
    await start('all', ['other']);
    const gate = await cli(['gate', 'test/shop/release', '--for', '1s']);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toMatch(/cluster test is retired/);
    const clusters = await cli(['clusters']);
    expect(clusters.stdout).toMatch(/^test\s+RETIRED\s+/m);
    const status = await cli(['status']);
    expect(status.stdout).toMatch(/shop\/release\s+test\s+Current \(retired\)/);
  }, 120_000);
});
