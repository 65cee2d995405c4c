/** Read queries over seeded history, through the real server on port 0 (anonymous read on loopback). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, type TestApi } from './helpers.ts';
import { at, iso, seedHistory, type Seeded } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
let seeded: Seeded;

beforeAll(async () => {
  database = await createTestDatabase('gql_queries');
  seeded = await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 4 });
  api = await startTestApi({ db });
});

afterAll(async () => {
  await api?.close();
  await db?.$disconnect();
  await database?.drop();
});

const PHASE_FIELDS = `id cluster source namespace name status message since stale lastGoodReadAt
  summary { current inProgress failed total }
  worstResource { key kind name status message since }`;

describe('phases', () => {
  it('lists live phases by name with status, since, summary and the worst resource', async () => {
    const data = await gqlData<{
      phases: { edges: { node: Record<string, unknown> }[]; pageInfo: { hasNextPage: boolean } };
    }>(api.url, `{ phases { edges { node { ${PHASE_FIELDS} } } pageInfo { hasNextPage } } }`);
    const nodes = data.phases.edges.map((e) => e.node);
    expect(nodes.map((n) => `${n.cluster}/${n.namespace}/${n.name}`)).toEqual([
      'prod/payments/ledger',
      'prod/shop/api',
      'prod/shop/fresh',
      'prod/shop/web',
      'staging/shop/web',
    ]);
    expect(data.phases.pageInfo.hasNextPage).toBe(false);
    const web = nodes[3];
    expect(web).toEqual({
      id: String(seeded.web),
      cluster: 'prod',
      source: 'cli-utils',
      namespace: 'shop',
      name: 'web',
      status: 'Current',
      message: 'all 3 resources Current',
      since: iso(40),
      stale: false,
      lastGoodReadAt: iso(60),
      summary: { current: 3, inProgress: 0, failed: 0, total: 3 },
      worstResource: null,
    });
    expect(nodes[1]).toMatchObject({
      status: 'Failed',
      since: iso(50),
      summary: { current: 0, inProgress: 0, failed: 1, total: 1 },
      worstResource: {
        key: 'apps/Deployment/shop/api',
        kind: 'Deployment',
        name: 'api',
        status: 'Failed',
        message: 'crash loop',
        since: iso(50),
      },
    });
    expect(nodes[4]).toMatchObject({ status: 'Current', stale: true, since: iso(0), lastGoodReadAt: iso(30) });
  });

  it('gives every phase of a page as the phase query (whose since and worst resource go through the loaders) gives it', async () => {
    const data = await gqlData<{ phases: { edges: { node: Record<string, unknown> }[] } }>(
      api.url,
      `{ phases(filter: { includeDeleted: true }) { edges { node { ${PHASE_FIELDS} } } } }`,
    );
    expect(data.phases.edges.length).toBeGreaterThan(0);
    for (const { node } of data.phases.edges) {
      const one = await gqlData<{ phase: Record<string, unknown> }>(
        api.url,
        `query($id: ID!) { phase(id: $id) { ${PHASE_FIELDS} } }`,
        { id: node.id },
      );
      expect(one.phase).toEqual(node);
    }
  });

  it('filters by cluster, status, labels and search, and orders by severity', async () => {
    const names = async (args: string) => {
      const data = await gqlData<{ phases: { edges: { node: { cluster: string; name: string } }[] } }>(
        api.url,
        `{ phases(${args}) { edges { node { cluster name } } } }`,
      );
      return data.phases.edges.map((e) => `${e.node.cluster}/${e.node.name}`);
    };
    expect(await names('filter: { cluster: "staging" }')).toEqual(['staging/web']);
    expect(await names('filter: { status: [Failed] }')).toEqual(['prod/api']);
    expect(await names('filter: { labels: { team: "payments" } }')).toEqual(['prod/ledger']);
    expect(await names('filter: { search: "WE" }')).toEqual(['prod/web', 'staging/web']);
    expect(await names('filter: { source: "flux" }')).toEqual(['prod/api']);
    expect(await names('orderBy: SEVERITY, first: 2')).toEqual(['prod/api', 'prod/ledger']);
  });

  it('pages with cursors without gaps or repeats, in both orders', async () => {
    for (const order of ['NAME', 'SEVERITY']) {
      const seen: string[] = [];
      let after: string | null = null;
      for (let i = 0; i < 10; i += 1) {
        const data: {
          phases: { edges: { node: { id: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
        } = await gqlData(
          api.url,
          'query($after: String, $order: PhaseOrder) { phases(first: 2, after: $after, orderBy: $order) { edges { node { id } } pageInfo { hasNextPage endCursor } } }',
          { after, order },
        );
        seen.push(...data.phases.edges.map((e) => e.node.id));
        if (!data.phases.pageInfo.hasNextPage) break;
        after = data.phases.pageInfo.endCursor;
      }
      expect(seen).toHaveLength(5);
      expect(new Set(seen).size).toBe(5);
    }
  });

  it('gives each edge the cursor that resumes after it, the last one equal to endCursor', async () => {
    type Page = { phases: { edges: { cursor: string; node: { name: string } }[]; pageInfo: { endCursor: string } } };
    const q =
      'query($after: String) { phases(first: 3, after: $after) { edges { cursor node { name } } pageInfo { endCursor } } }';
    const all = await gqlData<Page>(api.url, q, {});
    expect(all.phases.edges.at(-1)?.cursor).toBe(all.phases.pageInfo.endCursor);
    const rest = await gqlData<Page>(api.url, q, { after: all.phases.edges[0]?.cursor });
    expect(rest.phases.edges.slice(0, 2).map((e) => e.node.name)).toEqual(
      all.phases.edges.slice(1).map((e) => e.node.name),
    );
  });

  it('lists up to 1,000 phases a page (a whole fleet in one request); a connection inside each of 1,000 phases is over the cost limit', async () => {
    const all = await gqlData<{ phases: { edges: unknown[]; pageInfo: { hasNextPage: boolean } } }>(
      api.url,
      `query($n: Int) { phases(first: $n) { edges { node { ${PHASE_FIELDS} } } pageInfo { hasNextPage } } }`,
      { n: 1000 },
    );
    expect(all.phases.edges).toHaveLength(5);
    expect(all.phases.pageInfo.hasNextPage).toBe(false);
    const nested = await gql(
      api.url,
      '{ phases(first: 1000) { edges { node { name resources(first: 100) { edges { node { key status } } } } } } }',
    );
    expect(nested.data ?? null).toBeNull();
    expect(nested.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
  });

  it('answers with cache-control: no-store (live data)', async () => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ phases(first: 1) { edges { node { name } } } }' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it.each([
    ['first: 1001', 'BAD_USER_INPUT'],
    ['first: 0', 'BAD_USER_INPUT'],
    ['after: "not-a-cursor"', 'BAD_USER_INPUT'],
    ['filter: { labels: ["x"] }', 'BAD_USER_INPUT'],
  ])('refuses %s with %s', async (args, code) => {
    const result = await gql(api.url, `{ phases(${args}) { edges { cursor } } }`);
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe(code);
  });
});

describe('phase', () => {
  const WEB = '{ cluster: "prod", namespace: "shop", name: "web" }';

  it('finds a phase by id and by identity; null when there is none', async () => {
    const data = await gqlData<Record<string, { name: string } | null>>(
      api.url,
      `{
      byId: phase(id: "${seeded.web}") { name }
      byName: phase(cluster: "prod", namespace: "shop", name: "web") { name }
      missing: phase(cluster: "prod", namespace: "shop", name: "nope") { name }
      badId: phase(id: "999999") { name }
    }`,
    );
    expect(data).toEqual({ byId: { name: 'web' }, byName: { name: 'web' }, missing: null, badId: null });
    const both = await gql(api.url, `{ phase(id: "1", cluster: "prod", namespace: "shop", name: "web") { name } }`);
    expect(both.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    void WEB;
  });

  it('lists resources now with status, since and filters', async () => {
    const data = await gqlData<{
      phase: {
        resources: { edges: { node: Record<string, unknown> }[] };
        failed: { edges: unknown[] };
        deployments: { edges: { node: { key: string } }[] };
      };
    }>(
      api.url,
      `{
      phase(id: "${seeded.web}") {
        resources { edges { node { key group kind namespace name status presence since from to } } }
        failed: resources(filter: { status: [Failed] }) { edges { cursor } }
        deployments: resources(filter: { kind: "Deployment" }) { edges { node { key } } }
      } }`,
    );
    expect(data.phase.resources.edges.map((e) => e.node)).toEqual([
      {
        key: '/ConfigMap/shop/web-config',
        group: '',
        kind: 'ConfigMap',
        namespace: 'shop',
        name: 'web-config',
        status: 'Current',
        presence: 'Present',
        since: iso(25),
        from: iso(25),
        to: null,
      },
      {
        key: '/Service/shop/web',
        group: '',
        kind: 'Service',
        namespace: 'shop',
        name: 'web',
        status: 'Current',
        presence: 'Present',
        since: iso(0),
        from: iso(0),
        to: null,
      },
      {
        key: 'apps/Deployment/shop/web',
        group: 'apps',
        kind: 'Deployment',
        namespace: 'shop',
        name: 'web',
        status: 'Current',
        presence: 'Present',
        since: iso(40),
        from: iso(40),
        to: null,
      },
    ]);
    expect(data.phase.failed.edges).toEqual([]);
    expect(data.phase.deployments.edges.map((e) => e.node.key)).toEqual(['apps/Deployment/shop/web']);
  });

  it('statusAt is exact at interval edges ([from, to)) and gives resources as they were', async () => {
    const query = `query($at: DateTime!) { phase(id: "${seeded.web}") { statusAt(at: $at) { status message from to summary { total }
      resources { edges { node { key status since } } } } } }`;
    type Snapshot = {
      status: string;
      message: string;
      from: string;
      to: string | null;
      summary: { total: number };
      resources: { edges: { node: { key: string; status: string; since: string } }[] };
    } | null;
    const snap = async (when: Date) =>
      (await gqlData<{ phase: { statusAt: Snapshot } }>(api.url, query, { at: when.toISOString() })).phase.statusAt;

    const justBefore = await snap(new Date(at(30).getTime() - 1));
    expect(justBefore).toMatchObject({ status: 'Current', from: iso(20), to: iso(30), summary: { total: 3 } });
    const edge = await snap(at(30));
    expect(edge).toMatchObject({
      status: 'Failed',
      message: '1 of 3 resources not Current',
      from: iso(30),
      to: iso(40),
    });
    expect(edge?.resources.edges.map((e) => e.node)).toEqual([
      { key: '/ConfigMap/shop/web-config', status: 'Current', since: iso(25) },
      { key: '/Service/shop/web', status: 'Current', since: iso(0) },
      { key: 'apps/Deployment/shop/web', status: 'Failed', since: iso(30) },
    ]);
    // At 27 the Deployment's Current run began at 10 (the split at 25 is a new revision, not a new status).
    const mid = await snap(at(27));
    expect(mid?.resources.edges.find((e) => e.node.key === 'apps/Deployment/shop/web')?.node).toEqual({
      key: 'apps/Deployment/shop/web',
      status: 'Current',
      since: iso(10),
    });
    expect(mid?.resources.edges).toHaveLength(3);
    const early = await snap(at(5));
    expect(early?.resources.edges.map((e) => e.node.key)).toEqual(['/Service/shop/web', 'apps/Deployment/shop/web']);
    expect(await snap(new Date(at(0).getTime() - 1))).toBeNull();
  });

  it('history lists the intervals overlapping [from, to), oldest first, in pages', async () => {
    type Page = {
      phase: {
        history: {
          edges: { node: { status: string; from: string; to: string | null } }[];
          pageInfo: { hasNextPage: boolean; endCursor: string };
        };
      };
    };
    const q = `query($from: DateTime!, $to: DateTime, $after: String) { phase(id: "${seeded.web}") { history(from: $from, to: $to, first: 2, after: $after) {
      edges { node { status from to } } pageInfo { hasNextPage endCursor } } } }`;
    const first = await gqlData<Page>(api.url, q, { from: iso(15), to: iso(40) });
    expect(first.phase.history.edges.map((e) => e.node)).toEqual([
      { status: 'Current', from: iso(10), to: iso(20) },
      { status: 'Current', from: iso(20), to: iso(30) },
    ]);
    expect(first.phase.history.pageInfo.hasNextPage).toBe(true);
    const second = await gqlData<Page>(api.url, q, {
      from: iso(15),
      to: iso(40),
      after: first.phase.history.pageInfo.endCursor,
    });
    // [40, open) starts at the window's exclusive end, so it is not in the window.
    expect(second.phase.history.edges.map((e) => e.node)).toEqual([{ status: 'Failed', from: iso(30), to: iso(40) }]);
    expect(second.phase.history.pageInfo.hasNextPage).toBe(false);
  });

  it('history gives every field of an interval: id, message, summary, worst resource, stale', async () => {
    type Node = {
      id: string;
      status: string;
      message: string;
      summary: Record<string, number>;
      stale: boolean;
      worstResource: string | null;
      from: string;
      to: string | null;
    };
    const fields = 'id status message summary { current inProgress failed total } stale worstResource from to';
    const q = (id: number, from: string) =>
      `{ phase(id: "${id}") { history(from: "${from}", first: 10) { edges { cursor node { ${fields} } } } } }`;
    const web = await gqlData<{ phase: { history: { edges: { cursor: string; node: Node }[] } } }>(
      api.url,
      q(seeded.web, iso(0)),
    );
    const counts = (current: number, inProgress: number, failed: number) => ({
      current,
      inProgress,
      failed,
      total: current + inProgress + failed,
    });
    expect(web.phase.history.edges.map((e) => e.node)).toEqual([
      {
        id: String(at(0).getTime()),
        status: 'InProgress',
        message: 'InProgress',
        summary: counts(1, 1, 0),
        stale: false,
        worstResource: 'apps/Deployment/shop/web',
        from: iso(0),
        to: iso(10),
      },
      {
        id: String(at(10).getTime()),
        status: 'Current',
        message: 'all 2 resources Current',
        summary: counts(2, 0, 0),
        stale: false,
        worstResource: null,
        from: iso(10),
        to: iso(20),
      },
      {
        id: String(at(20).getTime()),
        status: 'Current',
        message: 'all 3 resources Current',
        summary: counts(3, 0, 0),
        stale: false,
        worstResource: null,
        from: iso(20),
        to: iso(30),
      },
      {
        id: String(at(30).getTime()),
        status: 'Failed',
        message: '1 of 3 resources not Current',
        summary: counts(2, 0, 1),
        stale: false,
        worstResource: 'apps/Deployment/shop/web',
        from: iso(30),
        to: iso(40),
      },
      {
        id: String(at(40).getTime()),
        status: 'Current',
        message: 'all 3 resources Current',
        summary: counts(3, 0, 0),
        stale: false,
        worstResource: null,
        from: iso(40),
        to: null,
      },
    ]);
    // Each cursor resumes right after its interval.
    const cursorQuery = `query($after: String) { phase(id: "${seeded.web}") { history(from: "${iso(0)}", first: 1, after: $after) { edges { node { from } } } } }`;
    const next = await gqlData<{ phase: { history: { edges: { node: { from: string } }[] } } }>(api.url, cursorQuery, {
      after: web.phase.history.edges[2]?.cursor,
    });
    expect(next.phase.history.edges.map((e) => e.node.from)).toEqual([iso(30)]);
    // A status kept while the cluster could not be read is marked stale.
    const staging = await gqlData<{ phase: { history: { edges: { node: Node }[] } } }>(
      api.url,
      q(seeded.stagingWeb, iso(0)),
    );
    expect(staging.phase.history.edges.map((e) => [e.node.status, e.node.stale, e.node.from, e.node.to])).toEqual([
      ['Current', false, iso(0), iso(35)],
      ['Current', true, iso(35), null],
    ]);
  });

  it('history gives the detail fields however the query selects them (fragments, aliases, directives)', async () => {
    const window = `from: "${iso(25)}", to: "${iso(35)}"`;
    const queries = [
      `{ phase(id: "${seeded.web}") { history(${window}) { edges { node { ...Detail } } } } } fragment Detail on PhaseInterval { from message summary { failed } worstResource }`,
      `{ phase(id: "${seeded.web}") { history(${window}) { ...Page } } } fragment Page on PhaseIntervalConnection { edges { node { from ... on PhaseInterval { message } ... { summary { failed } worstResource } } } }`,
      `{ phase(id: "${seeded.web}") { history(${window}) { edges { node { from message: message summary { failed } worstResource @include(if: true) } } } } }`,
    ];
    for (const query of queries) {
      const data = await gqlData<{ phase: { history: { edges: { node: Record<string, unknown> }[] } } }>(
        api.url,
        query,
      );
      expect(data.phase.history.edges.map((e) => e.node)).toEqual([
        { from: iso(20), message: 'all 3 resources Current', summary: { failed: 0 }, worstResource: null },
        {
          from: iso(30),
          message: '1 of 3 resources not Current',
          summary: { failed: 1 },
          worstResource: 'apps/Deployment/shop/web',
        },
      ]);
    }
    const aliased = await gqlData<{ phase: { history: { edges: { n: { why: string } }[] } } }>(
      api.url,
      `{ phase(id: "${seeded.web}") { history(${window}) { edges { n: node { why: message } } } } }`,
    );
    expect(aliased.phase.history.edges.map((e) => e.n.why)).toEqual([
      'all 3 resources Current',
      '1 of 3 resources not Current',
    ]);
    const skipped = await gqlData<{ phase: { history: { edges: { node: Record<string, unknown> }[] } } }>(
      api.url,
      `{ phase(id: "${seeded.web}") { history(${window}) { edges { node { status message @skip(if: true) } } } } }`,
    );
    expect(skipped.phase.history.edges.map((e) => e.node)).toEqual([{ status: 'Current' }, { status: 'Failed' }]);
  });

  it('changes lists the phase change log in a window, by seq', async () => {
    const data = await gqlData<{ phase: { changes: { edges: { node: Record<string, unknown> }[] } } }>(
      api.url,
      `{ phase(id: "${seeded.web}") {
      changes(from: "${iso(30)}", to: "${iso(45)}") { edges { node { at scope resourceKey fromStatus toStatus phaseId phase { source namespace name } } } } } }`,
    );
    expect(data.phase.changes.edges.map((e) => e.node)).toEqual([
      {
        at: iso(30),
        scope: 'resource',
        resourceKey: 'apps/Deployment/shop/web',
        fromStatus: 'Current',
        toStatus: 'Failed',
        phaseId: String(seeded.web),
        phase: { source: 'cli-utils', namespace: 'shop', name: 'web' },
      },
      {
        at: iso(30),
        scope: 'phase',
        resourceKey: null,
        fromStatus: 'Current',
        toStatus: 'Failed',
        phaseId: String(seeded.web),
        phase: { source: 'cli-utils', namespace: 'shop', name: 'web' },
      },
      {
        at: iso(40),
        scope: 'phase',
        resourceKey: null,
        fromStatus: 'Failed',
        toStatus: 'Current',
        phaseId: String(seeded.web),
        phase: { source: 'cli-utils', namespace: 'shop', name: 'web' },
      },
    ]);
  });

  it('manifest(at) gives the entries at a time; manifests gives the history with diffs', async () => {
    const data = await gqlData<{ phase: Record<string, unknown> }>(
      api.url,
      `{ phase(id: "${seeded.web}") {
      now: manifest { hash entryCount from to }
      before: manifest(at: "${iso(24)}") { hash entries { kind name } }
      edge: manifest(at: "${iso(25)}") { hash }
      manifests { edges { node { manifest { hash from to } previousHash added { kind name } removed { kind name } revisionsChanged { key fromRevision toRevision } } } pageInfo { hasNextPage } }
    } }`,
    );
    expect(data.phase.now).toEqual({ hash: 'manifest-2', entryCount: 3, from: iso(25), to: null });
    expect(data.phase.before).toEqual({
      hash: 'manifest-1',
      entries: [
        { kind: 'Service', name: 'web' },
        { kind: 'Deployment', name: 'web' },
      ],
    });
    expect(data.phase.edge).toEqual({ hash: 'manifest-2' });
    expect(data.phase.manifests).toEqual({
      edges: [
        {
          node: {
            manifest: { hash: 'manifest-2', from: iso(25), to: null },
            previousHash: 'manifest-1',
            added: [{ kind: 'ConfigMap', name: 'web-config' }],
            removed: [],
            revisionsChanged: [
              {
                key: 'apps/Deployment/shop/web',
                fromRevision: String(seeded.revision1),
                toRevision: String(seeded.revision2),
              },
            ],
          },
        },
        {
          node: {
            manifest: { hash: 'manifest-1', from: iso(0), to: iso(25) },
            previousHash: null,
            added: [],
            removed: [],
            revisionsChanged: [],
          },
        },
      ],
      pageInfo: { hasNextPage: false },
    });
  });
});

describe('statusChanges', () => {
  it('reads the global change log by seq, resumable from a seq, with filters', async () => {
    type Changes = {
      statusChanges: {
        edges: { cursor: string; node: { seq: string; cluster: string; scope: string; toStatus: string | null } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    };
    const all = await gqlData<Changes>(
      api.url,
      '{ statusChanges { edges { cursor node { seq cluster scope toStatus } } pageInfo { hasNextPage endCursor } } }',
    );
    expect(all.statusChanges.edges.map((e) => `${e.node.cluster}:${e.node.scope}:${e.node.toStatus}`)).toEqual([
      'prod:phase:Current',
      'prod:resource:Failed',
      'prod:phase:Failed',
      'staging:cluster:Unreachable',
      'prod:phase:Current',
      'prod:phase:Current',
      'prod:phase:Failed',
    ]);
    const seqs = all.statusChanges.edges.map((e) => BigInt(e.node.seq));
    expect([...seqs].sort((a, b) => (a < b ? -1 : 1))).toEqual(seqs);
    const third = all.statusChanges.edges[2]?.cursor as string;
    const rest = await gqlData<Changes>(
      api.url,
      `{ statusChanges(after: "${third}", first: 2) { edges { node { seq scope } } pageInfo { hasNextPage } } }`,
    );
    expect(rest.statusChanges.edges.map((e) => e.node.seq)).toEqual(
      all.statusChanges.edges.slice(3, 5).map((e) => e.node.seq),
    );
    expect(rest.statusChanges.pageInfo.hasNextPage).toBe(true);
    const failed = await gqlData<Changes>(
      api.url,
      '{ statusChanges(filter: { toStatus: [Failed], scopes: [phase] }) { edges { node { cluster seq scope toStatus } } } }',
    );
    expect(failed.statusChanges.edges).toHaveLength(2);
    const bad = await gql(api.url, '{ statusChanges(after: "abc") { edges { cursor } } }');
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('gate', () => {
  type Gate = {
    gate: {
      passed: boolean;
      reason: string;
      status: string | null;
      heldSince: string | null;
      remaining: string | null;
      lastGoodReadAt: string | null;
      message: string;
      blockingResources: { key: string; status: string; message: string }[];
    };
  };
  const FIELDS =
    'passed reason status heldSince remaining lastGoodReadAt message blockingResources { key status message }';

  it('passes when the phase held the status for the whole window', async () => {
    const data = await gqlData<Gate>(
      api.url,
      `{ gate(phase: { cluster: "prod", namespace: "shop", name: "web" }, for: "10m") { ${FIELDS} } }`,
    );
    expect(data.gate).toMatchObject({
      passed: true,
      reason: 'HELD',
      status: 'Current',
      heldSince: iso(40),
      remaining: '0s',
      blockingResources: [],
    });
  });

  it('does not pass when the status was reached too recently, and says how long remains', async () => {
    const data = await gqlData<Gate>(
      api.url,
      `{ gate(phase: { id: "${seeded.fresh}" }, status: Current, for: "1h") { ${FIELDS} } }`,
    );
    expect(data.gate).toMatchObject({
      passed: false,
      reason: 'NOT_HELD_LONG_ENOUGH',
      status: 'Current',
      heldSince: seeded.freshSince.toISOString(),
    });
    expect(data.gate.remaining).toMatch(/^5[45]m$/);
  });

  it('counts a status run only from after a gap in the record (phase and resource)', async () => {
    const data = await gqlData<{ phase: { since: string; resources: { edges: { node: { since: string } }[] } } }>(
      api.url,
      `{ phase(id: "${seeded.fresh}") { since resources { edges { node { since } } } } }`,
    );
    expect(data.phase).toEqual({
      since: seeded.freshSince.toISOString(),
      resources: { edges: [{ node: { since: seeded.freshSince.toISOString() } }] },
    });
  });

  it('does not pass on a different status, naming the blocking resources', async () => {
    const data = await gqlData<Gate>(
      api.url,
      `{ gate(phase: { cluster: "prod", namespace: "shop", name: "api" }, for: "1m") { ${FIELDS} } }`,
    );
    expect(data.gate).toMatchObject({
      passed: false,
      reason: 'DIFFERENT_STATUS',
      status: 'Failed',
      heldSince: null,
      remaining: null,
    });
    expect(data.gate.blockingResources).toEqual([
      { key: 'apps/Deployment/shop/api', status: 'Failed', message: 'crash loop' },
    ]);
  });

  it('does not pass on a stale status (cluster unreachable), and says so', async () => {
    const data = await gqlData<Gate>(
      api.url,
      `{ gate(phase: { cluster: "staging", namespace: "shop", name: "web" }, for: "1m") { ${FIELDS} } }`,
    );
    expect(data.gate).toMatchObject({ passed: false, reason: 'STALE', status: 'Current', lastGoodReadAt: iso(30) });
    expect(data.gate.message).toContain('cluster staging cannot be read');
  });

  it('passes for a status other than Current when asked', async () => {
    const data = await gqlData<Gate>(
      api.url,
      `{ gate(phase: { id: "${seeded.api}" }, status: Failed, for: "5m") { ${FIELDS} } }`,
    );
    expect(data.gate).toMatchObject({ passed: true, reason: 'HELD', heldSince: iso(50) });
  });

  it.each([
    ['{ cluster: "prod", namespace: "shop", name: "nope" }', '"1m"', 'NOT_FOUND'],
    ['{ cluster: "prod" }', '"1m"', 'BAD_USER_INPUT'],
    ['{ id: "1" }', '"soon"', 'GRAPHQL_VALIDATION_FAILED'],
  ])('refuses phase %s for %s with %s', async (ref, duration, code) => {
    const result = await gql(api.url, `{ gate(phase: ${ref}, for: ${duration}) { passed } }`);
    expect(result.errors?.[0]?.extensions?.code).toBe(code);
  });

  it('refuses a duration variable that is not one with BAD_USER_INPUT', async () => {
    const result = await gql(
      api.url,
      `query($for: Duration!) { gate(phase: { id: "${seeded.web}" }, for: $for) { passed } }`,
      { for: 'soon' },
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('auditReport, typed figures', () => {
  const REPORT = `{
    auditReport(from: "${iso(0)}", to: "${iso(60)}", filter: { clusters: ["prod"], namespaces: ["shop"], phases: ["web", "api"] }) {
      totals { phases failures restored meanTimeToRestoreMs incidents meanTimeOutOfCurrentMs inventoryChanges revisionChanges }
      phases {
        name availability statusAtEnd inventoryChanges revisionChanges
        recovery { incidents { from to reachedFailed cause { resource status message } } meanTimeOutOfCurrentMs }
        restore { restores { failedAt restoredAt durationMs cause { resource status message } } meanTimeToRestoreMs }
        manifestChanges { at inventoryChanged added removed revisionsChanged }
      }
    }
  }`;

  it('lists phases worst first, with restores, incidents and their causes, and inventory changes apart from revision changes', async () => {
    type Phase = {
      name: string;
      availability: number;
      restore: unknown;
      recovery: unknown;
      manifestChanges: unknown;
      inventoryChanges: number;
      revisionChanges: number;
    };
    const data = await gqlData<{ auditReport: { totals: unknown; phases: Phase[] } }>(api.url, REPORT);
    // web was Current 40 of the 60 minutes (InProgress 10, Failed 10), api 50 (Failed since minute 50).
    expect(data.auditReport.phases.map((phase) => phase.name)).toEqual(['web', 'api']);
    const web = data.auditReport.phases[0];
    const cause = { resource: 'apps/Deployment/shop/web', status: 'Failed', message: 'ProgressDeadlineExceeded' };
    expect(web?.restore).toEqual({
      restores: [{ failedAt: iso(30), restoredAt: iso(40), durationMs: 600_000, cause }],
      meanTimeToRestoreMs: 600_000,
    });
    // web was first seen InProgress, never Current before: that is no departure from Current.
    expect(web?.recovery).toEqual({
      incidents: [{ from: iso(30), to: iso(40), reachedFailed: true, cause }],
      meanTimeOutOfCurrentMs: 600_000,
    });
    // At minute 25 a new manifest version added the ConfigMap and the Deployment got a new revision: one instant, both kinds.
    expect(web?.manifestChanges).toEqual([
      {
        at: iso(25),
        inventoryChanged: true,
        added: ['/ConfigMap/shop/web-config'],
        removed: [],
        revisionsChanged: ['apps/Deployment/shop/web'],
      },
    ]);
    expect([web?.inventoryChanges, web?.revisionChanges]).toEqual([1, 1]);
    expect(data.auditReport.totals).toEqual({
      phases: 2,
      failures: 2,
      restored: 1,
      meanTimeToRestoreMs: 600_000,
      incidents: 2,
      meanTimeOutOfCurrentMs: 600_000,
      inventoryChanges: 1,
      revisionChanges: 1,
    });
  });
});
