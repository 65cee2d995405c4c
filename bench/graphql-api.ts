/**
 * The GraphQL API over a history store seeded with at least 1,000,000 status changes (issue #7):
 * change-log rows with their matching resource and phase intervals, written straight with SQL. The
 * API runs in a child process (bench/graphql-api-server.ts) with a read token, as a dashboard or a CI
 * gate calls it. Every query is measured twice: at concurrency 1 (the latency one dashboard or one
 * CI gate sees) and closed loop with 16 clients (throughput). Requests rotate over the phases so
 * that no query is answered from one hot row. A bare Apollo Server `{ __typename }` (in a child, as
 * the `http-apollo` baseline) is measured in the same run at both concurrencies for the ratios.
 *
 * "The 1,000-phase list" (with summaries, since and the worst resource) is measured both ways a
 * client can ask for it: one request of `phases(first: 1000)` (the largest phases page, what a
 * dashboard showing the fleet sends) and a walk through 10 pages of 100, one after the other.
 *
 *   node --import tsx bench/graphql-api.ts [--phases 1000] [--resources 10] [--intervals 100] [--requests 3000] [--concurrency 16] [--warmup 200]
 *   PHASELOG_BENCH_CPU_PROF=/tmp/api.cpuprofile node --import tsx bench/graphql-api.ts   # server CPU profile
 *
 * While iterating: `--keep-db FILE` keeps the seeded database and writes what the next run needs
 * to FILE; `--reuse-db FILE` measures that database again without seeding (drop it yourself);
 * `--only REGEX` measures only the queries whose names match.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'node:http';
import pg from 'pg';
import { generateSecret, hashToken } from '../src/auth/tokens.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { startReadyChild } from './lib/child-server.ts';
import { isMain, printFigures, readNumberFlag } from './lib/cli.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';
import { nowMs, percentile, perSecond, round } from './lib/stats.ts';
import type { Figures } from './lib/types.ts';

/** Options of {@link run}. */
export interface GraphqlApiBenchOptions {
  /** @default 1000 */
  phases?: number;
  /** Resources per phase. @default 10 */
  resources?: number;
  /** Status changes per phase and per resource (10 minutes apart, ending now). @default 100 */
  intervals?: number;
  /** Timed requests per query at 16 clients (a tenth of them at concurrency 1). @default 3000 */
  requests?: number;
  /** Clients of the throughput run. @default 16 */
  concurrency?: number;
  /**
   * Untimed requests before each query's timed ones (divided by the query's weight). A server just
   * started compiles its hot paths during the first few hundred requests; the bare Apollo baseline gets
   * the same. @default 200
   */
  warmup?: number;
  /** Keep the seeded database and write how to reuse it to this file. */
  keepDb?: string;
  /** Measure the database a `keepDb` run left (named in this file) instead of seeding one. */
  reuseDb?: string;
  /** Measure only the queries whose names match. */
  only?: RegExp;
}

/** What `keepDb` writes and `reuseDb` reads. */
interface KeptDatabase {
  connectionString: string;
  start: string;
  secret: string;
  statusChanges: number;
  phases: number;
  resources: number;
  intervals: number;
}

const SERVER_FILE = fileURLToPath(new URL('./graphql-api-server.ts', import.meta.url));
const APOLLO_FILE = fileURLToPath(new URL('./baselines/http-servers.ts', import.meta.url));

/** What {@link seed} wrote. */
export interface Seeded {
  start: Date;
  /** A read token's secret. */
  secret: string;
  statusChanges: number;
}

/** How {@link seed} spreads phases over clusters. */
export interface SeedLayout {
  /** Clusters, named bench-a, bench-b, ...; phase g goes to cluster g mod this. @default 2 */
  clusters?: number;
  /**
   * `unique`: every phase has its own name (phase-g). `every-cluster`: each name is in every
   * cluster (phases / clusters names), as one application deployed to a fleet is.
   * @default 'unique'
   */
  names?: 'unique' | 'every-cluster';
}

