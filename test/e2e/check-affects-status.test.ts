/**
 * `affectsStatus: true` end to end: phaselog with an http check whose condition may make its phase
 * Failed, against a local server the test flips. The phase's resources stay Current throughout; the
 * scheduled snapshot interval is a minute, so the phase can only change this fast because a changed
 * condition asks for a snapshot. While the check is False the phase is Failed with the check's
 * message first; True again, it is Current again; a check that cannot answer (Unknown) changes
 * nothing; a check without `affectsStatus` never changes the phase. The history has the Failed
 * interval between two Current ones.
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
import { cliUtilsInventory, namespaceObject, readyDeployment, ref } from '../../src/demo/objects.ts';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let database: TestDatabase;
let phaselog: RunningPhaselog;
let url: string;
/** What the health endpoint does: answer 200, 503, or never (the check times out). */
let mode: 'up' | 'down' | 'hang' = 'up';
let server: Server;
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-affects-'));

interface PhaseView {
  status: string;
  message: string;
  conditions: { type: string; status: string }[];
  history: { edges: { node: { status: string; message: string } }[] };
}

async function phase(name: string): Promise<PhaseView> {
  const query = `{ phase(cluster: "test", namespace: "shop", name: "${name}") { status message conditions { type status } history(from: "2020-01-01T00:00:00Z") { edges { node { status message } } } } }`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { data: { phase: PhaseView | null }; errors?: unknown[] };
  if (body.errors || body.data.phase === null) throw new Error(JSON.stringify(body));
  return body.data.phase;
}

const condition = (p: PhaseView, type: string) => p.conditions.find((c) => c.type === type)?.status;

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  // Before its first snapshot the phase does not exist yet: not yet, rather than an error.
  await waitFor(() => ok().catch(() => false), { timeoutMs, intervalMs: 100, what });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (mode === 'hang') return;
    res.writeHead(mode === 'up' ? 200 : 503).end(mode === 'up' ? 'ok' : 'down for maintenance');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  em = await startEmulator({ port: 0 });
  em.apply([
    namespaceObject('shop'),
    readyDeployment('shop', 'web'),
    readyDeployment('shop', 'api'),
    cliUtilsInventory('shop', 'release', [ref('Deployment', 'shop', 'web')]),
    cliUtilsInventory('shop', 'other', [ref('Deployment', 'shop', 'api')]),
  ]);
  writeFileSync(
    path.join(dir, 'phaselog.yaml'),
    [
      'clusters:',
      '  - name: test',
      `    server: ${em.url}`,
      'checks:',
      '  - name: health',
      '    interval: 300ms',
      '    timeout: 1s',
      '    affectsStatus: true',
      '    select: { names: [release] }',
      '    http:',
      `      url: http://127.0.0.1:${port}/{{ name }}/healthz`,
      '  - name: advisory',
      '    interval: 300ms',
      '    timeout: 1s',
      '    select: { names: [other] }',
      '    http:',
      `      url: http://127.0.0.1:${port}/{{ name }}/healthz`,
      '',
    ].join('\n'),
  );
  database = await createTestDatabase('affects_status');
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_PORT: '0',
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      // Scheduled snapshots a minute apart (and no watches): only a requested snapshot is this fast.
      PHASELOG_SNAPSHOT_INTERVAL: '60s',
      PHASELOG_SNAPSHOT_LIVE: 'false',
      PHASELOG_REDIS_PREFIX: uniquePrefix('affects'),
    },
    dir,
  );
  phaselog = await startPhaselog(config, pino({ level: 'silent' }));
  url = `${phaselog.url}/graphql`;
  // The first scheduled snapshot may be up to an interval (a minute) away.
  await until(
    'both phases Current with their conditions True',
    async () => {
      const [release, other] = await Promise.all([phase('release'), phase('other')]);
      return (
        release.status === 'Current' &&
        condition(release, 'health') === 'True' &&
        other.status === 'Current' &&
        condition(other, 'advisory') === 'True'
      );
    },
    100_000,
  );
}, 150_000);

afterAll(async () => {
  await phaselog?.close();
  await em?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a check with affectsStatus: true', () => {
  it('makes its phase Failed while False, names itself in the message, and lets it be Current again', async () => {
    mode = 'down';
    await until('release Failed by its health check', async () => (await phase('release')).status === 'Failed');
    const failed = await phase('release');
    expect(condition(failed, 'health')).toBe('False');
    expect(failed.message).toMatch(/^health is False: .*503.* \(resources: All 1 resources are Current\)$/);
    // The same server answers 503 for the other phase, whose check does not affect its status.
    const other = await phase('other');
    expect(condition(other, 'advisory')).toBe('False');
    expect(other.status).toBe('Current');

    mode = 'up';
    await until('release Current again', async () => (await phase('release')).status === 'Current');
    const statuses = (await phase('release')).history.edges.map((e) => e.node.status);
    expect(statuses.slice(0, 3)).toEqual(['Current', 'Failed', 'Current']);
  }, 60_000);

  it('leaves the phase as it is while the check cannot answer (Unknown is not an outage)', async () => {
    mode = 'hang';
    await until('the health condition Unknown', async () => condition(await phase('release'), 'health') === 'Unknown');
    // A requested snapshot has had time to run: the phase is still Current.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await phase('release')).status).toBe('Current');
    mode = 'up';
    await until('the health condition True again', async () => condition(await phase('release'), 'health') === 'True');
  }, 60_000);
});
