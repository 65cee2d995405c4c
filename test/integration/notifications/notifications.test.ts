/**
 * Transition notifications end to end in one process: change-log rows in a real PostgreSQL, the
 * notification worker on a real Redis, a local HTTP receiver checking HMAC signatures. What a user
 * notices: one signed message per transition, blips held back, flapping summed up, a failing
 * receiver retried, a refusing or redirecting one given up on, and the deliveries on record.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../../src/runtime/free-port.ts';
import { createMetrics, type Metrics } from '../../../src/metrics/registry.ts';
import { notificationsConfigSchema, type NotificationsConfig } from '../../../src/notify/config.ts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { NOTIFICATION_JOB, NOTIFICATION_QUEUE, notificationJobId } from '../../../src/queue/notification-jobs.ts';
import { createNotificationStore, type DeliveryRecord } from '../../../src/store/notification-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { FULL_ACCESS } from '../../../src/store/read-types.ts';
import { applyRetention } from '../../../src/store/retention.ts';
import { waitFor } from '../../../src/runtime/wait.ts';
import { startNotificationWorker, type RunningNotificationWorker } from '../../../workers/notification-worker.ts';
import { insertStatusChange } from '../../helpers/history-rows.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { readmeVerifier } from '../../helpers/readme-signature.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

const SECRET = 'a-test-hmac-secret-of-some-length';
const log = pino({ level: process.env.TEST_LOG ?? 'silent' });

let database: TestDatabase;
let db: Db;
/** What the notification worker gets in a worker process: the pool only, no Prisma. */
let workerDb: Db;
let dir: string;
let clusterId: number;
let running: RunningNotificationWorker | undefined;
const receivers: WebhookReceiver[] = [];
const prefix = uniquePrefix('notify');