/**
 * Seeds `phases` phases whose status flips between InProgress and Current every 10 minutes up to now
 * (odd and even phases out of step, so half are InProgress now, with a worst resource), each with
 * `resources` resources flipping with it: every interval starts with one change-log row.
 */
export async function seed(
  url: string,
  phases: number,
  resources: number,
  intervals: number,
  layout: SeedLayout = {},
): Promise<Seeded> {
  const clusterCount = layout.clusters ?? 2;
  if (clusterCount < 1 || clusterCount > 26)
    throw new Error('the seed names clusters bench-a to bench-z: 1 to 26 clusters');
  const clusterNames = Array.from({ length: clusterCount }, (_, i) => `bench-${String.fromCharCode(97 + i)}`);
  const nameIndex = layout.names === 'every-cluster' ? `(g / ${clusterCount})` : 'g';
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const now = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const start = new Date(now.getTime() - intervals * 600_000);
  const secret = generateSecret();
  const status = (i: string) => `CASE WHEN (${i} + p."id") % 2 = 0 THEN 'InProgress' ELSE 'Current' END`;
  const previous = (i: string) =>
    `CASE WHEN ${i} = 0 THEN NULL WHEN (${i} + p."id") % 2 = 0 THEN 'Current' ELSE 'InProgress' END`;
  const from = (i: string) => `$1::timestamptz + ${i} * interval '10 minutes'`;
  const to = (i: string) =>
    `CASE WHEN ${i} = $2 - 1 THEN NULL ELSE $1::timestamptz + (${i} + 1) * interval '10 minutes' END`;
  try {
    await client.query(`SET synchronous_commit = off`);
    await client.query(
      `INSERT INTO "ApiToken" ("name", "tokenHash", "scopes", "clusters", "namespaces") VALUES ('bench', $1, '{read}', '{}', '{}')`,
      [hashToken(secret)],
    );
    // Observed clusters (a tick just now, snapshotted hourly), as a running worker leaves them: a
    // cluster nobody observes is stale, and its gate would answer STALE without reading its history.
    await client.query(
      `INSERT INTO "Cluster" ("name", "reachable", "lastGoodReadAt", "tickLastSeenAt", "snapshotIntervalMs") SELECT unnest($2::text[]), true, $1, $1, 3600000`,
      [now, clusterNames],
    );
    await client.query(
      `INSERT INTO "Phase" ("clusterId", "sourceKind", "namespace", "name", "firstSeenAt", "lastSeenAt")
       SELECT (SELECT min("id") FROM "Cluster") + (g % ${clusterCount}), 'cli-utils', 'team-' || (${nameIndex} / 50), 'phase-' || lpad(${nameIndex}::text, 5, '0'), $1, $1 FROM generate_series(0, $2 - 1) g`,
      [start, phases],
    );
    // Status details are content-addressed: two per phase (Current, InProgress with its worst resource), one for all resources.
    const phaseBody = (
      i: string,
      count: string,
    ) => `jsonb_strip_nulls(jsonb_build_object('message', 'bench', 'summary', jsonb_build_object(${status(i)}, ${count}::int), 'conditions', '[]'::jsonb,
      'worstResource', CASE WHEN (${i} + p."id") % 2 = 0 THEN 'apps/Deployment/' || p."namespace" || '/' || p."name" || '-0' END))`;
    await client.query(
      `INSERT INTO "StatusDetail" ("hash", "body") SELECT DISTINCT 'bench:' || md5(b::text), b FROM (SELECT ${phaseBody('i', '$1')} AS b FROM "Phase" p, generate_series(0, 1) i) x`,
      [resources],
    );
    await client.query(
      `INSERT INTO "StatusDetail" ("hash", "body") VALUES ('bench:resource', '{"message": "", "presence": "Present", "conditions": []}'), ('bench:change', '{"message": ""}')`,
    );
    // Ended intervals, then each phase's current status (its last interval).
    await client.query(
      `INSERT INTO "PhaseStatusInterval" ("phaseId", "status", "detailId", "conditionTimes", "from", "to")
       SELECT p."id", ${status('i')}, (SELECT d."id" FROM "StatusDetail" d WHERE d."hash" = 'bench:' || md5(${phaseBody('i', '$3')}::text)), '{}', ${from('i')}, ${to('i')}
       FROM "Phase" p, generate_series(0, $2 - 2) i`,
      [start, intervals, resources],
    );
    await client.query(
      `INSERT INTO "PhaseCurrentStatus" ("phaseId", "status", "detailId", "conditionTimes", "from", "since")
       SELECT p."id", ${status('i')}, (SELECT d."id" FROM "StatusDetail" d WHERE d."hash" = 'bench:' || md5(${phaseBody('i', '$3')}::text)), '{}', ${from('i')}, ${from('i')}
       FROM "Phase" p, (SELECT $2::int - 1 AS i) last`,
      [start, intervals, resources],
    );
    await client.query(
      `INSERT INTO "Resource" ("phaseId", "key") SELECT p."id", 'apps/Deployment/' || p."namespace" || '/' || p."name" || '-' || r FROM "Phase" p, generate_series(0, $1 - 1) r ORDER BY p."id", r`,
      [resources],
    );
    await client.query(
      `INSERT INTO "ResourceStatusInterval" ("resourceId", "status", "detailId", "from", "to")
       SELECT rs."id", ${status('i')}, (SELECT "id" FROM "StatusDetail" WHERE "hash" = 'bench:resource'), ${from('i')}, ${to('i')}
       FROM "Resource" rs JOIN "Phase" p ON p."id" = rs."phaseId", generate_series(0, $2 - 2) i`,
      [start, intervals],
    );
    await client.query(
      `INSERT INTO "ResourceCurrentStatus" ("resourceId", "status", "detailId", "from")
       SELECT rs."id", ${status('i')}, (SELECT "id" FROM "StatusDetail" WHERE "hash" = 'bench:resource'), ${from('i')}
       FROM "Resource" rs JOIN "Phase" p ON p."id" = rs."phaseId", (SELECT $2::int - 1 AS i) last`,
      [start, intervals],
    );
    // The change log: one row per phase interval and per resource interval, in time order.
    const changes = await client.query(
      `INSERT INTO "StatusChange" ("at", "clusterId", "phaseId", "scope", "resourceId", "fromStatus", "toStatus", "detailId")
       SELECT at, "clusterId", "phaseId", scope, "resourceId", "fromStatus", "toStatus", (SELECT "id" FROM "StatusDetail" WHERE "hash" = 'bench:change') FROM (
         SELECT ${from('i')} AS at, p."clusterId", p."id" AS "phaseId", 'phase' AS scope, NULL::int AS "resourceId", ${previous('i')} AS "fromStatus", ${status('i')} AS "toStatus"
         FROM "Phase" p, generate_series(0, $2 - 1) i
         UNION ALL
         SELECT ${from('i')}, p."clusterId", p."id", 'resource', rs."id", ${previous('i')}, ${status('i')}
         FROM "Resource" rs JOIN "Phase" p ON p."id" = rs."phaseId", generate_series(0, $2 - 1) i
       ) c ORDER BY at, "phaseId", "resourceId" NULLS FIRST`,
      [start, intervals],
    );
    await client.query('VACUUM ANALYZE');
    return { start, secret, statusChanges: changes.rowCount ?? 0 };
  } finally {
    await client.end();
  }
}

