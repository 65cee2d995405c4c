/**
 * DNS rebinding against `/metrics`, on phaselog as `npm start` runs it (API and workers in one
 * process, bound to loopback, anonymous reads on): a page of `attacker.example` re-pointed at
 * 127.0.0.1 asks with `Host: attacker.example:<port>` and gets 421 and no series, while a
 * Prometheus scraping `127.0.0.1:<port>` or `localhost:<port>` gets every phase's status. A worker
 * serving its probes on all interfaces with `api.allowedHosts` set answers its Service's name and a
 * pod address (Kubernetes service discovery scrapes pods by address), not other names.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPhaselog, type RunningPhaselog } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { cliUtilsInventory, namespaceObject, readyDeployment, ref } from '../../src/demo/objects.ts';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { findFreePort } from '../../src/runtime/free-port.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let database: TestDatabase;
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-metrics-host-'));

/** GET /metrics on 127.0.0.1:`port` with the given `Host`, as a rebound page or a scraper sends it. */
function scrape(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const PHASE_SERIES = /phaselog_phase_status\{[^}]*phase="release"/;

beforeAll(async () => {
  em = await startEmulator({ port: 0 });
  em.apply([
    namespaceObject('shop'),
    readyDeployment('shop', 'web'),
    cliUtilsInventory('shop', 'release', [ref('Deployment', 'shop', 'web')]),
  ]);
  writeFileSync(
    path.join(dir, 'phaselog.yaml'),
    ['clusters:', '  - name: test', `    server: ${em.url}`, ''].join('\n'),
  );
  database = await createTestDatabase('metrics_host');
}, 60_000);

afterAll(async () => {
  await em?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

function start(env: Record<string, string>): Promise<RunningPhaselog> {
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_SNAPSHOT_INTERVAL: '300ms',
      PHASELOG_DEMO: 'false',
      PHASELOG_REDIS_PREFIX: uniquePrefix('metrics-host'),
      ...env,
    },
    dir,
  );
  return startPhaselog(config, pino({ level: 'silent' }));
}

describe('/metrics in the default configuration (loopback bind)', () => {
  let phaselog: RunningPhaselog;
  let port: number;

  beforeAll(async () => {
    phaselog = await start({ PHASELOG_PORT: '0' });
    port = Number(new URL(phaselog.url ?? '').port);
    await waitFor(async () => PHASE_SERIES.test((await scrape(port, `127.0.0.1:${port}`)).body), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'the phase in /metrics',
    });
  }, 60_000);
  afterAll(async () => {
    await phaselog?.close();
  });

  it.each(['attacker.example', 'attacker.example:PORT', 'localhost.attacker.example:PORT', '10.1.2.3.nip.io:PORT'])(
    'refuses Host: %s with 421 and no series',
    async (host) => {
      const answer = await scrape(port, host.replace('PORT', String(port)));
      expect(answer.status).toBe(421);
      expect(answer.body).toContain('HOST_NOT_ALLOWED');
      expect(answer.body).not.toContain('phaselog_');
      expect(answer.body).not.toContain('release');
    },
  );

  it.each(['127.0.0.1:PORT', 'localhost:PORT', '[::1]:PORT'])(
    "answers a scraper's Host: %s with every phase series",
    async (host) => {
      const answer = await scrape(port, host.replace('PORT', String(port)));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatch(PHASE_SERIES);
    },
  );
});

describe('/metrics of a worker on all interfaces with api.allowedHosts set', () => {
  let phaselog: RunningPhaselog;
  let probePort: number;

  beforeAll(async () => {
    probePort = await findFreePort();
    phaselog = await start({
      PHASELOG_ROLE: 'worker',
      PHASELOG_HOST: '0.0.0.0',
      PHASELOG_PROBE_PORT: String(probePort),
      PHASELOG_ALLOWED_HOSTS: 'phaselog-worker.phaselog.svc',
    });
  }, 60_000);
  afterAll(async () => {
    await phaselog?.close();
  });

  it.each([
    ['phaselog-worker.phaselog.svc:PORT', 200],
    ['10.1.2.3:PORT', 200],
    ['127.0.0.1:PORT', 200],
    ['attacker.example:PORT', 421],
  ])('Host: %s gets %i', async (host, status) => {
    const answer = await scrape(probePort, host.replace('PORT', String(probePort)));
    expect(answer.status).toBe(status);
    if (status === 200) expect(answer.body).toMatch(PHASE_SERIES);
    else expect(answer.body).not.toContain('phaselog_');
  });
});
