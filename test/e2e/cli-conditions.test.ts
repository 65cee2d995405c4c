/**
 * Conditions from checks end to end: phaselog started with an http check in phaselog.yaml runs it
 * on its workers against a local server the test flips between 200 and 503; `status <phase>` lists
 * the condition with its source, `gate --condition` passes and fails on it (exit 0/1), `gate --wait`
 * returns 0 once the condition has held long enough and 1 at its timeout, and a token restricted
 * to one namespace sees only the conditions of that namespace's phases.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPhaselog, type RunningPhaselog } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { cliUtilsInventory, namespaceObject, readyDeployment, ref, service } from '../../src/demo/objects.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let database: TestDatabase;
let phaselog: RunningPhaselog;
let url: string;
let healthy = true;
/** Arrival times of /slow requests still waiting for an answer. */
const hanging = new Set<number>();
let server: Server;
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-conditions-'));

async function graphql<T>(query: string, token?: string): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { data: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = runPhaselog(args, cleanEnv({ PHASELOG_URL: url, ...env }));
  const code = await exitCodeWithin(proc, 60_000);
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

const HEALTH = '{ phase(cluster: "test", namespace: "shop", name: "release") { conditions { type source status } } }';
const healthOf = async () =>
  (await graphql<{ phase: { conditions: { type: string; status: string }[] } | null }>(HEALTH)).phase?.conditions.find(
    (c) => c.type === 'health',
  )?.status;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/slow')) {
      // Never answers; remembered while the check waits on it.
      const since = Date.now();
      hanging.add(since);
      req.socket.once('close', () => hanging.delete(since));
      return;
    }
    res.writeHead(healthy ? 200 : 503).end(healthy ? 'ok' : 'down');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  em = await startEmulator({ port: 0 });
  em.apply([
    namespaceObject('shop'),
    namespaceObject('other'),
    readyDeployment('shop', 'web'),
    service('shop', 'web'),
    readyDeployment('other', 'web'),
    cliUtilsInventory('shop', 'release', [ref('Deployment', 'shop', 'web'), ref('Service', 'shop', 'web')]),
    cliUtilsInventory('other', 'elsewhere', [ref('Deployment', 'other', 'web')]),
  ]);
  writeFileSync(
    path.join(dir, 'phaselog.yaml'),
    [
      'clusters:',
      '  - name: test',
      `    server: ${em.url}`,
      'checks:',
      '  - name: health',
      '    interval: 500ms',
      '    timeout: 2s',
      '    http:',
      `      url: http://127.0.0.1:${port}/{{ namespace }}/{{ name }}/healthz`,
      '      bodyContains: ok',
      '  - name: slow',
      '    interval: 500ms',
      '    timeout: 3s',
      '    select: { namespaces: [other] }',
      '    http:',
      `      url: http://127.0.0.1:${port}/slow`,
      '',
    ].join('\n'),
  );
  database = await createTestDatabase('conditions');
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_PORT: '0',
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_SNAPSHOT_INTERVAL: '300ms',
      PHASELOG_DEMO: 'false',
      PHASELOG_REDIS_PREFIX: uniquePrefix('conditions'),
    },
    dir,
  );
  phaselog = await startPhaselog(config, pino({ level: 'silent' }));
  url = `${phaselog.url}/graphql`;
  await waitFor(async () => (await healthOf()) === 'True', {
    timeoutMs: 30_000,
    intervalMs: 200,
    what: 'the health condition to be recorded True',
  });
}, 90_000);

