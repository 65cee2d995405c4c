/**
 * A check's secrets stay out of everything a condition reaches. An `http` check whose header value
 * (read from a file) is not a valid header value, an `http` check whose URL carries credentials
 * and a key in its query, a `webhook` check likewise, and one against a closed port: each gives
 * an Unknown condition whose message names what went wrong, and none of the secret strings is in
 * the API's answer to an anonymous reader, in any table of the database, in the logs, or in the
 * notification a receiver gets for the condition change. Real PostgreSQL, Redis and HTTP.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSchema } from '../../../src/checks/config.ts';
import { readSecret } from '../../../src/config.ts';
import { notificationsConfigSchema } from '../../../src/notify/config.ts';
import { findFreePort } from '../../../src/runtime/free-port.ts';
import { waitFor } from '../../../src/runtime/wait.ts';
import { runCheckOnCluster, type RunCheckDeps } from '../../../src/services/run-check.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createConditionStore } from '../../../src/store/condition-store.ts';
import { createHistoryReader } from '../../../src/store/read-history.ts';
import { createPhaseReader } from '../../../src/store/read-phases.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { startNotificationWorker, type RunningNotificationWorker } from '../../../workers/notification-worker.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';
import { testRedisUrl, uniquePrefix } from '../../helpers/services.ts';
import { gqlData, startTestApi, type TestApi } from '../graphql/helpers.ts';
import { applyFleet } from '../snapshot/fleet.ts';
import {
  createTestDatabase,
  startEmulatedCluster,
  type EmulatedCluster,
  type TestDatabase,
} from '../snapshot/helpers.ts';

/** Every string that must never be seen outside the worker's memory. */
const HEADER_SECRET = ['Bearer hdr-secret-3f1c', 'hdr-second-line-9a7e'];
const URL_PASSWORD = 'url-password-5d2b';
const URL_KEY = 'query-key-8e4f';
const WEBHOOK_KEY = 'webhook-query-key-1c6a';
const HMAC = 'hmac-key-7b3d';
const SECRETS = [...HEADER_SECRET, URL_PASSWORD, URL_KEY, WEBHOOK_KEY, HMAC, 'someone'];
const NOTIFY_HMAC = 'notify-hmac-for-this-test';