/** What one load run measured. */
interface LoadResult {
  requests: number;
  errors: number;
  requestsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

function post(agent: Agent, url: URL, body: Buffer, authorization: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': body.length,
    };
    if (authorization !== undefined) headers.authorization = authorization;
    const req = request(url, { agent, method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const ok = res.statusCode === 200 && !Buffer.concat(chunks).toString('utf8').includes('"errors"');
        resolve(ok);
      });
      res.on('error', () => resolve(false));
    });
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

/**
 * A closed loop of `concurrency` keep-alive clients; each "request" is `step(i)`, which may send
 * several HTTP requests (a walk through pages). Errors are GraphQL errors or non-200 answers.
 */
async function runLoad(
  concurrency: number,
  count: number,
  warmup: number,
  step: (agent: Agent, i: number) => Promise<boolean>,
  onWarm?: () => Promise<void>,
  maxMs = 60_000,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    let warm = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (warm < warmup) await step(agent, warm++);
      }),
    );
    await onWarm?.();
    const latencies: number[] = [];
    let issued = 0;
    let errors = 0;
    const started = nowMs();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (issued < count && nowMs() - started < maxMs) {
          const i = issued++;
          const sent = nowMs();
          const ok = await step(agent, i);
          latencies.push(nowMs() - sent);
          if (!ok) errors += 1;
        }
      }),
    );
    const elapsed = nowMs() - started;
    return {
      requests: latencies.length,
      errors,
      requestsPerSecond: perSecond(latencies.length, elapsed),
      p50Ms: round(percentile(latencies, 0.5), 3),
      p95Ms: round(percentile(latencies, 0.95), 3),
      p99Ms: round(percentile(latencies, 0.99), 3),
    };
  } finally {
    agent.destroy();
  }
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux; undefined elsewhere or when it is gone). */
function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/**
 * CPU each side of a run spends, so that runs on shared cores can be compared: the API server
 * process, the PostgreSQL backends serving its database, and this load generator.
 */
