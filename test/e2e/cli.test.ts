/**
 * The `phaselog` CLI against a running phaselog (real Postgres, Redis and workers) reading an
 * emulated cluster: tables and JSON, --watch receiving a live change, gate exit codes, tokens, and
 * helpful errors.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPhaselog } from '../../src/app.ts';
import type { RunningPhaselog } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { startEmulator } from '../../src/emulator/index.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { cliUtilsInventory, namespaceObject, readyDeployment } from '../../src/demo/objects.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { shopRelease } from '../helpers/demo-cluster.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import { createTestDatabase, freshDatabaseUrl, testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import type { TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let database: TestDatabase;
let phaselog: RunningPhaselog;
let url: string;
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-cli-'));

async function graphql<T>(query: string): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return ((await res.json()) as { data: T }).data;
}

async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = runPhaselog(args, cleanEnv({ PHASELOG_URL: url, ...env }));
  const code = await exitCodeWithin(proc, 30_000);
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

beforeAll(async () => {
  em = await startEmulator({ port: 0 });
  em.apply(shopRelease());
  writeFileSync(path.join(dir, 'phaselog.yaml'), `clusters:\n  - name: test\n    server: ${em.url}\n`);
  database = await createTestDatabase('cli');
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_PORT: '0',
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_SNAPSHOT_INTERVAL: '300ms',
      PHASELOG_DEMO: 'false',
      PHASELOG_REDIS_PREFIX: uniquePrefix('cli'),
    },
    dir,
  );
  phaselog = await startPhaselog(config, pino({ level: 'silent' }));
  url = `${phaselog.url}/graphql`;
  await waitFor(
    async () => {
      const data = await graphql<{ phases: { edges: { node: { status: string | null } }[] } }>(
        '{ phases { edges { node { status } } } }',
      );
      return data.phases.edges[0]?.node.status === 'Current';
    },
    { timeoutMs: 30_000, intervalMs: 200, what: 'the release phase to be recorded Current' },
  );
}, 90_000);

afterAll(async () => {
  await phaselog?.close();
  await em?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('phaselog CLI', () => {
  it('lists phases in a table like flux get', async () => {
    const { code, stdout } = await cli(['status']);
    expect(code).toBe(0);
    const [header, row] = stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+CLUSTER\s+STATUS\s+SINCE\s+MESSAGE$/);
    expect(row).toMatch(/^shop\/release\s+test\s+Current\s+(\d+s ago|just now)\s+/);
  });

  it('prints JSON and YAML as a List of flat items with RFC 3339 times', async () => {
    const { code, stdout } = await cli(['status', '-o', 'json']);
    expect(code).toBe(0);
    const list = JSON.parse(stdout) as {
      kind: string;
      items: {
        kind: string;
        name: string;
        cluster: string;
        status: string;
        since: string;
        summary: { total: number };
      }[];
    };
    expect(list.kind).toBe('List');
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({
      kind: 'Phase',
      name: 'release',
      cluster: 'test',
      status: 'Current',
      summary: { total: 2 },
    });
    expect(list.items[0]?.since).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const one = await cli(['status', 'release', '-o', 'yaml']);
    expect(one.stdout).toMatch(/^kind: Phase\n/);
    expect(one.stdout).toMatch(/\nresources:\n {2}- ref: /);
    expect(one.stdout).toMatch(/ {2}- ref: apps\/Deployment\/shop\/web\n/);
    expect(one.stdout).toMatch(/ {2}- ref: Service\/shop\/web\n/);
  });

  it('filters like kubectl: -n, --cluster, --status, -l; and -o name lists phase names to pipe on', async () => {
    expect((await cli(['status', '-o', 'name'])).stdout).toBe('test/shop/release\n');
    expect((await cli(['status', '-n', 'shop', '-o', 'name'])).stdout).toBe('test/shop/release\n');
    const elsewhere = await cli(['status', '-n', 'billing']);
    expect(elsewhere).toMatchObject({ code: 0, stdout: '' });
    expect(elsewhere.stderr).toBe('no phases found\n');
    expect((await cli(['status', '--status', 'Failed', '-o', 'name'])).stdout).toBe('');
    expect((await cli(['status', '--status', 'failed,current', '-o', 'name'])).stdout).toBe('test/shop/release\n');
    expect((await cli(['status', '--cluster', 'test', '--cluster', 'other', '-o', 'name'])).stdout).toBe(
      'test/shop/release\n',
    );
    expect((await cli(['status', '--cluster', 'other', '-o', 'name'])).stdout).toBe('');
    expect((await cli(['status', '-l', 'team=nobody', '-o', 'name'])).stdout).toBe('');
    const setBased = await cli(['status', '-l', 'team in (a,b)']);
    expect(setBased.code).toBe(2);
    expect(setBased.stderr).toMatch(/only key=value terms are supported/);
    // --cluster and -n fill in what a bare name leaves out, and must agree with what it says.
    expect((await cli(['status', 'release', '--cluster', 'test', '-n', 'shop', '-o', 'name'])).stdout).toBe(
      'test/shop/release\n',
    );
    const disagree = await cli(['status', 'test/shop/release', '-n', 'billing']);
    expect(disagree.code).toBe(2);
    expect(disagree.stderr).toMatch(/names namespace shop, but --namespace says billing/);
  });

  it('prints no colour or symbols into a pipe, and both when colour is forced', async () => {
    const piped = await cli(['status', 'release']);
    expect(piped.stdout).not.toContain('\x1b[');
    expect(piped.stdout).not.toMatch(/✔/);
    const forced = await cli(['status', 'release'], { FORCE_COLOR: '1' });
    expect(forced.stdout).toContain('\x1b[32m✔ Current\x1b[39m');
    const refused = await cli(['status', 'release'], { FORCE_COLOR: '', NO_COLOR: '1' });
    expect(refused.stdout).not.toContain('\x1b[');
  });

  it('leaves out headers with --no-headers, and -o wide adds columns', async () => {
    const bare = await cli(['status', '--no-headers']);
    expect(bare.stdout).toMatch(/^shop\/release\s+test\s+Current\s/);
    expect(bare.stdout.trim().split('\n')).toHaveLength(1);
    const wide = await cli(['status', '-o', 'wide']);
    expect(wide.stdout).toMatch(
      /^NAME\s+CLUSTER\s+STATUS\s+SINCE\s+CURRENT\s+SOURCE\s+WORST RESOURCE\s+LAST GOOD READ\s+MESSAGE\n/,
    );
    expect(wide.stdout).toMatch(/\s2\/2\s+cli-utils\s+-\s/);
  });

  it('refuses a flag the command does not take, in one line with a hint', async () => {
    const { code, stderr, stdout } = await cli(['status', '--out', 'r.docx']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^phaselog: unknown option '--out'.*; see 'phaselog status --help'\n$/);
  });

  it('answers version with both sides, and shows the server it asked', async () => {
    const { code, stdout } = await cli(['version', '-o', 'json']);
    expect(code).toBe(0);
    const versions = JSON.parse(stdout) as { client: { version: string }; server: { version: string; role: string } };
    expect(versions.server.version).toBe(versions.client.version);
    expect(versions.server.role).toBe('all');
    const down = await cli(['version'], { PHASELOG_URL: 'http://127.0.0.1:1/graphql' });
    expect(down.code).toBe(3);
    expect(down.stdout).toMatch(/^Client Version: /);
  });

  it('shows one phase with its resources', async () => {
    const { code, stdout } = await cli(['status', 'test/shop/release']);
    expect(code).toBe(0);
    // The release's inventory records actuation and reconcile: the APPLIED column shows them.
    expect(stdout).toMatch(/RESOURCE\s+STATUS\s+SINCE\s+APPLIED\s+MESSAGE/);
    expect(stdout).toMatch(/apps\/Deployment\/shop\/web\s+Current\s+\S.*\s+Succeeded\/Succeeded\s/);
    expect(stdout).toMatch(/\nService\/shop\/web\s+Current/);
  });

  it('lists the manifest and the history', async () => {
    const manifest = await cli(['manifest', 'release']);
    expect(manifest.code).toBe(0);
    expect(manifest.stdout).toMatch(/apps\s+Deployment\s+shop\s+web/);
    expect(manifest.stdout).toMatch(/\(core\)\s+Service\s+shop\s+web/);
    const history = await cli(['history', 'release']);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/^FROM\s+TO\s+DURATION\s+STATUS\s+MESSAGE/);
    expect(history.stdout).toMatch(/\n(\d+[smhd]\S* ago|just now)\s+now\s+\S+\s+Current/);
    const changes = await cli(['history', 'release', '--all']);
    expect(changes.stdout).toMatch(/^TIME\s+WHAT\s+FROM\s+TO\s+MESSAGE\n/);
    expect(changes.stdout).toMatch(/ ago\s+apps\/Deployment\/shop\/web\s+-\s+Current/);
    expect(changes.stdout).not.toMatch(/\s\/\w/); // never a ref with an empty group's leading slash
  });

  it('gates: exit 0 when the status held for the window, 1 when not', async () => {
    await waitFor(async () => (await cli(['gate', 'release', '--for', '1s'])).code === 0, {
      timeoutMs: 15_000,
      intervalMs: 300,
      what: 'the gate to pass',
    });
    const passed = await cli(['gate', 'release', '--status', 'Current', '--for', '1s']);
    expect(passed.stdout).toMatch(/^PASS {2}test\/shop\/release: /);
    const failed = await cli(['gate', 'release', '--status', 'Failed', '--for', '1m']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^FAIL {2}test\/shop\/release: /);
  });

  it('gate --wait blocks until the gate passes, and gives up with exit 1 at --timeout', async () => {
    const passed = await cli(['gate', 'release', '--for', '2s', '--wait', '--timeout', '20s']);
    expect(passed.code).toBe(0);
    expect(passed.stdout).toMatch(/^PASS {2}test\/shop\/release: /);
    const timedOut = await cli(['gate', 'release', '--status', 'Failed', '--for', '1m', '--wait', '--timeout', '2s']);
    expect(timedOut.code).toBe(1);
    expect(timedOut.stdout).toMatch(/^FAIL {2}test\/shop\/release: timed out after 2s: /);
    // Not a terminal: one progress line per state, not one per poll.
    expect(timedOut.stderr.trim().split('\n')).toHaveLength(1);
    expect(timedOut.stderr).toMatch(/^waiting \(0s of at most 2s\): /);
  });

  it.each([
    [['status', 'no-such-phase'], 4, /no phase "no-such-phase"/],
    [['history', 'release', '--from', 'yesterday'], 2, /"yesterday" is not a time/],
    [['gate', 'release', '--for', 'soon'], 2, /--for needs a positive duration such as 30s, 10m or 1h; got "soon"/],
    [['gate', 'release', '--for', '600'], 2, /--for needs a positive duration \(a number needs a unit: 600s, 600m\)/],
    [['gate', 'release', '--for', '1m', '--timeout', '5m'], 2, /--timeout bounds --wait: use it with --wait/],
    [['status', '-o', 'xml'], 2, /argument 'xml' is invalid\. Allowed choices are table, wide, json, yaml, name/],
    [['status', '--at', '1h', '--watch'], 2, /--at shows a past moment; it cannot be combined with --watch/],
    [['status', 'release', '--status', 'Failed'], 2, /do not apply to one named phase/],
    [['status', 'a/b/c/d'], 2, /is not a phase name/],
    [
      ['report', '--from', '1h', '--out', 'r.docx'],
      2,
      /cannot tell the report format from "r\.docx": name a \.json, \.csv, \.md or \.html file, or give --format/,
    ],
  ])('explains a mistake: %j', async (args, exitCode, message) => {
    const { code, stderr } = await cli(args);
    expect(code).toBe(exitCode);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it("takes the server's base URL (what the start-up line and the UI show) as well as its /graphql", async () => {
    const { code, stdout } = await cli(['status', '-o', 'name'], { PHASELOG_URL: url.replace(/\/graphql$/, '') });
    expect(code).toBe(0);
    expect(stdout).toBe('test/shop/release\n');
  });

  it('says when the server is not there', async () => {
    const { code, stderr } = await cli(['status'], { PHASELOG_URL: 'http://127.0.0.1:1/graphql' });
    expect(code).toBe(3);
    expect(stderr).toMatch(/cannot reach phaselog at http:\/\/127\.0\.0\.1:1\/graphql/);
  });

  it('streams a status change with --watch, as table rows and as NDJSON with seqs', async () => {
    const table = runPhaselog(['status', 'release', '--watch'], cleanEnv({ PHASELOG_URL: url }));
    const json = runPhaselog(['status', '--watch', '-o', 'json'], cleanEnv({ PHASELOG_URL: url }));
    await waitFor(() => table.stdout().includes('RESOURCE') && json.stdout().includes('"kind":"Phase"'), {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'the first table and the first NDJSON line',
    });
    // A new image: generation 2 not yet observed, so the Deployment (and the phase) is InProgress.
    const web = readyDeployment('shop', 'web', 2, 'nginx:1.28');
    em.apply({ ...web, metadata: { ...(web.metadata as object), generation: 2 } });
    await waitFor(
      () => /Current -> InProgress/.test(table.stdout()) && json.stdout().includes('"kind":"StatusChange"'),
      { timeoutMs: 20_000, intervalMs: 50, what: `a change line in:\n${table.stdout()}\n${json.stdout()}` },
    );
    table.child.kill('SIGINT');
    json.child.kill('SIGINT');
    expect(await exitCodeWithin(table, 10_000)).toBe(0);
    expect(await exitCodeWithin(json, 10_000)).toBe(0);
    const lines = json
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; seq: string; phase?: string; toStatus?: string });
    expect(lines[0]).toMatchObject({ kind: 'Phase', name: 'release', status: 'Current' });
    const change = lines.find((l) => l.kind === 'StatusChange');
    expect(change).toMatchObject({ phase: 'test/shop/release', fromStatus: 'Current', toStatus: 'InProgress' });
    // The list's seq is the change log's head when it was read: the change comes after it.
    expect(BigInt(change?.seq ?? '0')).toBeGreaterThan(BigInt(lines[0]?.seq ?? '0'));
    em.apply(readyDeployment('shop', 'web', 2, 'nginx:1.28'));
  });

  it('writes audit reports in every format', async () => {
    const json = await cli(['report', '--from', '1h']);
    expect(json.code).toBe(0);
    const figures = JSON.parse(json.stdout) as { phases: { name: string; availability: number | null }[] };
    expect(figures.phases.map((p) => p.name)).toEqual(['release']);
    const out = path.join(dir, 'report.html');
    const html = await cli(['report', '--from', '1h', '--out', out, '--cluster', 'test']);
    expect(html.code).toBe(0);
    expect(html.stderr).toMatch(
      /wrote html report on 1 phases to .*report\.html: \d+ failures \(\d+ restored\), \d+ departures from Current\n/,
    );
    const csv = await cli(['report', '--from', '1h', '--format', 'csv', '--phase', 'nothing-by-that-name']);
    expect(csv.stdout.trim().split('\n')).toHaveLength(1); // the header only
    const bad = await cli(['report', '--from', 'now', '--to', '1h']);
    expect(bad.code).toBe(2);
  }, 60_000);

  it('creates the first admin token against the database, then manages tokens through the API', async () => {
    const created = await cli(['token', 'create', 'ci-admin', '--admin'], { DATABASE_URL: database.url });
    expect(created.code).toBe(0);
    const secret = created.stdout.split('\n')[0] as string;
    expect(secret).toMatch(/^plg_/);
    const list = await cli(['token', 'list', '-o', 'json'], { PHASELOG_TOKEN: secret });
    expect(list.code).toBe(0);
    expect(
      (JSON.parse(list.stdout) as { items: { name: string; scopes: string[] }[] }).items.map((t) => [t.name, t.scopes]),
    ).toEqual([['ci-admin', ['admin']]]);
    const reader = await cli(['token', 'create', 'ci-reader', '--cluster', 'test'], { PHASELOG_TOKEN: secret });
    expect(reader.code).toBe(0);
    const revoked = await cli(['token', 'revoke', 'ci-reader'], { PHASELOG_TOKEN: secret });
    expect(revoked.stdout).toBe('token "ci-reader" revoked\n');
    const denied = await cli(['token', 'list'], { PHASELOG_TOKEN: 'plg_not-a-real-token' });
    expect(denied.code).toBe(5);
  }, 120_000);

  it('makes the first admin token on a database nothing has started on yet (it migrates first)', async () => {
    const empty = freshDatabaseUrl('cli_token_bootstrap');
    try {
      const created = await cli(['token', 'create', 'first-admin', '--admin'], { DATABASE_URL: empty.url });
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const listed = await cli(['token', 'list', '-o', 'json'], { DATABASE_URL: empty.url });
      expect(
        (JSON.parse(listed.stdout) as { items: { name: string; scopes: string[] }[] }).items.map((t) => [
          t.name,
          t.scopes,
        ]),
      ).toEqual([['first-admin', ['admin']]]);
    } finally {
      await empty.drop();
    }
  }, 120_000);

  it('a cluster-restricted admin token manages only tokens within its cluster', async () => {
    const root = (await cli(['token', 'create', 'ci-root', '--admin'], { DATABASE_URL: database.url })).stdout.split(
      '\n',
    )[0] as string;
    const scoped = await cli(['token', 'create', 'ci-test-admin', '--admin', '--cluster', 'test'], {
      PHASELOG_TOKEN: root,
    });
    expect(scoped.code).toBe(0);
    const secret = scoped.stdout.split('\n')[0] as string;
    const escape = await cli(['token', 'create', 'ci-escape', '--admin'], { PHASELOG_TOKEN: secret });
    expect(escape.code).toBe(5);
    expect(escape.stderr).toMatch(/restricted to clusters test may only create tokens restricted to some of them/);
    expect(
      (await cli(['token', 'create', 'ci-test-reader', '--cluster', 'test'], { PHASELOG_TOKEN: secret })).code,
    ).toBe(0);
    const list = await cli(['token', 'list', '-o', 'json'], { PHASELOG_TOKEN: secret });
    const names = (JSON.parse(list.stdout) as { items: { name: string; clusters: string[] }[] }).items.map((t) => [
      t.name,
      t.clusters,
    ]);
    expect(names.filter(([name]) => name !== 'ci-reader')).toEqual([
      ['ci-test-admin', ['test']],
      ['ci-test-reader', ['test']],
    ]);
    // A broader token is answered as a name no token has: its existence is not the restricted admin's to learn.
    const refused = await cli(['token', 'revoke', 'ci-root'], { PHASELOG_TOKEN: secret });
    const nobody = await cli(['token', 'revoke', 'ci-nobody'], { PHASELOG_TOKEN: secret });
    expect([refused.code, refused.stderr]).toEqual([4, nobody.stderr.replace('ci-nobody', 'ci-root')]);
    expect(refused.stderr).toMatch(/no active token named "ci-root" that your token may manage/);
    expect((await cli(['token', 'revoke', 'ci-test-reader'], { PHASELOG_TOKEN: secret })).stdout).toBe(
      'token "ci-test-reader" revoked\n',
    );
  }, 120_000);

  // Last: it adds a phase, which the report and list tests above do not expect.
  it("-o rsync shows each member's applier status with counts, and -o json carries it", async () => {
    // The Deployment applied but not yet seen reconciled (reconcile Pending), as kpt live apply records mid-apply.
    em.apply([
      namespaceObject('billing'),
      {
        ...cliUtilsInventory('billing', 'rollout', []),
        data: {
          shop_web_apps_Deployment: '{"strategy":"Apply","actuation":"Succeeded","reconcile":"Pending"}',
          shop_web__Service: '{"strategy":"Apply","actuation":"Succeeded","reconcile":"Succeeded"}',
        },
      },
    ]);
    await waitFor(
      async () =>
        (await cli(['status', 'test/billing/rollout', '-o', 'json'])).stdout.includes('"reconcile": "Pending"'),
      { timeoutMs: 20_000, intervalMs: 200, what: 'the rollout phase with its applier status' },
    );
    const terminal = await cli(['status', 'test/billing/rollout', '-o', 'rsync'], { FORCE_COLOR: '1' });
    expect(terminal.code).toBe(0);
    expect(terminal.stdout).toContain('\x1b[32m✔ Current\x1b[39m');
    const plain = stripVTControlCharacters(terminal.stdout);
    expect(plain).toMatch(/RESOURCE\s+STATUS\s+STRATEGY\s+ACTUATION\s+RECONCILE\s+SYNC\n/);
    expect(plain).toMatch(/apps\/Deployment\/shop\/web\s+✔ Current\s+Apply\s+Succeeded\s+Pending\s+-\n/);
    expect(plain).toMatch(/Service\/shop\/web\s+✔ Current\s+Apply\s+Succeeded\s+Succeeded\s+-\n/);
    expect(plain).toMatch(/FIELD\s+VALUE\s+MEMBERS\n/);
    expect(plain).toMatch(/\nstrategy\s+Apply\s+2\n/);
    expect(plain).toMatch(/\nactuation\s+Succeeded\s+2\n/);
    expect(plain).toMatch(/\nreconcile\s+Pending\s+1\n/);
    expect(plain).toMatch(/\nreconcile\s+Succeeded\s+1\n/);

    const json = await cli(['status', 'test/billing/rollout', '-o', 'json']);
    const item = JSON.parse(json.stdout) as {
      appliedSummary: { reconcile: { value: string; count: number }[] };
      resources: { ref: string; applied: Record<string, string | null> | null }[];
    };
    expect(item.resources.map((r) => [r.ref, r.applied])).toEqual([
      ['Service/shop/web', { strategy: 'Apply', actuation: 'Succeeded', reconcile: 'Succeeded', sync: null }],
      ['apps/Deployment/shop/web', { strategy: 'Apply', actuation: 'Succeeded', reconcile: 'Pending', sync: null }],
    ]);
    expect(item.appliedSummary.reconcile).toEqual([
      { value: 'Pending', count: 1 },
      { value: 'Succeeded', count: 1 },
    ]);

    // -o detail shows what was recorded of each status beside the stored object.
    const detail = await cli(['status', 'test/billing/rollout', '-o', 'detail']);
    expect(detail.stdout).toMatch(
      /# apps\/Deployment\/shop\/web {2}Current {2}revision [0-9a-f]{12}\n# status \(recorded now\): Current\n/,
    );
    expect(detail.stdout).toMatch(/# {3}applied: strategy Apply, actuation Succeeded, reconcile Pending\n/);
    const refused = await cli(['status', '-o', 'rsync']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/-o rsync shows one phase/);
  }, 60_000);

  // After the test above, which makes the billing/rollout phase; last, as it deletes shop/web.
  it("-o detail shows each member's live status block, read now by the cluster's worker, or why not", async () => {
    const detail = await cli(['status', 'test/billing/rollout', '-o', 'detail']);
    expect(detail.code).toBe(0);
    expect(detail.stdout).toMatch(
      /# apps\/Deployment\/shop\/web .*\n(#.*\n)*# live status \(read [^)]+\):\n(# {3}.*\n)*# {3}readyReplicas: \d+\n/,
    );
    em.remove({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' });
    const gone = await cli(['status', 'test/billing/rollout', '-o', 'detail']);
    expect(gone.stdout).toContain('# live status: not available (NOT_FOUND: the object is gone from the cluster)');
    // At a past moment only what was recorded is shown.
    const past = await cli(['status', 'test/billing/rollout', '-o', 'detail', '--at', '1s']);
    expect(past.stdout).not.toContain('# live status');
  }, 60_000);
});