describe("a check's secrets", () => {
  let db: TestDatabase;
  let cluster: EmulatedCluster;
  let server: Server;
  let base: string;
  let dir: string;
  let api: TestApi;
  let receiver: WebhookReceiver;
  let worker: RunningNotificationWorker;
  const logLines: string[] = [];
  const log = pino(
    { level: 'trace' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );

  beforeAll(async () => {
    db = await createTestDatabase('check_secrets');
    dir = mkdtempSync(path.join(tmpdir(), 'phaselog-check-secrets-'));
    // A secret with an internal newline: readSecret trims the ends only, so it reaches fetch as is.
    writeFileSync(path.join(dir, 'token'), `${HEADER_SECRET.join('\n')}\n`);
    writeFileSync(path.join(dir, 'hmac'), `${NOTIFY_HMAC}\n`);
    cluster = await startEmulatedCluster('secrets');
    applyFleet(cluster.emulator, { phases: 1, resourcesPerPhase: 1, phasesPerNamespace: 1 });
    server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const at = new Date();
    await createRecorder(createSnapshotStore(db.workerDb)).record(
      await observeCluster(cluster.client, { now: () => at }),
      { tickAt: at },
    );
    api = await startTestApi({ db: db.db, anonymousRead: true, log });
    receiver = await startWebhookReceiver(NOTIFY_HMAC);
    worker = await startNotificationWorker({
      db: db.workerDb,
      redisUrl: testRedisUrl(),
      log,
      config: notificationsConfigSchema.parse({
        scanInterval: 200,
        routes: [
          {
            name: 'conditions',
            match: { changes: ['condition'] },
            receiver: { type: 'webhook', url: receiver.url, secretFile: 'hmac' },
          },
        ],
      }),
      baseDir: dir,
      prefix: uniquePrefix('check-secrets'),
      reconcileIntervalMs: 500,
    });
    await worker.scanNow();
  });
  afterAll(async () => {
    await worker?.close();
    await receiver?.close();
    await api?.close();
    await new Promise((resolve) => server?.close(resolve));
    await cluster?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('are in no condition message, API answer, table, log line or notification, whatever the error', async () => {
    const closedPort = await findFreePort();
    const checks = [
      {
        name: 'header',
        http: { url: `http://${base}/healthz`, headersFrom: [{ name: 'Authorization', file: 'token' }] },
      },
      { name: 'userinfo', http: { url: `http://someone:${URL_PASSWORD}@${base}/healthz?apikey=${URL_KEY}` } },
      { name: 'closed', http: { url: `http://127.0.0.1:${closedPort}/healthz?apikey=${URL_KEY}` } },
      {
        name: 'hook',
        webhook: { url: `http://someone:${URL_PASSWORD}@${base}/hook?key=${WEBHOOK_KEY}`, secretFrom: { env: 'HMAC' } },
      },
    ].map((raw) => checkSchema.parse(raw));
    const deps: RunCheckDeps = {
      phases: createPhaseReader(db.workerDb),
      history: createHistoryReader(db.workerDb),
      conditions: createConditionStore(db.workerDb),
      readSecret: (source) => readSecret(source, dir, { HMAC }),
      log,
    };
    const results = [];
    for (const check of checks) results.push(...(await runCheckOnCluster(deps, check, 'secrets', new Date())).results);

    // Each says what went wrong in phaselog's words, naming the header, not its value.
    expect(results.map((r) => [r.type, r.status, r.reason, r.message])).toEqual([
      [
        'header',
        'Unknown',
        'InvalidRequest',
        `GET http://${base}/healthz: the value of header Authorization is not a valid HTTP header value`,
      ],
      [
        'userinfo',
        'Unknown',
        'InvalidRequest',
        `GET http://${base}/healthz: the URL carries credentials (user:password@), which are never sent`,
      ],
      ['closed', 'Unknown', 'ConnectionFailed', `GET http://127.0.0.1:${closedPort}/healthz failed: ECONNREFUSED`],
      [
        'hook',
        'Unknown',
        'InvalidRequest',
        `POST http://${base}/hook: the URL carries credentials (user:password@), which are never sent`,
      ],
    ]);

    const answer = await gqlData<{
      phases: { edges: { node: { conditions: { type: string; message: string }[] } }[] };
    }>(
      api.url,
      '{ phases { edges { node { conditions { type message } conditionHistory(from: "2000-01-01T00:00:00Z") { edges { node { type message } } } } } } }',
    );
    const served = JSON.stringify(answer);
    expect(answer.phases.edges[0]?.node.conditions.map((c) => c.type)).toEqual(
      expect.arrayContaining(['header', 'userinfo', 'closed', 'hook']),
    );

    await waitFor(() => receiver.hits.length >= 4, { timeoutMs: 20_000, what: 'four condition notifications' });
    const sent = JSON.stringify(receiver.hits.map((h) => h.body));
    expect(receiver.hits.every((h) => h.signed)).toBe(true);
    expect(sent).toContain('the value of header Authorization is not a valid HTTP header value');

    const tables = await db.db.$queryRawUnsafe<{ name: string }[]>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    let stored = '';
    for (const { name } of tables)
      stored += JSON.stringify(await db.db.$queryRawUnsafe(`SELECT t::text AS row FROM "${name}" t`));
    expect(stored).toContain('is not a valid HTTP header value');

    const logged = logLines.join('');
    for (const secret of SECRETS) {
      expect(served, `API answer holds ${secret}`).not.toContain(secret);
      expect(sent, `notification holds ${secret}`).not.toContain(secret);
      expect(stored, `database holds ${secret}`).not.toContain(secret);
      expect(logged, `log holds ${secret}`).not.toContain(secret);
    }
  });
});