function createCpuMeter(
  serverPid: number | undefined,
  database: string,
): { start(): Promise<void>; stop(): Promise<{ serverMs: number; postgresMs: number; clientMs: number }> } {
  const backends = async (): Promise<Map<number, number>> => {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      return new Map(
        rows.flatMap((r) => {
          const ms = processCpuMs(r.pid);
          return ms === undefined ? [] : [[r.pid, ms] as const];
        }),
      );
    } finally {
      await client.end();
    }
  };
  let server = 0;
  let before = new Map<number, number>();
  let client = process.cpuUsage();
  return {
    async start() {
      before = await backends();
      server = serverPid === undefined ? 0 : (processCpuMs(serverPid) ?? 0);
      client = process.cpuUsage();
    },
    async stop() {
      const clientUsage = process.cpuUsage(client);
      const serverMs = (serverPid === undefined ? 0 : (processCpuMs(serverPid) ?? 0)) - server;
      let postgresMs = 0;
      for (const [pid, ms] of await backends()) postgresMs += ms - (before.get(pid) ?? 0);
      return { serverMs, postgresMs, clientMs: (clientUsage.user + clientUsage.system) / 1000 };
    },
  };
}

/** Variables naming phase `i` (clients send variables; the query text, and Apollo's parsed-document cache entry, stay the same). */
function phaseVars(i: number, phases: number): { cluster: string; namespace: string; name: string } {
  const g = i % phases;
  return {
    cluster: g % 2 === 0 ? 'bench-a' : 'bench-b',
    namespace: `team-${Math.floor(g / 50)}`,
    name: `phase-${String(g).padStart(5, '0')}`,
  };
}

const PHASE_ARGS = '$cluster: String!, $namespace: String!, $name: String!';
const HISTORY = `query History(${PHASE_ARGS}, $from: DateTime!) { phase(cluster: $cluster, namespace: $namespace, name: $name) { history(from: $from, first: 50) { edges { node { status from to } } } } }`;
const STATUS_AT = `query StatusAt(${PHASE_ARGS}, $at: DateTime!) { phase(cluster: $cluster, namespace: $namespace, name: $name) { statusAt(at: $at) { status resources { edges { node { key status since } } } } } }`;
const GATE = `query Gate(${PHASE_ARGS}) { gate(phase: { cluster: $cluster, namespace: $namespace, name: $name }, for: "10m") { passed reason heldSince } }`;
const PHASE_LIST = `query Phases($after: String) { phases(first: 100, after: $after) { edges { node { name status since summary { current inProgress total } worstResource { key status since } } } pageInfo { hasNextPage endCursor } } }`;
/** The same fields as PHASE_LIST, a page of `$first` phases. */
const PHASE_PAGE = `query Phases($first: Int!) { phases(first: $first) { edges { node { name status since summary { current inProgress total } worstResource { key status since } } } pageInfo { hasNextPage endCursor } } }`;

