/**
 * Phase plans (issue #22, item 3) on real snapshots: an emulated cluster's three phases become
 * Current one after another, real snapshots record them in a real PostgreSQL, and the real API
 * derives the plan: its status walks through the steps, its history and statusAt are exact at the
 * boundaries, its gate passes only when Current long enough on fresh reads, planStatusChanged
 * replays and streams the steps, and a restricted token sees only plans whose every phase it may see.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/cli/api-client.ts';
import { runGate } from '../../../src/cli/commands/gate.ts';
import { runPlanHistory, runPlanList, runPlanStatus } from '../../../src/cli/commands/plan.ts';
import type { CommandContext } from '../../../src/cli/context.ts';
import { painter } from '../../../src/cli/format.ts';
import { loadConfig } from '../../../src/config.ts';
import { createToken } from '../../../src/auth/tokens.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createApiTokenStore } from '../../../src/store/api-token-store.ts';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../../helpers/services.ts';
import { inventoryConfigMap, readyDeployment, readyStatus, rollingStatus } from '../snapshot/fleet.ts';
import { startEmulatedCluster, testLogger, type EmulatedCluster } from '../snapshot/helpers.ts';
import { gql, gqlData, startTestApi, wsClient, type TestApi } from './helpers.ts';

const STEPS = ['infra', 'platform', 'shop'] as const;
const PLANS = [
  { name: 'site-prod', phases: ['prod/infra/infra', 'prod/platform/platform', 'prod/shop/shop'] },
  { name: 'shop-only', phases: ['prod/shop'] },
  // Hostile for a token restricted to namespace shop: its first phase is one the token may not see.
  { name: 'sneaky', phases: ['prod/platform/platform', 'prod/shop/shop'] },
  { name: 'future', phases: ['prod/infra/infra', 'prod/later/later'] },
];

let database: TestDatabase;
let db: Db;
let api: TestApi;
let cluster: EmulatedCluster;
let publisher: ChangePublisher;
let deps: SnapshotDeps;
let shopReader: string;
const prefix = uniquePrefix('gql-plans');
const ticks: Date[] = [];
let lastTick = 0;

const deployment = (ns: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: ns });

/** Snapshots the cluster now (strictly after the previous tick) and returns the tick. */
async function snapshot(): Promise<Date> {
  while (Date.now() <= lastTick) await new Promise((r) => setTimeout(r, 1));
  const tick = new Date(Date.now());
  lastTick = tick.getTime();
  const outcome = await snapshotCluster(deps, cluster.client, tick);
  expect(outcome.written).toBe(true);
  ticks.push(tick);
  return tick;
}

interface PlanView {
  status: string;
  step: number | null;
  stepCount: number;
  message: string;
  stale: boolean;
  staleReason: string | null;
  source: string;
  warnings: string[];
  phases: { step: number; ref: string; status: string; phase: { name: string } | null }[];
}
const PLAN =
  'query($name: String!) { plan(name: $name) { status step stepCount message stale staleReason source warnings phases { step ref status phase { name } } } }';
const plan = async (name: string, token?: string) =>
  (await gqlData<{ plan: PlanView | null }>(api.url, PLAN, { name }, token)).plan;

interface Interval {
  status: string;
  step: number | null;
  message: string;
  stale: boolean;
  from: string;
  to: string | null;
}
const HISTORY =
  'query($name: String!, $from: DateTime!, $to: DateTime) { plan(name: $name) { history(from: $from, to: $to) { status step message stale from to } } }';
const STATUS_AT =
  'query($name: String!, $at: DateTime!) { plan(name: $name) { statusAt(at: $at) { at status step message } } }';
const GATE =
  'query($plan: String!, $for: Duration!) { planGate(plan: $plan, for: $for) { passed reason message status heldSince remaining staleReason plan { name } } }';

