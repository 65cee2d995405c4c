/**
 * Connections each kind of phaselog process holds to PostgreSQL and Redis, for sizing
 * `max_connections` and `maxclients` (docs/deployment.md). Starts `phaselog api`, `worker` and
 * `all` as child processes on a scratch database (workers on the demo clusters, whose checks start
 * the check worker), uses what opens connections lazily (a subscription, a refresh, /readyz,
 * queries), then counts the process's established TCP connections to each port with `ss`.
 *
 *   node --import tsx bench/connections.ts [postgresql://postgres@127.0.0.1:5432/postgres] [redis://127.0.0.1:6379]
 *
 * PostgreSQL counts depend on load (a pool opens connections up to its size as queries overlap);
 * the figure printed is after a burst of 50 concurrent queries.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTokenInDatabase } from '../src/auth/tokens.ts';
import { PROJECT_ROOT } from '../src/runtime/paths.ts';

const adminUrl = process.argv[2] ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.argv[3] ?? 'redis://127.0.0.1:6379';
const pgPort = new URL(adminUrl).port || '5432';
const redisPort = new URL(redisUrl).port || '6379';

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(sql);
  await client.end();
}

/** Established TCP connections of `pid` to `port`. */
function connectionsTo(pid: number, port: string): number {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( dport = :${port} )`], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(`pid=${pid},`)).length;
}

function start(role: string, env: Record<string, string>): Promise<{ child: ChildProcess; url?: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(PROJECT_ROOT, 'src/cli/main.ts'), role], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  return new Promise((resolve, reject) => {
    let pending = '';
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const timer = setTimeout(() => reject(new Error(`${role} did not start`)), 90_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) {
        const line = JSON.parse(text) as { msg?: string; graphql?: string; level?: number };
        if (
          line.msg === 'phaselog API listening' ||
          line.msg === 'worker probes listening (/healthz, /readyz, /metrics)'
        ) {
          clearTimeout(timer);
          resolve({ child, ...(line.graphql ? { url: line.graphql } : {}) });
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}: ${errors}`)));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What opens the API's lazy connections: queries, a subscription, a refresh, /readyz. */
async function useApi(url: string, token: string): Promise<() => Promise<void>> {
  const post = (query: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query }),
    });
  await Promise.all(
    Array.from({ length: 50 }, () =>
      post(
        '{ phases(first: 50) { edges { node { name status since } } } statusChanges(first: 50) { edges { cursor } } }',
      ),
    ),
  );
  void post('mutation { refreshCluster(cluster: "demo-staging") { written } }').catch(() => undefined);
  await fetch(url.replace(/\/graphql$/, '/readyz'));
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  const done = new Promise<void>((resolve) =>
    client.subscribe(
      { query: 'subscription { phaseStatusChanged { seq } }' },
      { next: () => undefined, error: () => resolve(), complete: () => resolve() },
    ),
  );
  await sleep(3000);
  return async () => {
    await client.dispose();
    await Promise.race([done, sleep(1000)]);
  };
}

const name = `phaselog_bench_conn_${randomBytes(4).toString('hex')}`;
await admin(`CREATE DATABASE ${name}`);
const databaseUrl = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-bench-conn-'));
const rows: string[] = [];
try {
  const token = (await createTokenInDatabase(databaseUrl, { name: 'bench', scopes: ['admin'] })).secret;
  const scenarios: { label: string; role: string; env: Record<string, string> }[] = [
    { label: 'api', role: 'api', env: {} },
    {
      label: 'api + database.readUrl',
      role: 'api',
      env: { PHASELOG_DATABASE_READ_URL: `${databaseUrl}?application_name=replica` },
    },
    {
      label: 'worker (demo: 2 clusters, checks)',
      role: 'worker',
      env: { PHASELOG_PROBE_PORT: '0', PHASELOG_DEMO: 'true' },
    },
    { label: 'start (role all, demo)', role: 'start', env: { PHASELOG_DEMO: 'true' } },
  ];
  for (const scenario of scenarios) {
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      PHASELOG_PORT: '0',
      PHASELOG_STATE_DIR: path.join(dir, scenario.label.replace(/\W+/g, '-')),
      PHASELOG_REDIS_PREFIX: `bench-conn-${randomBytes(3).toString('hex')}`,
      PHASELOG_LOG_FORMAT: 'json',
      PHASELOG_ANONYMOUS_READ: 'false',
      ...scenario.env,
    };
    const { child, url } = await start(scenario.role, env);
    try {
      await sleep(8000);
      const idle = {
        pg: connectionsTo(child.pid as number, pgPort),
        redis: connectionsTo(child.pid as number, redisPort),
      };
      let used = idle;
      if (url) {
        const stop = await useApi(url, token);
        used = { pg: connectionsTo(child.pid as number, pgPort), redis: connectionsTo(child.pid as number, redisPort) };
        await stop();
      }
      rows.push(`| ${scenario.label} | ${idle.pg} | ${used.pg} | ${idle.redis} | ${used.redis} |`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
} finally {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
}
console.log('| process | PostgreSQL, started | PostgreSQL, after use | Redis, started | Redis, after use |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