/**
 * Starts the API (in a child, on `databaseUrl`, seeded by {@link seed}) and a bare Apollo server,
 * and measures every query (or the `only` ones) at 1 client and at `concurrency` clients.
 */
export async function measureApi(
  databaseUrl: string,
  seeded: Seeded,
  options: Required<Pick<GraphqlApiBenchOptions, 'phases' | 'resources' | 'intervals' | 'requests' | 'concurrency'>> & {
    only?: RegExp;
    warmup?: number;
  },
): Promise<Figures> {
  const { phases, resources, intervals, requests, concurrency } = options;
  // Every server gets the same untimed warm-up per query, the bare Apollo baseline included: the
  // figures are a running server's, not those of one still compiling its hot code (a gateway
  // answers for days; with 50 warm-up requests the 1-client p95 of a history page was 3.4-5.4 ms,
  // with 1,000 2.9-3.5 ms, for the same code).
  const warmup = options.warmup ?? 200;
  const figures: Figures = {};
  const cpuProfile = process.env['PHASELOG_BENCH_CPU_PROF'];
  // Both servers run as in production (phaselog's entry point sets the same when unset), so that
  // the ratios compare like with like; the children inherit this environment.
  process.env['NODE_ENV'] ??= 'production';
  const apiChild = await startReadyChild(
    SERVER_FILE,
    [JSON.stringify({ databaseUrl: databaseUrl, ...(cpuProfile ? { cpuProfile } : {}) })],
    30_000,
  );
  const apollo = await startReadyChild(APOLLO_FILE, ['apollo']);
  try {
    const url = new URL(apiChild.ready.url);
    const authorization = `Bearer ${seeded.secret}`;
    const gql = (agent: Agent, query: string, variables?: Record<string, unknown>) =>
      post(agent, url, Buffer.from(JSON.stringify({ query, variables })), authorization);
    const mid = (i: number) => new Date(seeded.start.getTime() + ((i * 7919) % intervals) * 600_000 + 1).toISOString();
    // The gate figure is the one a fresh phase's gate costs (it reads the phase's run), not a STALE
    // answer given without reading history, as a seed that leaves its clusters unobserved would get.
    const probe = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query: GATE, variables: phaseVars(0, phases) }),
    });
    const reason = ((await probe.json()) as { data?: { gate?: { reason?: string } } }).data?.gate?.reason;
    if (reason === undefined || reason === 'STALE')
      throw new Error(`the seeded gate answers ${reason ?? 'nothing'}; the seed must leave its clusters observed`);
    const queries: { name: string; step: (agent: Agent, i: number) => Promise<boolean>; weight?: number }[] = [
      // What phaselog adds before any resolver runs (token, limits, context), next to the bare server.
      { name: 'phaselog { __typename }', step: (agent) => gql(agent, '{ __typename }') },
      {
        name: 'history page (50 intervals)',
        step: (agent, i) => gql(agent, HISTORY, { ...phaseVars(i, phases), from: seeded.start.toISOString() }),
      },
      {
        name: `statusAt (${resources} resources)`,
        step: (agent, i) => gql(agent, STATUS_AT, { ...phaseVars(i, phases), at: mid(i) }),
      },
      {
        name: 'gate (10m)',
        step: (agent, i) => gql(agent, GATE, phaseVars(i, phases)),
      },
      {
        name: 'phase list page (100, summary + since + worst)',
        step: (agent) => gql(agent, PHASE_LIST, {}),
      },
      {
        name: `all ${phases.toLocaleString('en-US')} phases (one request)`,
        weight: 10,
        step: async (agent) => {
          const answer = await fetchJson(
            agent,
            url,
            Buffer.from(JSON.stringify({ query: PHASE_PAGE, variables: { first: phases } })),
            authorization,
          );
          const conn = answer?.data?.phases;
          return (
            conn !== undefined &&
            answer?.errors === undefined &&
            !conn.pageInfo.hasNextPage &&
            (conn as { edges?: unknown[] }).edges?.length === phases
          );
        },
      },
      {
        name: `all ${phases.toLocaleString('en-US')} phases (${Math.ceil(phases / 100)} pages of 100)`,
        weight: 30,
        step: async (agent) => {
          let after: string | undefined;
          let ok = true;
          for (let page = 0; page < Math.ceil(phases / 100) + 1; page++) {
            const body = Buffer.from(
              JSON.stringify({ query: PHASE_LIST, variables: after === undefined ? {} : { after } }),
            );
            const answer = await fetchJson(agent, url, body, authorization);
            const conn = answer?.data?.phases;
            if (!conn || answer.errors) return false;
            if (!conn.pageInfo.hasNextPage) return ok && page === Math.ceil(phases / 100) - 1;
            after = conn.pageInfo.endCursor ?? undefined;
            ok &&= after !== undefined;
          }
          return false;
        },
      },
    ];
    const cpu = createCpuMeter(apiChild.child.pid, databaseUrl);
    const bareCpu = createCpuMeter(apollo.child.pid, databaseUrl);
    const apolloUrl = new URL(apollo.ready.url);
    const typename = Buffer.from(JSON.stringify({ query: '{ __typename }' }));
    const bare = (agent: Agent) => post(agent, apolloUrl, typename, undefined);
    for (const [label, clients, count] of [
      ['1 client', 1, Math.max(100, Math.round(requests / 3))],
      [`${concurrency} clients`, concurrency, requests],
    ] as const) {
      const base = await runLoad(clients, count * 2, warmup, bare, () => bareCpu.start());
      const bareUsed = await bareCpu.stop();
      figures[`bare Apollo { __typename }, ${label}: requests/s`] = base.requestsPerSecond;
      figures[`bare Apollo { __typename }, ${label}: p50 ms`] = base.p50Ms;
      figures[`bare Apollo { __typename }, ${label}: p95 ms`] = base.p95Ms;
      figures[`bare Apollo { __typename }, ${label}: CPU ms per request, server`] = round(
        bareUsed.serverMs / base.requests,
        3,
      );
      figures[`bare Apollo { __typename }, ${label}: CPU ms per request, load generator`] = round(
        bareUsed.clientMs / base.requests,
        3,
      );
      for (const query of queries.filter((q) => options.only === undefined || options.only.test(q.name))) {
        const weight = query.weight ?? 1;
        const result = await runLoad(
          clients,
          Math.max(20, Math.round(count / weight)),
          Math.max(2, Math.round(warmup / weight)),
          query.step,
          () => cpu.start(),
        );
        const used = await cpu.stop();
        figures[`${query.name}, ${label}: requests/s`] = result.requestsPerSecond;
        figures[`${query.name}, ${label}: p50 ms`] = result.p50Ms;
        figures[`${query.name}, ${label}: p95 ms`] = result.p95Ms;
        if (weight === 1)
          figures[`${query.name}, ${label}: × bare Apollo requests/s`] = round(
            result.requestsPerSecond / base.requestsPerSecond,
            3,
          );
        figures[`${query.name}, ${label}: errors`] = result.errors;
        // Per request, so that runs on busy shared cores compare (a walk of pages counts as one).
        figures[`${query.name}, ${label}: CPU ms per request, API server`] = round(used.serverMs / result.requests, 3);
        figures[`${query.name}, ${label}: CPU ms per request, PostgreSQL`] = round(
          used.postgresMs / result.requests,
          3,
        );
        figures[`${query.name}, ${label}: CPU ms per request, load generator`] = round(
          used.clientMs / result.requests,
          3,
        );
      }
    }
  } finally {
    await apollo.stop();
    await apiChild.stop(cpuProfile ? 30_000 : 5_000);
  }
  return figures;
}