beforeAll(async () => {
  database = await createTestDatabase('gql_plans');
  db = createDb(database.url, { poolSize: 4 });
  cluster = await startEmulatedCluster('prod');
  cluster.emulator.apply([
    ...STEPS.map((ns) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })),
    ...STEPS.map((ns) => readyDeployment(ns, ns, { status: rollingStatus() })),
    ...STEPS.map((ns, i) => {
      const inventory = inventoryConfigMap(ns, `${ns}-inventory`, ns, [[ns, 'apps', 'Deployment', ns]]) as {
        metadata: { labels: Record<string, string> };
      };
      // A cli-utils phase is named by its inventory id; a plan declared by labels, shop first.
      if (ns !== 'infra')
        Object.assign(inventory.metadata.labels, {
          'phaselog.dev/plan': 'labelled',
          'phaselog.dev/plan-order': String(10 - i),
        });
      return inventory;
    }),
  ]);
  publisher = createChangePublisher(testRedisUrl(), { prefix });
  // The observation clock follows the tick, so interval bounds are the ticks.
  deps = {
    recorder: createRecorder(createSnapshotStore(db)),
    publisher,
    log: testLogger(),
    observe: { now: () => new Date(lastTick) },
  };
  shopReader = (await createToken(createApiTokenStore(db), { name: 'shop', scopes: ['read'], namespaces: ['shop'] }))
    .secret;
  api = await startTestApi({ db, anonymousRead: true, redisUrl: testRedisUrl(), channelPrefix: prefix, plans: PLANS });
});

