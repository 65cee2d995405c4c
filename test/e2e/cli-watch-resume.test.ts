/**
 * `phaselog status -w -o json` as a pipeline consumes it: NDJSON, one change per line with its seq.
 * The server restarts in the middle and a change happens while it is down: the stream reconnects by
 * itself and carries on after the last change it printed, so every phase change the log holds after
 * the list's head comes out once, in order. `--after SEQ` replays the same changes to a consumer that
 * stopped reading.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { cliUtilsInventory, namespaceObject, readyDeployment, ref } from '../../src/demo/objects.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, freePort } from '../helpers/process.ts';
import type { PhaselogProcess } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import type { TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let database: TestDatabase;
let port: number;
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-watch-resume-'));
const redisPrefix = uniquePrefix('watch-resume');
const running: PhaselogProcess[] = [];

const url = () => `http://127.0.0.1:${port}/graphql`;

async function startServer(): Promise<PhaselogProcess> {
  const proc = runPhaselog(
    ['start'],
    cleanEnv({
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_REDIS_PREFIX: redisPrefix,
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_PORT: String(port),
      PHASELOG_SNAPSHOT_INTERVAL: '300ms',
      PHASELOG_CONFIG: path.join(dir, 'phaselog.yaml'),
    }),
  );
  running.push(proc);
  await proc.waitForLog((l) => l.msg === 'phaselog API listening', 90_000);
  return proc;
}

async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(url(), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data: T; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

/** Every phase change the log holds after `after`, by seq. */
async function loggedPhaseChanges(after: string): Promise<string[]> {
  const seqs: string[] = [];
  let cursor: string | null = after;
  for (;;) {
    const page: {
      statusChanges: {
        edges: { node: { seq: string } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
    } = await graphql(
      'query($after: String) { statusChanges(filter: { scopes: [phase] }, after: $after, first: 100) { edges { node { seq } } pageInfo { hasNextPage endCursor } } }',
      { after: cursor },
    );
    seqs.push(...page.statusChanges.edges.map((e) => e.node.seq));
    if (!page.statusChanges.pageInfo.hasNextPage) return seqs;
    cursor = page.statusChanges.pageInfo.endCursor;
  }
}

type Line = {
  kind: 'Phase' | 'StatusChange';
  seq: string;
  fromStatus?: string | null;
  toStatus?: string | null;
  status?: string;
};
const lines = (proc: PhaselogProcess): Line[] =>
  proc
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
const changes = (proc: PhaselogProcess) => lines(proc).filter((l) => l.kind === 'StatusChange');

/** A Deployment whose new generation the controller has not observed yet (InProgress), or has (Current). */
function deployment(generation: number, observed: boolean): Record<string, unknown> {
  const ready = readyDeployment('shop', 'web', 2, `nginx:1.${generation}`);
  return {
    ...ready,
    metadata: { ...(ready.metadata as object), generation },
    status: { ...(ready.status as object), observedGeneration: observed ? generation : generation - 1 },
  };
}

beforeAll(async () => {
  em = await startEmulator({ port: 0 });
  em.apply([
    namespaceObject('shop'),
    deployment(1, true),
    cliUtilsInventory('shop', 'release', [ref('Deployment', 'shop', 'web')]),
  ]);
  writeFileSync(path.join(dir, 'phaselog.yaml'), `clusters:\n  - name: test\n    server: ${em.url}\n`);
  database = await createTestDatabase('watch_resume');
  port = await freePort();
}, 60_000);

afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await em?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('phaselog status --watch -o json', () => {
  it('streams NDJSON through a server restart with no change lost or repeated, and --after replays them', async () => {
    let server = await startServer();
    await waitFor(
      async () =>
        (
          await graphql<{ phases: { edges: { node: { status: string | null } }[] } }>(
            '{ phases { edges { node { status } } } }',
          )
        ).phases.edges[0]?.node.status === 'Current',
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: 'the phase to be recorded Current',
      },
    );

    const watch = runPhaselog(['status', '--watch', '-o', 'json'], cleanEnv({ PHASELOG_URL: url() }));
    running.push(watch);
    await waitFor(() => lines(watch).length > 0, { timeoutMs: 15_000, intervalMs: 50, what: 'the list line' });
    const [listed] = lines(watch);
    expect(listed).toMatchObject({ kind: 'Phase', status: 'Current' });
    const head = listed?.seq as string;

    em.apply(deployment(2, false));
    await waitFor(() => changes(watch).some((c) => c.toStatus === 'InProgress'), {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: 'the first change',
    });

    server.child.kill('SIGTERM');
    expect(await exitCodeWithin(server, 15_000)).toBe(0);
    await waitFor(() => watch.stderr().includes('connection lost; reconnecting'), {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'the watch to notice',
    });
    // While nobody records: the rollout completes. The restarted server's first snapshot records it.
    em.apply(deployment(2, true));
    server = await startServer();
    await waitFor(() => changes(watch).some((c) => c.fromStatus === 'InProgress' && c.toStatus === 'Current'), {
      timeoutMs: 45_000,
      intervalMs: 100,
      what: 'the change made while the server was down',
    }).catch(async (error: Error) => {
      throw new Error(
        `${error.message}\nwatch stdout:\n${watch.stdout()}\nwatch stderr:\n${watch.stderr()}\nlogged: ${(await loggedPhaseChanges('0')).join(',')}`,
      );
    });
    expect(watch.stderr()).toMatch(/reconnected; resuming after change \d+/);

    em.apply(deployment(3, false));
    await waitFor(() => changes(watch).filter((c) => c.toStatus === 'InProgress').length === 2, {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: 'a change after the restart',
    });
    watch.child.kill('SIGINT');
    expect(await exitCodeWithin(watch, 10_000)).toBe(0);

    // Exactly the log's phase changes after the head, each once and in order.
    const streamed = changes(watch).map((c) => c.seq);
    expect(streamed).toEqual(await loggedPhaseChanges(head));
    expect(streamed.map((c) => changes(watch).find((l) => l.seq === c)?.toStatus)).toEqual([
      'InProgress',
      'Current',
      'InProgress',
    ]);

    // A consumer that stopped after the list resumes with --after and gets the same changes.
    const resumed = runPhaselog(
      ['status', '--watch', '-o', 'json', '--after', head],
      cleanEnv({ PHASELOG_URL: url() }),
    );
    running.push(resumed);
    await waitFor(() => changes(resumed).length >= streamed.length, {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'the replay',
    });
    resumed.child.kill('SIGINT');
    expect(await exitCodeWithin(resumed, 10_000)).toBe(0);
    expect(lines(resumed).every((l) => l.kind === 'StatusChange')).toBe(true);
    expect(changes(resumed).map((c) => c.seq)).toEqual(streamed);

    server.child.kill('SIGTERM');
    expect(await exitCodeWithin(server, 15_000)).toBe(0);
  }, 180_000);
});