afterAll(async () => {
  await phaselog?.close();
  await em?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('conditions from checks', () => {
  it('lists the condition with its source in status <phase>, and gates on it', async () => {
    const status = await cli(['status', 'release']);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/\nCONDITION\s+SOURCE\s+STATUS\s+SINCE\s+MESSAGE\n/);
    expect(status.stdout).toMatch(/\nReady\s+derived\s+True\s+/);
    expect(status.stdout).toMatch(
      /\nhealth\s+http\s+True\s+.*Succeeded: GET http:\/\/127\.0\.0\.1:\d+\/shop\/release\/healthz answered 200/,
    );

    await waitFor(
      async () => (await cli(['gate', 'release', '--for', '1s', '--condition', 'health=True'])).code === 0,
      { timeoutMs: 20_000, intervalMs: 300, what: 'the gate to pass' },
    );
    const passed = await cli(['gate', 'release', '--for', '1s', '--condition', 'health=True', '-o', 'json']);
    expect(passed.code).toBe(0);
    expect(JSON.parse(passed.stdout)).toMatchObject({
      passed: true,
      reason: 'HELD',
      conditions: [{ type: 'health', wanted: 'True', status: 'True', outcome: 'HELD' }],
    });
    const wrong = await cli(['gate', 'release', '--for', '1s', '--condition', 'health=False']);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/condition health=False: DIFFERENT_STATUS: condition health is True, not False/);
    const missing = await cli(['gate', 'release', '--for', '1s', '--condition', 'smoke=True']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/condition smoke is not recorded/);
    expect((await cli(['status', '--condition', 'health=True', '-n', 'shop', '-o', 'name'])).stdout).toBe(
      'test/shop/release\n',
    );
    expect((await cli(['status', '--condition', 'health=False', '-o', 'name'])).stdout).toBe('');
    expect((await cli(['status', '--condition', 'health'])).code).toBe(2);
    const bad = await cli(['gate', 'release', '--for', '1s', '--condition', 'health=yes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected type=True\|False\|Unknown\[:window\]/);
  });

  it('gate --wait gives up with exit 1 while the condition is False, and returns 0 once it has held its window', async () => {
    healthy = false;
    await waitFor(async () => (await healthOf()) === 'False', {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: 'the health condition to turn False',
    });
    const timedOut = await cli([
      'gate',
      'release',
      '--for',
      '1s',
      '--condition',
      'health=True',
      '--wait',
      '--timeout',
      '2s',
    ]);
    expect(timedOut.code).toBe(1);
    expect(timedOut.stdout).toMatch(/timed out after 2s/);

    const waiting = cli([
      'gate',
      'release',
      '--for',
      '1s',
      '--condition',
      'health=True:3s',
      '--wait',
      '--timeout',
      '40s',
    ]);
    healthy = true;
    const passed = await waiting;
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(/^PASS /);
    // The change log has the transitions, condition-scoped and typed.
    const log = await graphql<{
      statusChanges: { edges: { node: { scope: string; conditionType: string; toStatus: string } }[] };
    }>(
      '{ statusChanges(filter: { scopes: [condition], conditionTypes: ["health"], namespace: "shop" }) { edges { node { scope conditionType toStatus } } } }',
    );
    expect(log.statusChanges.edges.map((e) => e.node.toStatus)).toEqual(['True', 'False', 'True']);
    const history = await cli(['history', 'release', '--all']);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(
      /condition health\s+True\s+False\s+UnexpectedStatus: GET http:\/\/127\.0\.0\.1:\d+\/shop\/release\/healthz answered 503/,
    );
  });

  it('records a check against a server that never answers as Unknown(Timeout), while snapshots go on on schedule', async () => {
    const SLOW =
      '{ phase(cluster: "test", namespace: "other", name: "elsewhere") { conditions { type status reason } } clusters { name lastGoodReadAt } }';
    const read = () =>
      graphql<{
        phase: { conditions: { type: string; status: string; reason: string }[] };
        clusters: { lastGoodReadAt: string }[];
      }>(SLOW);
    await waitFor(
      async () => (await read()).phase?.conditions.some((c) => c.type === 'slow' && c.reason === 'Timeout'),
      { timeoutMs: 20_000, intervalMs: 200, what: 'the slow condition to be Unknown(Timeout)' },
    );
    expect((await read()).phase.conditions.find((c) => c.type === 'slow')).toEqual({
      type: 'slow',
      status: 'Unknown',
      reason: 'Timeout',
    });
    // A snapshot completes while a check request still hangs: the check does not hold snapshots up.
    await waitFor(
      async () => {
        const lastGoodRead = Date.parse((await read()).clusters[0]?.lastGoodReadAt ?? '');
        return [...hanging].some((since) => lastGoodRead > since);
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'a snapshot recorded while a check request hangs' },
    );
  });

  it('shows a namespace-restricted token the conditions of its own phases only', async () => {
    const admin = (
      await cli(['token', 'create', 'cond-admin', '--admin'], { DATABASE_URL: database.url })
    ).stdout.split('\n')[0] as string;
    const created = await cli(['token', 'create', 'cond-other', '--namespace', 'other'], { PHASELOG_TOKEN: admin });
    expect(created.code).toBe(0);
    const other = created.stdout.split('\n')[0] as string;
    const seen = await graphql<{
      phase: unknown;
      phases: { edges: { node: { name: string; conditions: { type: string }[] } }[] };
      statusChanges: { edges: { node: { phase: { namespace: string } } }[] };
    }>(
      `
        {
          phase(cluster: "test", namespace: "shop", name: "release") {
            id
          }
          phases(filter: { conditions: [{ type: "health", status: "True" }] }) {
            edges {
              node {
                name
                conditions {
                  type
                }
              }
            }
          }
          statusChanges(filter: { scopes: [condition] }) {
            edges {
              node {
                phase {
                  namespace
                }
              }
            }
          }
        }
      `,
      other,
    );
    expect(seen.phase).toBeNull();
    expect(seen.phases.edges.map((e) => e.node.name)).toEqual(['elsewhere']);
    expect(seen.phases.edges[0]?.node.conditions.map((c) => c.type)).toContain('health');
    expect(seen.statusChanges.edges.length).toBeGreaterThan(0);
    expect(new Set(seen.statusChanges.edges.map((e) => e.node.phase.namespace))).toEqual(new Set(['other']));
  });
});