/** Runs the benchmark and returns its figures. */
export async function run(options: GraphqlApiBenchOptions = {}): Promise<Figures> {
  const requests = options.requests ?? 3000;
  const concurrency = options.concurrency ?? 16;
  const measuring = {
    ...(options.only === undefined ? {} : { only: options.only }),
    ...(options.warmup === undefined ? {} : { warmup: options.warmup }),
  };
  if (options.reuseDb !== undefined) {
    const kept = JSON.parse(readFileSync(options.reuseDb, 'utf8')) as KeptDatabase;
    const seeded: Seeded = { start: new Date(kept.start), secret: kept.secret, statusChanges: kept.statusChanges };
    const figures: Figures = {
      phases: kept.phases,
      'resources per phase': kept.resources,
      'status changes (change-log rows)': kept.statusChanges,
    };
    const { phases, resources, intervals } = kept;
    Object.assign(
      figures,
      await measureApi(kept.connectionString, seeded, {
        phases,
        resources,
        intervals,
        requests,
        concurrency,
        ...measuring,
      }),
    );
    return figures;
  }
  const phases = options.phases ?? 1000;
  const resources = options.resources ?? 10;
  const intervals = options.intervals ?? 100;
  const scratch = await createScratchDatabase('graphql_api');
  let keep = false;
  try {
    await migrateDatabase(scratch.connectionString);
    const seedStarted = Date.now();
    const seeded = await seed(scratch.connectionString, phases, resources, intervals);
    const seedMs = Date.now() - seedStarted;
    if (options.keepDb !== undefined) {
      const kept: KeptDatabase = {
        connectionString: scratch.connectionString,
        start: seeded.start.toISOString(),
        secret: seeded.secret,
        statusChanges: seeded.statusChanges,
        phases,
        resources,
        intervals,
      };
      writeFileSync(options.keepDb, JSON.stringify(kept));
      keep = true;
    }
    const figures: Figures = {
      phases,
      'resources per phase': resources,
      'status changes (change-log rows)': seeded.statusChanges,
      'resource intervals': phases * resources * intervals,
      'phase intervals': phases * intervals,
      'seed s': round(seedMs / 1000),
    };

    Object.assign(
      figures,
      await measureApi(scratch.connectionString, seeded, {
        phases,
        resources,
        intervals,
        requests,
        concurrency,
        ...measuring,
      }),
    );
    return figures;
  } finally {
    if (!keep) await scratch.drop();
  }
}