afterAll(async () => {
  await api?.close();
  await publisher?.close();
  await cluster?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('a plan on real snapshots', () => {
  it('walks through its steps as the phases become Current one after another', async () => {
    await snapshot();
    const first = await plan('site-prod');
    expect(first).toMatchObject({ status: 'InProgress', step: 1, stepCount: 3, stale: false, source: 'config' });
    expect(first?.message).toMatch(/^at step 1 of 3: prod\/infra\/infra InProgress: /);
    expect(first?.phases.map((p) => [p.step, p.ref, p.status, p.phase?.name])).toEqual([
      [1, 'prod/infra/infra', 'InProgress', 'infra'],
      [2, 'prod/platform/platform', 'InProgress', 'platform'],
      [3, 'prod/shop/shop', 'InProgress', 'shop'],
    ]);
    const seen: [string, number | null][] = [];
    for (const ns of STEPS) {
      cluster.emulator.patchStatus(deployment(ns), readyStatus());
      await snapshot();
      const now = await plan('site-prod');
      seen.push([now?.status ?? '', now?.step ?? null]);
    }
    expect(seen).toEqual([
      ['InProgress', 2],
      ['InProgress', 3],
      ['Current', null],
    ]);
    expect((await plan('site-prod'))?.message).toBe('all 3 phases Current');
  });

  it('has a history computed from its phases, exact at the boundaries', async () => {
    const [t1, t2, t3, t4] = ticks as [Date, Date, Date, Date];
    const history = (
      await gqlData<{ plan: { history: Interval[] } }>(api.url, HISTORY, {
        name: 'site-prod',
        from: new Date(t1.getTime() - 60_000).toISOString(),
      })
    ).plan.history;
    // Before the first snapshot no phase had a status: the plan's history starts with it.
    expect(history.map((i) => [i.status, i.step, i.from, i.to])).toEqual([
      ['InProgress', 1, t1.toISOString(), t2.toISOString()],
      ['InProgress', 2, t2.toISOString(), t3.toISOString()],
      ['InProgress', 3, t3.toISOString(), t4.toISOString()],
      ['Current', null, t4.toISOString(), null],
    ]);
    const cut = (
      await gqlData<{ plan: { history: Interval[] } }>(api.url, HISTORY, {
        name: 'site-prod',
        from: t2.toISOString(),
        to: new Date(t3.getTime() + 1).toISOString(),
      })
    ).plan.history;
    expect(cut.map((i) => [i.step, i.from, i.to])).toEqual([
      [2, t2.toISOString(), t3.toISOString()],
      [3, t3.toISOString(), new Date(t3.getTime() + 1).toISOString()],
    ]);
    const before = (
      await gqlData<{ plan: { history: Interval[] } }>(api.url, HISTORY, {
        name: 'site-prod',
        from: new Date(t1.getTime() - 60_000).toISOString(),
        to: t1.toISOString(),
      })
    ).plan.history;
    expect(before).toEqual([]);
    const statusAt = async (at: Date) =>
      (
        await gqlData<{ plan: { statusAt: { status: string; step: number | null } | null } }>(api.url, STATUS_AT, {
          name: 'site-prod',
          at: at.toISOString(),
        })
      ).plan.statusAt;
    expect(await statusAt(new Date(t2.getTime() - 1))).toMatchObject({ status: 'InProgress', step: 1 });
    expect(await statusAt(t2)).toMatchObject({ status: 'InProgress', step: 2 });
    expect(await statusAt(new Date(t4.getTime() - 1))).toMatchObject({ status: 'InProgress', step: 3 });
    expect(await statusAt(t4)).toMatchObject({ status: 'Current', step: null });
    expect(await statusAt(new Date(t1.getTime() - 1))).toBeNull();
    expect(await statusAt(new Date(Date.now() + 3_600_000))).toBeNull();
  });

  it('orders a label plan by plan-order and shows a missing phase as NotFound, not an error', async () => {
    const labelled = await plan('labelled');
    expect(labelled).toMatchObject({ source: 'labels', status: 'Current', warnings: [] });
    expect(labelled?.phases.map((p) => p.ref)).toEqual(['prod/shop/shop', 'prod/platform/platform']);
    const future = await plan('future');
    expect(future).toMatchObject({
      status: 'NotFound',
      step: 2,
      message: 'at step 2 of 2: prod/later/later NotFound: no such phase (yet)',
    });
    expect(future?.phases[1]).toEqual({ step: 2, ref: 'prod/later/later', status: 'NotFound', phase: null });
    const names = (await gqlData<{ plans: { name: string }[] }>(api.url, '{ plans { name } }')).plans.map(
      (p) => p.name,
    );
    expect(names).toEqual(['future', 'labelled', 'shop-only', 'site-prod', 'sneaky']);
  });

  it('gates on the plan: held on fresh reads for the window, not held for a longer one', async () => {
    const t4 = ticks[3] as Date;
    await snapshot();
    const held = (
      await gqlData<{ planGate: Record<string, unknown> }>(api.url, GATE, { plan: 'site-prod', for: '1ms' })
    ).planGate;
    expect(held).toMatchObject({
      passed: true,
      reason: 'HELD',
      status: 'Current',
      heldSince: t4.toISOString(),
      remaining: '0s',
      plan: { name: 'site-prod' },
    });
    const young = (
      await gqlData<{ planGate: Record<string, unknown> }>(api.url, GATE, { plan: 'site-prod', for: '1h' })
    ).planGate;
    expect(young).toMatchObject({ passed: false, reason: 'NOT_HELD_LONG_ENOUGH', heldSince: t4.toISOString() });
    const notCurrent = (
      await gqlData<{ planGate: Record<string, unknown> }>(api.url, GATE, { plan: 'future', for: '1ms' })
    ).planGate;
    expect(notCurrent).toMatchObject({ passed: false, reason: 'NO_STATUS', status: 'NotFound' });
    const missing = await gql(api.url, GATE, { plan: 'nope', for: '1ms' });
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('streams its step changes: replayed after a seq, then live', async () => {
    const seqs = await db.statusChange.findMany({
      where: { scope: 'phase' },
      orderBy: { seq: 'asc' },
      select: { seq: true, at: true },
    });
    // Resume after the last change of the first snapshot: the three steps that followed replay.
    const t1 = (ticks[0] as Date).getTime();
    const after = seqs.filter((s) => s.at.getTime() === t1).at(-1)?.seq as bigint;
    const client = wsClient(api.wsUrl);
    const events: { seq: string; fromStep: number | null; step: number | null; toStatus: string; message: string }[] =
      [];
    let failure: unknown;
    const done = new Promise<void>((resolve) => {
      client.subscribe<{ planStatusChanged: (typeof events)[number] }>(
        {
          query:
            'subscription($after: String) { planStatusChanged(plan: "site-prod", after: $after) { seq fromStep step fromStatus toStatus message } }',
          variables: { after: String(after) },
        },
        {
          next: (r) => (r.errors ? (failure = r.errors) : r.data && events.push(r.data.planStatusChanged)),
          error: (e) => ((failure = e), resolve()),
          complete: resolve,
        },
      );
    });
    const until = async (n: number) => {
      const deadline = Date.now() + 15_000;
      while (events.length < n && failure === undefined && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 25));
      if (failure !== undefined) throw new Error(JSON.stringify(failure));
    };
    try {
      await until(3);
      expect(events.map((e) => [e.fromStep, e.step, e.toStatus])).toEqual([
        [1, 2, 'InProgress'],
        [2, 3, 'InProgress'],
        [3, null, 'Current'],
      ]);
      cluster.emulator.patchStatus(deployment('platform'), rollingStatus());
      await snapshot();
      await until(4);
      expect(events[3]).toMatchObject({ fromStep: null, step: 2, toStatus: 'InProgress' });
      expect(events[3]?.message).toMatch(/^at step 2 of 3: prod\/platform\/platform InProgress/);
      expect(events).toHaveLength(4);
    } finally {
      await client.dispose();
      await done;
    }
    cluster.emulator.patchStatus(deployment('platform'), readyStatus());
    await snapshot();
  });

  it('goes stale, and its gate fails, when a phase cannot be read', async () => {
    const remove = cluster.emulator.injectFault({ effect: 'reset' });
    try {
      lastTick = Math.max(Date.now(), lastTick + 1);
      await snapshotCluster(deps, cluster.client, new Date(lastTick));
    } finally {
      remove();
    }
    const stale = await plan('site-prod');
    expect(stale).toMatchObject({ status: 'Current', stale: true, staleReason: 'UNREACHABLE' });
    const gate = (
      await gqlData<{ planGate: Record<string, unknown> }>(api.url, GATE, { plan: 'site-prod', for: '1ms' })
    ).planGate;
    expect(gate).toMatchObject({ passed: false, reason: 'STALE', staleReason: 'UNREACHABLE' });
    await snapshot();
    expect((await plan('site-prod'))?.stale).toBe(false);
  });
});

describe('the query cost limit', () => {
  it("prices a plan's history by its page and refuses every plan's phases' full history at once", async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const cheap = await gql(api.url, `{ plans { name history(from: "${from}", first: 10) { status from } } }`);
    expect(cheap.errors).toBeUndefined();
    const greedy = await gql(
      api.url,
      `{ plans { history(from: "${from}") { status } phases { phase { history(from: "${from}") { edges { node { message } } } resources { edges { node { key } } } } } } }`,
    );
    expect(greedy.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
  });
});

describe('a token restricted to namespace shop', () => {
  it('sees only plans whose every phase it may see', async () => {
    const names = (
      await gqlData<{ plans: { name: string }[] }>(api.url, '{ plans { name } }', {}, shopReader)
    ).plans.map((p) => p.name);
    expect(names).toEqual(['shop-only']);
    expect(await plan('shop-only', shopReader)).toMatchObject({
      status: 'Current',
      phases: [{ ref: 'prod/shop', phase: { name: 'shop' } }],
    });
    // The hostile cases: a plan naming a phase of another namespace is not there at all.
    expect(await plan('sneaky', shopReader)).toBeNull();
    expect(await plan('site-prod', shopReader)).toBeNull();
    expect(await plan('labelled', shopReader)).toBeNull();
    const gate = await gql(api.url, GATE, { plan: 'sneaky', for: '1ms' }, shopReader);
    expect(gate.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const client = wsClient(api.wsUrl, shopReader);
    try {
      const sub = client
        .iterate({ query: 'subscription { planStatusChanged(plan: "sneaky") { seq } }' })
        [Symbol.asyncIterator]();
      const first = await sub.next();
      expect(first.value?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(first.value?.data ?? null).toBeNull();
    } finally {
      await client.dispose();
    }
  });
});

describe('phaselog plan', () => {
  const out: string[] = [];
  const err: string[] = [];
  const ctx = (): CommandContext => ({
    api: createApiClient({ url: api.url }),
    hasToken: false,
    config: loadConfig({}, mkdtempSync(path.join(tmpdir(), 'phaselog-plan-'))),
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    errIsTerminal: false,
    decorated: false,
    paint: painter(false),
    now: () => new Date(),
  });
  const printed = () => out.splice(0).join('');

  it('status prints the plan line, then its phases in order with step numbers; -o summary counts per phase', async () => {
    cluster.emulator.patchStatus(deployment('shop'), rollingStatus());
    await snapshot();
    expect(await runPlanStatus(ctx(), { plan: 'site-prod', output: 'table', headers: true })).toBe(0);
    const lines = printed().split('\n');
    expect(lines[0]).toMatch(/^site-prod: InProgress \(step 3 of 3\): at step 3 of 3: prod\/shop\/shop InProgress: /);
    expect(lines[1]).toMatch(/^STEP +PHASE +STATUS +SINCE +READY +MESSAGE$/);
    expect(lines.slice(2, 5).map((l) => l.split(/ {2,}/).slice(0, 3))).toEqual([
      ['1', 'prod/infra/infra', 'Current'],
      ['2', 'prod/platform/platform', 'Current'],
      ['3', 'prod/shop/shop', 'InProgress'],
    ]);
    expect(await runPlanStatus(ctx(), { plan: 'site-prod', output: 'summary', headers: true })).toBe(0);
    const summary = printed().split('\n');
    expect(summary[1]).toMatch(
      /^STEP +PHASE +STATUS +CURRENT +INPROGRESS +FAILED +TERMINATING +NOTFOUND +UNKNOWN +TOTAL$/,
    );
    expect(summary[4]?.split(/ +/)).toEqual(['3', 'prod/shop/shop', 'InProgress', '0', '1', '0', '0', '0', '0', '1']);
    expect(await runPlanStatus(ctx(), { plan: 'site-prod', output: 'json', headers: true })).toBe(0);
    expect(JSON.parse(printed())).toMatchObject({
      kind: 'Plan',
      name: 'site-prod',
      status: 'InProgress',
      step: 3,
      phases: [{ step: 1 }, { step: 2 }, { step: 3, ref: 'prod/shop/shop' }],
    });
    await expect(runPlanStatus(ctx(), { plan: 'nope', output: 'table', headers: true })).rejects.toMatchObject({
      exitCode: 4,
    });
  });

  it('list shows every plan and the step it is at', async () => {
    expect(await runPlanList(ctx(), { output: 'table', headers: false })).toBe(0);
    const rows = printed()
      .trim()
      .split('\n')
      .map((l) => l.split(/ {2,}/).slice(0, 3));
    expect(rows).toEqual([
      ['future', 'NotFound', '2/2'],
      ['labelled', 'InProgress', '1/2'],
      ['shop-only', 'InProgress', '1/1'],
      ['site-prod', 'InProgress', '3/3'],
      ['sneaky', 'InProgress', '2/2'],
    ]);
  });

  it('history prints the intervals; gate --plan exits 1 while the plan is not Current, 0 once it has been', async () => {
    expect(await runPlanHistory(ctx(), { plan: 'site-prod', from: '1h', output: 'json', headers: true })).toBe(0);
    const items = (JSON.parse(printed()) as { items: { status: string; step: number | null; to: string | null }[] })
      .items;
    expect(items.slice(-2).map((i) => [i.status, i.step])).toEqual([
      ['Current', null],
      ['InProgress', 3],
    ]);
    expect(items.at(-1)?.to).toBeNull();
    expect(
      await runGate(ctx(), { plan: 'site-prod', for: '1s', status: 'Current', wait: false, output: 'table' }),
    ).toBe(1);
    expect(printed()).toMatch(/^FAIL {2}plan site-prod: plan site-prod is InProgress, not Current: at step 3 of 3/);
    cluster.emulator.patchStatus(deployment('shop'), readyStatus());
    await snapshot();
    expect(
      await runGate(ctx(), {
        plan: 'site-prod',
        for: '1ms',
        status: 'Current',
        wait: true,
        timeout: '20s',
        output: 'table',
      }),
    ).toBe(0);
    expect(printed()).toMatch(/^PASS {2}plan site-prod: plan site-prod has been Current \(all 3 phases\) since /);
    await expect(
      runGate(ctx(), {
        plan: 'site-prod',
        phase: 'prod/shop/shop',
        for: '1s',
        status: 'Current',
        wait: false,
        output: 'table',
      }),
    ).rejects.toMatchObject({ exitCode: 2 });
    await expect(
      runGate(ctx(), { plan: 'nope', for: '1s', status: 'Current', wait: false, output: 'table' }),
    ).rejects.toMatchObject({ exitCode: 4 });
    await expect(runGate(ctx(), { for: '1s', status: 'Current', wait: false, output: 'table' })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('--plan'),
    });
    await expect(
      runGate(ctx(), { plan: 'site-prod', for: '1s', status: 'Failed', wait: false, output: 'table' }),
    ).rejects.toMatchObject({ exitCode: 2 });
  });
});