beforeAll(async () => {
  database = await createTestDatabase('notify');
  db = createDb(database.url, { poolSize: 4 });
  workerDb = createDb(database.url, { poolSize: 4, prisma: false });
  dir = mkdtempSync(path.join(tmpdir(), 'phaselog-notify-'));
  writeFileSync(path.join(dir, 'hmac'), `${SECRET}\n`);
  clusterId = (await db.cluster.create({ data: { name: 'prod', reachable: true } })).id;
});
afterEach(async () => {
  await running?.close();
  running = undefined;
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(async () => {
  await db?.$disconnect();
  await workerDb?.$disconnect();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function phase(name: string, labels: Record<string, string> = {}): Promise<number> {
  const row = await db.phase.create({
    data: {
      clusterId,
      sourceKind: 'cli-utils',
      namespace: 'shop',
      name,
      labels,
      firstSeenAt: new Date(),
      lastSeenAt: new Date(),
    },
  });
  return row.id;
}

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(SECRET);
  receivers.push(r);
  return r;
}

function config(route: Record<string, unknown>, extra: Record<string, unknown> = {}): NotificationsConfig {
  return notificationsConfigSchema.parse({
    scanInterval: 200,
    uiBaseUrl: 'https://phaselog.example.com/',
    routes: [route],
    ...extra,
  });
}

async function start(notifications: NotificationsConfig, metrics?: Metrics): Promise<RunningNotificationWorker> {
  running = await startNotificationWorker({
    db: workerDb,
    redisUrl: testRedisUrl(),
    log,
    config: notifications,
    baseDir: dir,
    prefix,
    reconcileIntervalMs: 500,
    ...(metrics ? { metrics } : {}),
  });
  return running;
}

const store = () => createNotificationStore(db);
async function deliveries(route: string): Promise<DeliveryRecord[]> {
  return (await store().listDeliveries(FULL_ACCESS, { route }, 100)).items.reverse();
}

/** A phase transition logged `secondsAgo` before now. */
function change(phaseId: number, from: string | null, to: string | null, secondsAgo = 0, scope = 'phase') {
  return insertStatusChange(db, {
    clusterId,
    phaseId,
    scope,
    at: new Date(Date.now() - secondsAgo * 1000),
    fromStatus: from,
    toStatus: to,
    ...(scope === 'resource' ? { resourceKey: 'apps/Deployment/shop/x' } : {}),
    message: `${from} to ${to}`,
  });
}

describe('notifications', () => {
  it('sends exactly one signed webhook per matching transition, from the route start on, linking to the phase page', async () => {
    const r = await receiver();
    const id = await phase('api', { team: 'web' });
    const other = await phase('db', { team: 'data' });
    // Before the route exists: not notified (a new route tells what happens from now on).
    await change(id, 'Current', 'InProgress', 5);
    const metrics = createMetrics();
    const worker = await start(
      config({
        name: 'web-hook',
        match: { labels: { team: 'web' } },
        receiver: { type: 'webhook', url: r.url, secretFile: 'hmac' },
      }),
      metrics,
    );
    const seqs = [
      await change(id, 'InProgress', 'Current'),
      await change(id, 'Current', 'Failed'),
      await change(id, 'Failed', 'Current'),
    ];
    // Not matching: another team's phase, and a resource change (routes match phase changes by default).
    await change(other, 'Current', 'Failed');
    await change(id, 'Current', 'Failed', 0, 'resource');
    await waitFor(async () => (await deliveries('web-hook')).filter((d) => d.status === 'delivered').length === 3, {
      timeoutMs: 20_000,
      what: 'three deliveries',
    });
    // More scans change nothing.
    await worker.scanNow();
    await worker.scanNow();

    // Sent concurrently: they may arrive in any order (each carries its seq).
    expect(r.hits.map((h) => h.key).sort()).toEqual(seqs.map((s) => `web-hook:${s}`).sort());
    expect(r.hits.every((h) => h.signed === true && h.answered === 200)).toBe(true);
    expect(r.hits.find((h) => h.key === `web-hook:${seqs[1]}`)?.body).toMatchObject({
      id: `web-hook:${seqs[1]}`,
      kind: 'transition',
      cluster: 'prod',
      scope: 'phase',
      fromStatus: 'Current',
      toStatus: 'Failed',
      phase: { namespace: 'shop', name: 'api' },
      url: 'https://phaselog.example.com/phases/prod/shop/api',
    });
    expect((await deliveries('web-hook')).map((d) => [d.seq, d.status, d.attempts])).toEqual(
      seqs.map((s) => [s, 'delivered', 1]),
    );
    expect((await metrics.render()).body).toContain(
      'phaselog_notification_deliveries_total{route="web-hook",result="delivered"} 3',
    );
    // What Redis holds of a delivery names it only: no receiver URL, no secret.
    const job = await worker.queue.getJob(notificationJobId('web-hook', seqs[0] as bigint));
    expect(job?.data).toEqual({ route: 'web-hook', seq: String(seqs[0]) });
    expect(JSON.stringify(job)).not.toContain(SECRET);
    expect(JSON.stringify(job)).not.toContain(r.url);
  });

  it('holds a change back until it has lasted minDuration, and suppresses one undone sooner', async () => {
    const r = await receiver();
    const id = await phase('held');
    const calm = config({
      name: 'calm',
      minDuration: '4s',
      receiver: { type: 'webhook', url: r.url, secretFile: 'hmac' },
    });
    // The route's cursor starts at the end of the log on its first scan. The changes below are
    // written back-dated, so no scan may run between them (one between the blip and its recovery
    // would see the blip as having lasted a minute): they are written while no worker runs.
    await (await start(calm)).scanNow();
    await running?.close();
    running = undefined;
    // A blip: Failed for one second, long ago. It never held 4s: suppressed. Its recovery held: sent.
    const blip = await change(id, 'Current', 'Failed', 60);
    const recovered = await change(id, 'Failed', 'Current', 59);
    // Now: held until 4 s have passed.
    const fresh = await change(id, 'Current', 'InProgress');
    await start(calm);
    // A scheduled scan may be on the route already: wait for the change to be judged.
    await waitFor(async () => (await deliveries('calm')).some((d) => d.seq === fresh), {
      timeoutMs: 10_000,
      what: 'the fresh change to be judged',
    });
    const early = await deliveries('calm');
    expect(early.find((d) => d.seq === fresh)?.status).toBe('held');
    expect(r.hits.some((h) => h.key === `calm:${fresh}`)).toBe(false);

    // Recorded as delivered just after the receiver answered: wait for the record, not the request.
    await waitFor(async () => (await deliveries('calm')).find((d) => d.seq === fresh)?.status === 'delivered', {
      timeoutMs: 20_000,
      what: 'the held change to be sent once it lasted',
    });
    const all = await deliveries('calm');
    expect(all.map((d) => [d.seq, d.status, d.reason])).toEqual([
      [blip, 'suppressed', 'superseded'],
      [recovered, 'delivered', null],
      [fresh, 'delivered', null],
    ]);
    expect(r.hits.map((h) => h.key).sort()).toEqual([`calm:${recovered}`, `calm:${fresh}`].sort());
  });

  it('sends one summary for a flapping phase, stays quiet while it flaps, tells where it settled, and tells changes again once calm', async () => {
    const r = await receiver();
    const id = await phase('flappy');
    const storm = config({
      name: 'storm',
      flapping: { maxChanges: 3, window: '1m' },
      receiver: { type: 'webhook', url: r.url, secretFile: 'hmac' },
    });
    // Back-dated changes are written while no worker scans (see the minDuration test).
    await (await start(storm)).scanNow();
    await running?.close();
    running = undefined;
    const seqs: bigint[] = [];
    // Eight changes within 40 s, ten minutes ago; then one change now, with a calm window before it.
    for (let i = 0; i < 8; i += 1)
      seqs.push(await change(id, i % 2 ? 'Failed' : 'Current', i % 2 ? 'Current' : 'Failed', 600 - i * 5));
    const later = await change(id, 'Current', 'Failed');
    await start(storm);
    await waitFor(async () => (await deliveries('storm')).filter((d) => d.status === 'delivered').length === 6, {
      timeoutMs: 20_000,
      what: 'the deliveries of the storm',
    });

    const rows = await deliveries('storm');
    expect(rows.map((d) => [d.kind, d.status, d.reason])).toEqual([
      ['transition', 'delivered', null],
      ['transition', 'delivered', null],
      ['transition', 'delivered', null],
      ['flapping', 'delivered', null],
      ['transition', 'suppressed', 'flapping'],
      ['transition', 'suppressed', 'flapping'],
      ['transition', 'suppressed', 'flapping'],
      // The storm's last change held a whole window: the status it settled in is told.
      ['transition', 'delivered', null],
      ['transition', 'delivered', null],
    ]);
    const summary = r.hits.find((h) => h.key === `storm:${seqs[3]}`);
    expect(summary?.body).toMatchObject({ kind: 'flapping', flapping: { changes: 4, windowSeconds: 60 } });
    expect(r.hits.map((h) => h.key).sort()).toEqual(
      [...seqs.slice(0, 4), seqs[7] as bigint, later].map((s) => `storm:${s}`).sort(),
    );
  });

  it('retries a receiver that fails twice and records the attempts; gives up on one that refuses', async () => {
    const r = await receiver();
    r.respond = (_hit, attempt) => (attempt <= 2 ? 503 : 200);
    const refusing = await receiver();
    refusing.respond = () => 400;
    const id = await phase('retried');
    await start(
      notificationsConfigSchema.parse({
        scanInterval: 200,
        routes: [
          {
            name: 'flaky',
            retry: { attempts: 5, backoff: '100ms' },
            receiver: { type: 'webhook', url: r.url, secretFile: 'hmac' },
          },
          {
            name: 'refused',
            retry: { attempts: 5, backoff: '100ms' },
            receiver: { type: 'webhook', url: refusing.url, secretFile: 'hmac' },
          },
        ],
      }),
    );
    const seq = await change(id, 'Current', 'Failed');
    await waitFor(
      async () =>
        (await deliveries('flaky'))[0]?.status === 'delivered' && (await deliveries('refused'))[0]?.status === 'failed',
      { timeoutMs: 20_000, what: 'the deliveries to settle' },
    );

    expect(r.hits.map((h) => [h.key, h.answered])).toEqual([
      [`flaky:${seq}`, 503],
      [`flaky:${seq}`, 503],
      [`flaky:${seq}`, 200],
    ]);
    expect((await deliveries('flaky'))[0]).toMatchObject({ status: 'delivered', attempts: 3, lastError: 'HTTP 503' });
    // A 4xx will not change on retry: one attempt, failed, and listed as such.
    expect(refusing.hits).toHaveLength(1);
    expect((await deliveries('refused'))[0]).toMatchObject({
      status: 'failed',
      reason: 'rejected',
      attempts: 1,
      lastError: 'HTTP 400',
    });
    expect((await store().listDeliveries(FULL_ACCESS, { status: ['failed'] }, 10)).items.map((d) => d.route)).toEqual([
      'refused',
    ]);
  });

  it('does not follow a redirect to another host: the signed body stays with the configured receiver', async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver();
    redirecting.respond = () => 307;
    // The receiver answers 307 with no Location; Node's fetch in 'manual' mode never follows either way.
    const id = await phase('redirected');
    await start(
      config({
        name: 'moved',
        retry: { attempts: 3, backoff: '100ms' },
        receiver: { type: 'webhook', url: redirecting.url, secretFile: 'hmac' },
      }),
    );
    await change(id, 'Current', 'Failed');
    await waitFor(async () => (await deliveries('moved'))[0]?.status === 'failed', {
      timeoutMs: 20_000,
      what: 'the delivery to fail',
    });
    expect((await deliveries('moved'))[0]?.lastError).toMatch(/redirect/);
    expect(elsewhere.hits).toHaveLength(0);
    expect(redirecting.hits).toHaveLength(1);
  });

  it("signs each delivery with its time: the README's check accepts it on arrival and refuses it replayed after the tolerance", async () => {
    const r = await receiver();
    const id = await phase('replayed');
    await (
      await start(config({ name: 'replay-hook', receiver: { type: 'webhook', url: r.url, secretFile: 'hmac' } }))
    ).scanNow();
    const seq = await change(id, 'Current', 'Failed');
    await waitFor(() => r.hits.length === 1, { timeoutMs: 20_000, what: 'the delivery' });
    const hit = r.hits[0] as (typeof r.hits)[number];
    expect([hit.key, hit.signed]).toEqual([`replay-hook:${seq}`, true]);
    const t = Number(/^t=(\d+),v1=[0-9a-f]{64}$/.exec(hit.signature ?? '')?.[1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
    // Someone who captured the request sends it again: within the tolerance it still verifies (the
    // delivery key tells it apart), later it does not, with the timestamp rewritten neither.
    const verify = await readmeVerifier();
    expect(verify(SECRET, hit.raw, hit.signature, t + 299)).toBe(true);
    expect(verify(SECRET, hit.raw, hit.signature, t + 301)).toBe(false);
    expect(verify(SECRET, hit.raw, hit.signature?.replace(`t=${t}`, `t=${t + 301}`), t + 301)).toBe(false);
  });

  it("shows a status message's Slack markup as text: no channel ping, no disguised link, only phaselog's own link", async () => {
    const slack = await startWebhookReceiver();
    receivers.push(slack);
    const id = await phase('escaped');
    await (
      await start(
        notificationsConfigSchema.parse({
          scanInterval: 200,
          uiBaseUrl: 'https://ui.example.com',
          routes: [{ name: 'slack-escape', receiver: { type: 'slack', url: slack.url } }],
        }),
      )
    ).scanNow();
    // A Pod's message (or a webhook check's answer) is whatever its author wrote.
    await insertStatusChange(db, {
      clusterId,
      phaseId: id,
      scope: 'phase',
      at: new Date(),
      fromStatus: 'Current',
      toStatus: 'Failed',
      message: '<!channel> <@U0ADMIN> session expired: <https://evil.example/login|re-authenticate> & retry',
    });
    await waitFor(() => slack.hits.length === 1, { timeoutMs: 20_000, what: 'the Slack message' });
    const body = slack.hits[0]?.body as { text: string; blocks: { text: { type: string; text: string } }[] };
    const mrkdwn = body.blocks[0]?.text.text ?? '';
    // Slack reads `<...>` as a control sequence (mention, link) and `&...;` as an entity: the only
    // sequence left is phaselog's link; the rest shows literally.
    const controls = (text: string) => [...text.matchAll(/<([^<>]*)>/g)].map((m) => m[1]);
    expect(controls(body.text)).toEqual([]);
    expect(controls(mrkdwn)).toEqual(['https://ui.example.com/phases/prod/shop/escaped|open in phaselog']);
    expect(body.text).toBe(
      'prod/shop/escaped: Current → Failed (&lt;!channel&gt; &lt;@U0ADMIN&gt; session expired: &lt;https://evil.example/login|re-authenticate&gt; &amp; retry)',
    );
    expect(mrkdwn.startsWith(body.text)).toBe(true);
  });

  it('speaks Slack incoming webhooks and CloudEvents structured mode', async () => {
    const slack = await startWebhookReceiver();
    const events = await receiver();
    receivers.push(slack);
    const id = await phase('shapes');
    await start(
      notificationsConfigSchema.parse({
        scanInterval: 200,
        uiBaseUrl: 'https://ui.example.com',
        routes: [
          { name: 'slack', receiver: { type: 'slack', url: slack.url } },
          {
            name: 'ce',
            receiver: { type: 'cloudevents', url: events.url, secretFile: 'hmac', source: '/phaselog/test' },
          },
        ],
      }),
    );
    const seq = await change(id, 'Current', 'Failed');
    await waitFor(() => slack.hits.length === 1 && events.hits.length === 1, {
      timeoutMs: 20_000,
      what: 'both receivers',
    });
    expect(slack.hits[0]?.body).toMatchObject({ text: 'prod/shop/shapes: Current → Failed (Current to Failed)' });
    expect(JSON.stringify(slack.hits[0]?.body.blocks)).toContain('https://ui.example.com/phases/prod/shop/shapes');
    expect(events.hits[0]?.contentType).toBe('application/cloudevents+json');
    expect(events.hits[0]?.signed).toBe(true);
    expect(events.hits[0]?.body).toMatchObject({
      specversion: '1.0',
      id: `ce:${seq}`,
      source: '/phaselog/test',
      type: 'dev.phaselog.phase.status.changed',
      subject: 'prod/shop/shapes',
      datacontenttype: 'application/json',
      data: { toStatus: 'Failed', fromStatus: 'Current' },
    });
  });
  it('gives up on a receiver that never answers, one timeout per attempt', async () => {
    // Accepts the connection and the request, and never answers.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const id = await phase('silent');
      await start(
        config({
          name: 'silent',
          retry: { attempts: 2, backoff: '100ms' },
          receiver: {
            type: 'webhook',
            url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`,
            secretFile: 'hmac',
            timeout: '300ms',
          },
        }),
      );
      await change(id, 'Current', 'Failed');
      await waitFor(async () => (await deliveries('silent'))[0]?.status === 'failed', {
        timeoutMs: 20_000,
        what: 'the delivery to fail',
      });
      expect((await deliveries('silent'))[0]).toMatchObject({
        status: 'failed',
        reason: 'exhausted',
        attempts: 2,
        lastError: 'no answer within 300 ms',
      });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('records why an attempt failed without the receiver URL (a Slack URL is a credential)', async () => {
    const id = await phase('unreachable');
    // A port just found free: nothing listens, the connection is refused.
    const port = await findFreePort();
    await start(
      config({
        name: 'nowhere',
        retry: { attempts: 1, backoff: '100ms' },
        receiver: { type: 'slack', url: `http://127.0.0.1:${port}/services/T0/B0/token-in-path` },
      }),
    );
    await change(id, 'Current', 'Failed');
    await waitFor(async () => (await deliveries('nowhere'))[0]?.status === 'failed', {
      timeoutMs: 20_000,
      what: 'the delivery to fail',
    });
    const [failed] = await deliveries('nowhere');
    expect(failed?.lastError).toBe('request failed: ECONNREFUSED');
    expect(JSON.stringify(failed, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(
      'token-in-path',
    );
  });

  it('retention removes finished deliveries past their age and keeps pending and held ones', async () => {
    const id = await phase('old');
    const old = new Date(Date.now() - 40 * 86_400_000);
    const seed = async (status: string) => {
      const seq = await change(id, 'Current', 'Failed', 40 * 86_400);
      await db.notificationDelivery.create({
        data: {
          route: 'aged',
          seq,
          kind: 'transition',
          status,
          subject: 's',
          clusterId,
          phaseId: id,
          at: old,
          updatedAt: old,
        },
      });
    };
    for (const status of ['delivered', 'failed', 'suppressed', 'pending', 'held']) await seed(status);
    const removed = await applyRetention(workerDb, { notificationDeliveries: 30 * 86_400_000 });
    expect(removed.NotificationDelivery).toBe(3);
    expect((await deliveries('aged')).map((d) => d.status).sort()).toEqual(['held', 'pending']);
  });

  it('sends a delivery whose job ended while its row stayed pending (as when every row update failed with the database down)', async () => {
    const r = await receiver();
    const id = await phase('stuck');
    const routeConfig = config({
      name: 'stuck-hook',
      match: { phases: ['stuck'] },
      receiver: { type: 'webhook', url: r.url, secretFile: 'hmac' },
    });
    // The route's cursor starts at the end of the log on its first scan.
    await (await start(routeConfig)).scanNow();
    await running?.close();
    running = undefined;
    const seq = await change(id, 'Current', 'Failed');
    // A job under the delivery's id that can only end failed, as a job does whose every attempt could
    // not record its outcome: the delivery's row will say pending while BullMQ keeps the id taken.
    const connection = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    const queue = new Queue(NOTIFICATION_QUEUE, { connection, prefix });
    try {
      await queue.add(
        NOTIFICATION_JOB,
        { route: 'no-such-route', seq: String(seq) },
        { jobId: notificationJobId('stuck-hook', seq) },
      );
      await start(routeConfig);
      await waitFor(
        async () =>
          (await queue.getJob(notificationJobId('stuck-hook', seq)))?.data.route === 'stuck-hook' || r.hits.length > 0,
        { timeoutMs: 30_000, what: 'the blocked job to be replaced' },
      );
      await waitFor(async () => (await deliveries('stuck-hook'))[0]?.status === 'delivered', {
        timeoutMs: 30_000,
        what: 'the stuck delivery to be sent',
      });
      expect(r.hits.map((h) => [h.key, h.signed])).toEqual([[`stuck-hook:${seq}`, true]]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });

  it("routes condition changes by type and status: a check's condition turning False is told, other types and statuses are not", async () => {
    const r = await receiver();
    const id = await phase('checked');
    const condition = (type: string, from: string | null, to: string) =>
      insertStatusChange(db, {
        clusterId,
        phaseId: id,
        scope: 'condition',
        conditionType: type,
        at: new Date(),
        fromStatus: from,
        toStatus: to,
        message: `${type} ${to}`,
      });
    await (
      await start(
        config({
          name: 'health-down',
          match: { changes: ['condition'], conditionTypes: ['health'], to: ['False'] },
          receiver: { type: 'webhook', url: r.url, secretFile: 'hmac' },
        }),
      )
    ).scanNow();
    const told = await condition('health', 'True', 'False');
    await condition('health', 'False', 'True');
    await condition('version', 'True', 'False');
    await change(id, 'Current', 'Failed');
    await waitFor(async () => (await deliveries('health-down')).some((d) => d.status === 'delivered'), {
      timeoutMs: 20_000,
      what: 'the condition change delivered',
    });
    await running?.scanNow();
    expect(r.hits.map((h) => h.key)).toEqual([`health-down:${told}`]);
    expect(r.hits[0]?.body).toMatchObject({
      scope: 'condition',
      conditionType: 'health',
      fromStatus: 'True',
      toStatus: 'False',
      phase: { name: 'checked' },
    });
  });
});
