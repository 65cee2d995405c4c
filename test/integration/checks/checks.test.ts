/**
 * Checks against real servers: an http check against a local server that flips between 200 and
 * 503 records only the transitions, at the runs' times; a slow server gives Unknown(Timeout); a
 * webhook's signed request is verified by its receiver and its answer recorded (a malformed
 * answer is Unknown(InvalidResponse)); gates with conditions pass and fail for every reason; the
 * BullMQ worker runs a check on its own schedule.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSchema, type CheckConfig } from '../../../src/checks/config.ts';
import { readSecret } from '../../../src/config.ts';
import { runCheckOnCluster, type RunCheckDeps } from '../../../src/services/run-check.ts';
import { evaluateGate } from '../../../src/services/read-gate.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createConditionStore } from '../../../src/store/condition-store.ts';
import { createHistoryReader } from '../../../src/store/read-history.ts';
import { createPhaseReader } from '../../../src/store/read-phases.ts';
import { FULL_ACCESS, type PhaseRecord } from '../../../src/store/read-types.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { applyRetention } from '../../../src/store/retention.ts';
import { createAuditReport } from '../../../src/services/audit-report.ts';
import { startCheckWorker } from '../../../workers/check-worker.ts';
import { readmeVerifier, type VerifySignature } from '../../helpers/readme-signature.ts';
import { applyFleet, type FleetShape } from '../snapshot/fleet.ts';
import {
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  waitUntil,
  type EmulatedCluster,
  type TestDatabase,
} from '../snapshot/helpers.ts';

const SHAPE: FleetShape = { phases: 2, resourcesPerPhase: 1, phasesPerNamespace: 1 };
const SECRET = 'webhook-test-secret';
const HEADER_TOKEN = 'header-token-0f9e8d7c';
const FILE_TOKEN = 'file-token-6b5a4c3d';
const at = (minute: number, second = 0) => new Date(Date.UTC(2026, 2, 1, 10, minute, second));

interface TestServer {
  url: string;
  close(): Promise<void>;
}

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestServer & { server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('checks', () => {
  let db: TestDatabase;
  let cluster: EmulatedCluster;
  let healthy = true;
  let health: TestServer;
  const webhookAnswers: { verified: boolean; body: Record<string, unknown>; raw: Buffer; signature: string }[] = [];
  let webhookReply: unknown = { conditions: [{ status: 'True', reason: 'Promoted', message: 'PR merged' }] };
  let webhook: TestServer;
  let deps: RunCheckDeps;
  let phases: PhaseRecord[];
  let secretsDir: string;

  const check = (raw: Record<string, unknown>): CheckConfig => checkSchema.parse(raw);

  let verify: VerifySignature;

  beforeAll(async () => {
    verify = await readmeVerifier();
    db = await createTestDatabase('checks');
    secretsDir = mkdtempSync(path.join(tmpdir(), 'phaselog-check-secrets-'));
    writeFileSync(path.join(secretsDir, 'team-token'), `${FILE_TOKEN}\n`);
    cluster = await startEmulatedCluster('checks');
    applyFleet(cluster.emulator, SHAPE);
    health = await serve((req, res) => {
      if (req.url?.startsWith('/slow')) return; // never answers: the check must time out
      if (req.url?.startsWith('/endless')) {
        // A body that never ends: the check must read only its cap.
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(16 * 1024);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
        return;
      }
      if (req.url?.startsWith('/private')) {
        const ok = req.headers.authorization === `Bearer ${HEADER_TOKEN}` && req.headers['x-team'] === FILE_TOKEN;
        return void res.writeHead(ok ? 200 : 401).end(ok ? 'ok' : `denied ${String(req.headers.authorization)}`);
      }
      res
        .writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: healthy ? 'ok' : 'down', path: req.url }));
    });
    webhook = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const signature = String(req.headers['x-phaselog-signature'] ?? '');
        const verified = verify(SECRET, raw, signature);
        webhookAnswers.push({
          verified,
          body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
          raw,
          signature,
        });
        if (!verified) return void res.writeHead(401).end();
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(typeof webhookReply === 'string' ? webhookReply : JSON.stringify(webhookReply));
      });
    });
    const recorder = createRecorder(createSnapshotStore(db.workerDb));
    await recorder.record(await observeCluster(cluster.client, { now: () => at(0) }), { tickAt: at(0) });
    const phaseReader = createPhaseReader(db.workerDb);
    phases = (await phaseReader.listPhases(FULL_ACCESS, { filter: { cluster: 'checks' }, order: 'NAME', first: 10 }))
      .items;
    expect(phases).toHaveLength(2);
    deps = {
      phases: phaseReader,
      history: createHistoryReader(db.workerDb),
      conditions: createConditionStore(db.workerDb),
      readSecret: (source) =>
        readSecret(source, secretsDir, { WEBHOOK_SECRET: SECRET, HEALTH_TOKEN: `Bearer ${HEADER_TOKEN}` }),
      log: testLogger(),
    };
  });
  afterAll(async () => {
    await health?.close();
    await webhook?.close();
    await cluster?.close();
    await db?.drop();
    if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
  });

  const rows = async (table: string) =>
    Number((await db.db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "${table}"`))[0]?.n ?? 0);

  it("records an http check that flips between 200 and 503 as changes at the runs' times, and an unchanged run writes one row", async () => {
    const http = check({
      name: 'health',
      interval: '30s',
      http: { url: `${health.url}/{{ namespace }}/{{ name }}/healthz`, jsonPath: '$.status', equals: 'ok' },
    });
    healthy = true;
    const first = await runCheckOnCluster(deps, http, 'checks', at(1));
    expect(first.results.map((r) => [r.status, r.reason])).toEqual([
      ['True', 'Succeeded'],
      ['True', 'Succeeded'],
    ]);
    expect(first.written.changes.map((c) => [c.scope, c.conditionType, c.fromStatus, c.toStatus])).toEqual([
      ['condition', 'health', null, 'True'],
      ['condition', 'health', null, 'True'],
    ]);

    const before = { changes: await rows('StatusChange'), intervals: await rows('PhaseConditionInterval') };
    const unchanged = await runCheckOnCluster(deps, http, 'checks', at(1, 30));
    expect(unchanged.written).toEqual({ changes: [], rows: 1 });
    expect(await rows('StatusChange')).toBe(before.changes);

    healthy = false;
    const down = await runCheckOnCluster(deps, http, 'checks', at(2));
    expect(down.results[0]).toMatchObject({ status: 'False', reason: 'UnexpectedStatus' });
    expect(down.written.changes.map((c) => [c.fromStatus, c.toStatus, c.at.toISOString()])).toEqual([
      ['True', 'False', at(2).toISOString()],
      ['True', 'False', at(2).toISOString()],
    ]);
    expect(await rows('PhaseConditionInterval')).toBe(before.intervals + 2);

    // A run older than one already written (overlapping jobs) writes nothing, not even its time.
    healthy = true;
    expect((await runCheckOnCluster(deps, http, 'checks', at(1, 45))).written).toEqual({
      changes: [],
      rows: 0,
      stale: true,
    });
    await runCheckOnCluster(deps, http, 'checks', at(3));
    await runCheckOnCluster(deps, http, 'checks', at(3, 30));
    // No run for longer than three intervals (workers down): what held in between was not seen, so
    // the True interval ends at the last run and a new one begins at the run that resumed.
    const resumed = await runCheckOnCluster(deps, http, 'checks', at(6));
    expect(resumed.written.changes).toEqual([]);
    const store = createConditionStore(db.workerDb);
    const phase = phases[0] as PhaseRecord;
    const intervals = await store.conditionIntervals(phase.id, { from: at(0), to: at(10) });
    expect(intervals.map((i) => [i.status, i.from.toISOString(), i.to?.toISOString() ?? null])).toEqual([
      ['True', at(1).toISOString(), at(2).toISOString()],
      ['False', at(2).toISOString(), at(3).toISOString()],
      ['True', at(3).toISOString(), at(3, 30).toISOString()],
      ['True', at(6).toISOString(), null],
    ]);
    expect((await store.conditionsAt(phase.id, at(2, 30))).map((c) => c.status)).toEqual(['False']);
    const log = await createHistoryReader(db.workerDb).listStatusChanges(
      FULL_ACCESS,
      { phaseId: phase.id, scopes: ['condition'], conditionTypes: ['health'] },
      10,
    );
    expect(log.items.map((c) => c.toStatus)).toEqual(['True', 'False', 'True']);
  });

  it('gives Unknown(Timeout) for a server that does not answer, and Unknown(TemplateError) for a label the phase lacks', async () => {
    const slow = check({ name: 'slow', timeout: '200ms', http: { url: `${health.url}/slow` } });
    const outcome = await runCheckOnCluster(deps, slow, 'checks', at(4));
    expect(outcome.results.map((r) => [r.status, r.reason])).toEqual([
      ['Unknown', 'Timeout'],
      ['Unknown', 'Timeout'],
    ]);
    const templated = check({ name: 'templated', http: { url: `${health.url}/{{ labels.nope }}` } });
    const missing = await runCheckOnCluster(deps, templated, 'checks', at(4));
    expect(missing.results[0]).toMatchObject({ status: 'Unknown', reason: 'TemplateError' });
  });

  it('sends headers read from the environment and from files, and never stores them', async () => {
    const headers = check({
      name: 'private',
      http: {
        url: `${health.url}/private`,
        headersFrom: [
          { name: 'Authorization', env: 'HEALTH_TOKEN' },
          { name: 'X-Team', file: 'team-token' },
        ],
      },
    });
    const outcome = await runCheckOnCluster(deps, headers, 'checks', at(4, 30));
    expect(outcome.results.map((r) => r.status)).toEqual(['True', 'True']);
    const missing = check({
      name: 'private-missing',
      http: { url: `${health.url}/private`, headersFrom: [{ name: 'Authorization', env: 'NOT_SET' }] },
    });
    expect((await runCheckOnCluster(deps, missing, 'checks', at(4, 30))).results[0]).toMatchObject({
      status: 'Unknown',
      reason: 'SecretUnavailable',
      message: 'environment variable NOT_SET is not set',
    });
    // A wrong header: the server's answer names it in its body, which no condition carries.
    const wrong = { ...deps, readSecret: () => Promise.resolve(`Bearer ${HEADER_TOKEN}-old`) };
    expect((await runCheckOnCluster(wrong, headers, 'checks', at(4, 45))).results[0]).toMatchObject({
      status: 'False',
      reason: 'UnexpectedStatus',
    });
    const stored = JSON.stringify([
      await db.db.$queryRawUnsafe('SELECT * FROM "PhaseConditionCurrent"'),
      await db.db.$queryRawUnsafe('SELECT * FROM "PhaseConditionInterval"'),
      await db.db.$queryRawUnsafe('SELECT "body" FROM "StatusDetail"'),
    ]);
    expect(stored).not.toContain(HEADER_TOKEN);
    expect(stored).not.toContain(FILE_TOKEN);
  });

  it('reads an endless body only up to its cap', async () => {
    const endless = check({
      name: 'endless',
      timeout: '10s',
      http: { url: `${health.url}/endless`, bodyContains: 'needle', maxBodyBytes: 4096 },
    });
    const outcome = await runCheckOnCluster(deps, endless, 'checks', at(4, 50));
    expect(outcome.results[0]).toMatchObject({ status: 'False', reason: 'BodyMismatch' });
  });

  it('refuses a URL template with an unknown variable at load', () => {
    expect(checkSchema.safeParse({ name: 'bad', http: { url: 'http://x/{{ secret }}' } }).success).toBe(false);
    expect(checkSchema.safeParse({ name: 'Ready', http: { url: 'http://x/' } }).success).toBe(false);
    expect(checkSchema.safeParse({ name: 'both', http: { url: 'http://x/' }, cel: { expr: 'true' } }).success).toBe(
      false,
    );
    expect(checkSchema.safeParse({ name: 'worse', affectsStatus: 'yes', http: { url: 'http://x/' } }).success).toBe(
      false,
    );
    expect(checkSchema.parse({ name: 'worse', affectsStatus: true, http: { url: 'http://x/' } }).affectsStatus).toBe(
      true,
    );
    // A label's own value only: a label key that names Object's prototype fills nothing.
    expect(checkSchema.safeParse({ name: 'proto', http: { url: 'http://x/{{ labels.__proto__ }}' } }).success).toBe(
      true,
    );
  });

  it('signs webhook requests, records the answered condition, and gives Unknown(InvalidResponse) for a malformed answer', async () => {
    const hook = check({
      name: 'promoted',
      webhook: { url: `${webhook.url}/conditions`, secretFrom: { env: 'WEBHOOK_SECRET' } },
    });
    const outcome = await runCheckOnCluster(deps, hook, 'checks', at(5));
    expect(webhookAnswers.length).toBeGreaterThanOrEqual(2);
    expect(webhookAnswers.every((a) => a.verified)).toBe(true);
    // The signature carries its time: the same request replayed six minutes later does not verify,
    // nor does it with the timestamp moved to then (the signature covers it).
    const captured = webhookAnswers[0] as { raw: Buffer; signature: string };
    const t = Number(/^t=(\d+),/.exec(captured.signature)?.[1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
    expect(verify(SECRET, captured.raw, captured.signature, t + 360)).toBe(false);
    expect(verify(SECRET, captured.raw, captured.signature.replace(`t=${t}`, `t=${t + 360}`), t + 360)).toBe(false);
    expect(webhookAnswers[0]?.body).toMatchObject({
      kind: 'ConditionRequest',
      type: 'promoted',
      phase: { cluster: 'checks', status: 'Current' },
    });
    expect(outcome.results.map((r) => [r.status, r.reason, r.message])).toEqual([
      ['True', 'Promoted', 'PR merged'],
      ['True', 'Promoted', 'PR merged'],
    ]);

    // More conditions than the one asked for: its own sub-types only.
    webhookReply = {
      conditions: [
        { status: 'True', reason: 'Promoted', message: 'PR merged' },
        { type: 'promoted/smoke', status: 'False', reason: 'SmokeFailed', message: '2 of 40 failed' },
      ],
    };
    const two = await runCheckOnCluster(deps, hook, 'checks', at(5, 20));
    expect(two.written.changes.map((c) => [c.conditionType, c.toStatus])).toEqual([
      ['promoted/smoke', 'False'],
      ['promoted/smoke', 'False'],
    ]);
    webhookReply = { conditions: [{ status: 'True', reason: 'Promoted', message: 'PR merged' }] };
    const dropped = await runCheckOnCluster(deps, hook, 'checks', at(5, 40));
    expect(dropped.written.changes.map((c) => [c.conditionType, c.fromStatus, c.toStatus])).toEqual([
      ['promoted/smoke', 'False', 'Unknown'],
      ['promoted/smoke', 'False', 'Unknown'],
    ]);
    const current = await createConditionStore(db.workerDb).currentConditions([(phases[0] as PhaseRecord).id]);
    expect(current.get((phases[0] as PhaseRecord).id)?.find((c) => c.type === 'promoted/smoke')).toMatchObject({
      status: 'Unknown',
      reason: 'NotReported',
      lastRunAt: at(5, 40),
    });
    // Another check's condition, or the same one twice: refused whole.
    webhookReply = {
      conditions: [
        { status: 'True', reason: 'Promoted' },
        { type: 'health', status: 'True', reason: 'Forged' },
      ],
    };
    expect((await runCheckOnCluster(deps, hook, 'checks', at(5, 50))).results[0]).toMatchObject({
      status: 'Unknown',
      reason: 'InvalidResponse',
    });
    webhookReply = {
      conditions: [
        { status: 'True', reason: 'Promoted' },
        { type: 'promoted', status: 'False', reason: 'Twice' },
      ],
    };
    expect((await runCheckOnCluster(deps, hook, 'checks', at(5, 55))).results[0]).toMatchObject({
      status: 'Unknown',
      reason: 'InvalidResponse',
    });

    webhookReply = { conditions: [{ status: 'Maybe', reason: 'x' }] };
    const invalid = await runCheckOnCluster(deps, hook, 'checks', at(6));
    expect(invalid.results[0]).toMatchObject({ status: 'Unknown', reason: 'InvalidResponse' });
    webhookReply = 'not json';
    expect((await runCheckOnCluster(deps, hook, 'checks', at(7))).results[0]).toMatchObject({
      status: 'Unknown',
      reason: 'InvalidResponse',
    });

    // A wrong key: the receiver refuses the request, the condition is Unknown, never an error.
    const wrongKey = { ...deps, readSecret: () => Promise.resolve('another-key') };
    expect((await runCheckOnCluster(wrongKey, hook, 'checks', at(8))).results[0]).toMatchObject({
      status: 'Unknown',
      reason: 'UnexpectedStatus',
    });
    const noKey = {
      ...deps,
      readSecret: (s: Parameters<RunCheckDeps['readSecret']>[0]) => readSecret(s, process.cwd(), {}),
    };
    expect((await runCheckOnCluster(noKey, hook, 'checks', at(8))).results[0]).toMatchObject({
      status: 'Unknown',
      reason: 'SecretUnavailable',
    });
  });

  it('gates on conditions: held, not held long enough, different status, stale, missing', async () => {
    const gateDeps = {
      phases: deps.phases,
      history: createHistoryReader(db.workerDb),
      conditions: createConditionStore(db.workerDb),
    };
    // The phase is Current since minute 9, and health True since minute 9: the gaps before (no snapshot, no check run) end the runs a gate measures.
    const [phase] = await deps.phases.getPhasesByIds(FULL_ACCESS, [(phases[0] as PhaseRecord).id]);
    if (phase === undefined) throw new Error('phase missing');
    // Keep the cluster observed at the gate's moments.
    const recorder = createRecorder(createSnapshotStore(db.workerDb));
    await recorder.record(await observeCluster(cluster.client, { now: () => at(9) }), { tickAt: at(9) });
    const [fresh] = await deps.phases.getPhasesByIds(FULL_ACCESS, [phase.id]);
    if (fresh === undefined) throw new Error('phase missing');
    const http = check({
      name: 'health',
      interval: '30s',
      http: { url: `${health.url}/{{ namespace }}/{{ name }}/healthz` },
    });
    healthy = true;
    await runCheckOnCluster(deps, http, 'checks', at(9));
    const gate = (conditions: { type: string; status: string; forMs: number }[], now = at(10, 10)) =>
      evaluateGate(gateDeps, fresh, { wanted: 'Current', forMs: 60_000, conditions, now });

    const held = await gate([{ type: 'health', status: 'True', forMs: 60_000 }]);
    expect([held.passed, held.reason, held.conditions[0]?.outcome]).toEqual([true, 'HELD', 'HELD']);
    const young = await gate([{ type: 'health', status: 'True', forMs: 10 * 60_000 }]);
    expect([young.passed, young.reason, young.conditions[0]?.outcome, young.remainingMs]).toEqual([
      false,
      'CONDITION_NOT_HELD',
      'NOT_HELD_LONG_ENOUGH',
      8 * 60_000 + 50_000,
    ]);
    const other = await gate([{ type: 'health', status: 'False', forMs: 0 }]);
    expect([other.passed, other.reason, other.conditions[0]?.outcome]).toEqual([
      false,
      'CONDITION_NOT_HELD',
      'DIFFERENT_STATUS',
    ]);
    const missing = await gate([{ type: 'nothing', status: 'True', forMs: 0 }]);
    expect([missing.passed, missing.reason]).toEqual([false, 'CONDITION_MISSING']);
    // The slow check last ran at minute 4 with a 30 s interval: at 10:10 its condition is stale.
    const stale = await gate([{ type: 'slow', status: 'Unknown', forMs: 0 }]);
    expect([stale.passed, stale.reason, stale.conditions[0]?.outcome]).toEqual([false, 'CONDITION_STALE', 'STALE']);
    // The status' own failure comes first.
    const statusFirst = await evaluateGate(gateDeps, fresh, {
      wanted: 'Failed',
      forMs: 0,
      conditions: [{ type: 'health', status: 'True', forMs: 0 }],
      now: at(10, 10),
    });
    expect(statusFirst.reason).toBe('DIFFERENT_STATUS');
  });

  it('gives the audit report the time each condition was True, False and Unknown', async () => {
    const phase = phases[0] as PhaseRecord;
    const rendered = await createAuditReport(db.workerDb, {
      from: at(0),
      to: at(5),
      now: at(5),
      format: 'markdown',
      selection: { clusters: ['checks'], namespaces: [phase.namespace], phases: [phase.name] },
      access: FULL_ACCESS,
    });
    // health: True 1-2 and 3-3:30 (then no run until 6), False 2-3 (minutes).
    expect(rendered.report.phases[0]?.conditionTime.health).toEqual({ True: 90_000, False: 60_000, Unknown: 0 });
    expect(rendered.content).toMatch(/## Conditions from checks/);
  });

  it("fills no template from a label key that names Object's prototype", async () => {
    const proto = check({ name: 'proto', http: { url: `${health.url}/{{ labels.constructor }}` } });
    const outcome = await runCheckOnCluster(deps, proto, 'checks', at(9, 30));
    expect(outcome.results[0]).toMatchObject({ status: 'Unknown', reason: 'TemplateError' });
  });

  it('retention removes ended condition intervals older than the phase-interval age', async () => {
    const before = await rows('PhaseConditionInterval');
    expect(before).toBeGreaterThan(0);
    // Every ended interval so far ended by minute 10 of 2026-03-01; a cut at minute 3 keeps the later ones.
    const result = await applyRetention(db.workerDb, { phaseIntervals: 60_000 }, at(4));
    expect(result.PhaseConditionInterval).toBeGreaterThan(0);
    const left = await db.db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM "PhaseConditionInterval" WHERE "to" < '${at(3).toISOString()}'`,
    );
    expect(left[0]?.n).toBe(0n);
    expect(await rows('PhaseConditionInterval')).toBe(before - result.PhaseConditionInterval);
  });

  it('runs checks from the worker on their own schedule, and re-creates a scheduler Redis lost', async () => {
    const prefix = uniqueId('checks');
    const scheduled = check({ name: 'scheduled', interval: '1s', http: { url: `${health.url}/{{ name }}` } });
    const worker = await startCheckWorker({
      ...deps,
      redisUrl: REDIS_URL,
      prefix,
      checks: [scheduled],
      clusters: ['checks'],
    });
    try {
      await waitUntil(
        async () =>
          (await rows('CheckRun')) > 0 &&
          (
            await db.db.$queryRawUnsafe<{ n: bigint }[]>(
              `SELECT count(*) AS n FROM "PhaseConditionCurrent" WHERE "type" = 'scheduled'`,
            )
          )[0]?.n === 2n,
        'the scheduled check recorded',
      );
      expect((await worker.queue.getJobSchedulers()).map((s) => s.key)).toEqual(['check:scheduled:checks']);
      await worker.queue.removeJobScheduler('check:scheduled:checks');
      expect(await worker.reconcileSchedulers()).toEqual(['check:scheduled:checks']);
      expect(await worker.queue.getJobScheduler('check:scheduled:checks')).toBeDefined();
    } finally {
      await worker.queue.obliterate({ force: true }).catch(() => undefined);
      await worker.close();
    }
  });
});