interface PhasesAnswer {
  data?: { phases?: { pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
  errors?: unknown;
}

function fetchJson(agent: Agent, url: URL, body: Buffer, authorization: string): Promise<PhasesAnswer | undefined> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length, authorization },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as PhasesAnswer);
          } catch {
            resolve(undefined);
          }
        });
        res.on('error', () => resolve(undefined));
      },
    );
    req.on('error', () => resolve(undefined));
    req.end(body);
  });
}

function readStringFlag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? undefined : process.argv[index + 1];
}

if (isMain(import.meta.url)) {
  const keepDb = readStringFlag('keep-db');
  const reuseDb = readStringFlag('reuse-db');
  const only = readStringFlag('only');
  if (reuseDb !== undefined && !existsSync(reuseDb))
    throw new Error(`--reuse-db: no file ${reuseDb} (write one with --keep-db)`);
  printFigures(
    'GraphQL API over a seeded history',
    await run({
      phases: readNumberFlag('phases'),
      resources: readNumberFlag('resources'),
      intervals: readNumberFlag('intervals'),
      requests: readNumberFlag('requests'),
      concurrency: readNumberFlag('concurrency'),
      warmup: readNumberFlag('warmup'),
      ...(keepDb === undefined ? {} : { keepDb }),
      ...(reuseDb === undefined ? {} : { reuseDb }),
      ...(only === undefined ? {} : { only: new RegExp(only) }),
    }),
  );
}
