/**
 * Clusters sharded over worker processes, as deployed: `phaselog start` with PHASELOG_ROLE=worker,
 * several of them on one Redis and PostgreSQL, reading six emulated clusters from a merged
 * KUBECONFIG. Exclusivity is checked where it matters, on the emulators' request logs (each request
 * names its worker in the User-Agent): no two workers ever had requests open to one cluster at once.
 * The worker ids are fixed, so the rendezvous assignment is known: worker-a owns shard-0, 3, 4 and 5,
 * worker-b shard-1 and 2; worker-c, joining, takes shard-2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import type { RequestRecord } from '../../src/emulator/types.ts';
import { SNAPSHOT_QUEUE } from '../../src/queue/snapshot-jobs.ts';
import { createDb, type Db } from '../../src/store/prisma.ts';
import {
  applyFleet,
  deploymentRef,
  resourceName,
  rollingStatus,
  type FleetShape,
} from '../integration/snapshot/fleet.ts';
import { waitUntil } from '../integration/snapshot/helpers.ts';
import { gqlData, startTestApi, type TestApi } from '../integration/graphql/helpers.ts';
import { cleanEnv, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

const SHAPE: FleetShape = { phases: 2, resourcesPerPhase: 2 };
const NAMES = Array.from({ length: 6 }, (_, i) => `shard-${i}`);
const CLUSTERS = '{ clusters { name owner { worker host since } } }';

describe('workers sharding the clusters', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-sharded-'));
  const prefix = uniquePrefix('sharded');
  const emulators = new Map<string, Emulator>();
  const workers = new Map<string, PhaselogProcess>();
  let database: TestDatabase;
  let db: Db;
  let api: TestApi;
  let kubeconfig: string;

  beforeAll(async () => {
    database = await createTestDatabase('sharded');
    db = createDb(database.url, { poolSize: 2 });
    const files: string[] = [];
    for (const name of NAMES) {
      // Each kubeconfig names its own cluster and user: merged kubeconfigs keep the first entry of a name.
      const em = await startEmulator({ port: 0, clusterName: name });
      applyFleet(em, SHAPE);
      emulators.set(name, em);
      const file = path.join(dir, `${name}.yaml`);
      writeFileSync(file, em.kubeconfig({ contextName: name }), { mode: 0o600 });
      files.push(file);
    }
    kubeconfig = files.join(':');
    api = await startTestApi({
      db,
      anonymousRead: true,
      redisUrl: testRedisUrl(),
      channelPrefix: prefix,
      snapshotQueue: { name: SNAPSHOT_QUEUE, prefix },
    });
  });
  afterAll(async () => {
    for (const w of workers.values()) w.child.kill('SIGKILL');
    await api?.close();
    for (const em of emulators.values()) await em.close();
    await db?.$disconnect();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startWorker(id: string): Promise<void> {
    const proc = runPhaselog(
      ['start'],
      cleanEnv({
        DATABASE_URL: database.url,
        REDIS_URL: testRedisUrl(),
        PHASELOG_REDIS_PREFIX: prefix,
        PHASELOG_ROLE: 'worker',
        PHASELOG_WORKER_ID: id,
        KUBECONFIG: kubeconfig,
        PHASELOG_LOG_FORMAT: 'json',
        PHASELOG_SNAPSHOT_INTERVAL: '5s',
        PHASELOG_STATE_DIR: path.join(dir, id),
      }),
    );
    workers.set(id, proc);
    await proc.waitForLog((l) => l.msg === 'snapshot workers started', 60_000);
  }

  async function owners(): Promise<Record<string, string | null>> {
    const { clusters } = await gqlData<{ clusters: { name: string; owner: { worker: string } | null }[] }>(
      api.url,
      CLUSTERS,
    );
    return Object.fromEntries(clusters.map((c) => [c.name, c.owner?.worker ?? null]));
  }

  async function ownedAs(expected: Record<string, string>, timeoutMs = 30_000): Promise<void> {
    let seen: Record<string, string | null> = {};
    await waitUntil(
      async () => {
        seen = await owners();
        return NAMES.every((n) => seen[n] === expected[n]);
      },
      `owners ${JSON.stringify(expected)} (last seen ${JSON.stringify(seen)})`,
      timeoutMs,
    );
  }

  /** Per cluster, the requests of two different worker instances that were open at the same time. */
  function overlaps(): string[] {
    const found: string[] = [];
    const now = Date.now();
    for (const [name, em] of emulators) {
      const byInstance = new Map<string, { from: number; to: number }[]>();
      for (const r of em.requests() as RequestRecord[]) {
        if (r.userAgent === undefined || r.at === undefined) continue;
        const spans = byInstance.get(r.userAgent) ?? [];
        spans.push({ from: r.at, to: r.endedAt ?? now });
        byInstance.set(r.userAgent, spans);
      }
      const instances = [...byInstance];
      for (let i = 0; i < instances.length; i++) {
        for (let j = i + 1; j < instances.length; j++) {
          const [a, spansA] = instances[i] ?? ['', []];
          const [b, spansB] = instances[j] ?? ['', []];
          const lastA = Math.max(...spansA.map((s) => s.to));
          const firstA = Math.min(...spansA.map((s) => s.from));
          const lastB = Math.max(...spansB.map((s) => s.to));
          const firstB = Math.min(...spansB.map((s) => s.from));
          // One reads the cluster after the other stopped, never while it still reads.
          if (!(lastA <= firstB || lastB <= firstA))
            found.push(`${name}: ${a} [${firstA}..${lastA}] and ${b} [${firstB}..${lastB}]`);
        }
      }
    }
    return found;
  }

  /** Open watches per cluster, by the worker id in their User-Agent. */
  function openWatches(): Map<string, Set<string>> {
    return new Map(
      [...emulators].map(([name, em]) => [
        name,
        new Set(
          em
            .requests()
            .filter((r) => r.verb === 'watch' && r.endedAt === undefined)
            .map((r) => /^phaselog-worker\/(.+)#[0-9a-f]+$/.exec(r.userAgent ?? '')?.[1] ?? `?${r.userAgent}`),
        ),
      ]),
    );
  }

  /** Whether the change log holds the Deployment's move to InProgress. */
  async function recorded(cluster: string, name: string): Promise<boolean> {
    const rows = await db.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM "StatusChange" sc JOIN "Cluster" c ON c.id = sc."clusterId" JOIN "Resource" r ON r.id = sc."resourceId"
      WHERE c.name = ${cluster} AND r.key = ${`apps/Deployment/team-0/${name}`} AND sc."toStatus" = 'InProgress'`;
    return Number(rows[0]?.n ?? 0) > 0;
  }

  it('gives each cluster to one worker, which alone watches and snapshots it; the API and the CLI say which', async () => {
    await startWorker('worker-a');
    await startWorker('worker-b');
    const expected = {
      'shard-0': 'worker-a',
      'shard-1': 'worker-b',
      'shard-2': 'worker-b',
      'shard-3': 'worker-a',
      'shard-4': 'worker-a',
      'shard-5': 'worker-a',
    };
    await ownedAs(expected);
    await waitUntil(
      () =>
        [...openWatches()].every(
          ([name, watchers]) => watchers.size === 1 && watchers.has(expected[name as keyof typeof expected]),
        ),
      'each cluster watched by its owner only',
      30_000,
    );
    // A change in every cluster is recorded (live, by the owner's watch).
    for (const em of emulators.values()) em.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus());
    await waitUntil(
      async () => (await Promise.all(NAMES.map((n) => recorded(n, resourceName(0, 0))))).every(Boolean),
      'the change in every cluster to be recorded',
      30_000,
    );
    expect(overlaps()).toEqual([]);

    const cli = runPhaselog(['clusters', '-o', 'wide', '--url', api.url], cleanEnv({ NO_COLOR: '1' }));
    expect(await cli.exited).toBe(0);
    const lines = cli.stdout().trim().split('\n');
    expect(lines[0]).toMatch(
      /^NAME\s+STATE\s+REACHABLE\s+LAST GOOD READ\s+LAST OBSERVED\s+OWNER\s+OWNER SINCE\s+LABELS$/,
    );
    for (const [name, worker] of Object.entries(expected))
      expect(lines.find((l) => l.startsWith(`${name} `))).toMatch(new RegExp(`\\s${worker} \\(`));
  }, 180_000);

  it('moves only the clusters a joining worker wins, with no moment two workers read one', async () => {
    await startWorker('worker-c');
    await ownedAs({
      'shard-0': 'worker-a',
      'shard-1': 'worker-b',
      'shard-2': 'worker-c',
      'shard-3': 'worker-a',
      'shard-4': 'worker-a',
      'shard-5': 'worker-a',
    });
    await waitUntil(
      () => openWatches().get('shard-2')?.has('worker-c') === true && openWatches().get('shard-2')?.size === 1,
      'shard-2 watched by worker-c only',
      30_000,
    );
    expect(overlaps()).toEqual([]);
  }, 120_000);

  it("takes a SIGKILLed worker's clusters over within 15 s, and records what changed meanwhile", async () => {
    const victim = workers.get('worker-a');
    victim?.child.kill('SIGKILL');
    await victim?.exited;
    const killedAt = Date.now();
    const orphaned = ['shard-0', 'shard-3', 'shard-4', 'shard-5'];
    // Changes while nobody owns these clusters: the next owner's first snapshot must record them.
    for (const name of orphaned) emulators.get(name)?.patchStatus(deploymentRef(1, 1, SHAPE), rollingStatus());
    await waitUntil(
      async () => {
        const now = await owners();
        return orphaned.every((n) => now[n] === 'worker-b' || now[n] === 'worker-c');
      },
      'the orphaned clusters to be owned again',
      20_000,
    );
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThanOrEqual(15_000);
    await waitUntil(
      async () => (await Promise.all(orphaned.map((n) => recorded(n, resourceName(1, 1))))).every(Boolean),
      'the changes made during the takeover to be recorded',
      30_000,
    );
    // The dead worker's requests ended (its sockets closed with it) before the new owners began.
    expect(overlaps()).toEqual([]);
    const watchers = openWatches();
    for (const name of orphaned) expect([...(watchers.get(name) ?? [])]).not.toContain('worker-a');
  }, 120_000);
});
