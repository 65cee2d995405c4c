/**
 * Conditions from checks: one run's results written as changes only (current row, ended interval,
 * a `condition`-scope change-log row per status change), plus the run's time on CheckRun, the one
 * row a run that changed nothing writes. Reads: a phase's current conditions with their runs.
 */
import { messageDetail } from '../history/status-detail.ts';
import {
  isCheckRunFresh,
  planConditionChanges,
  type CheckKind,
  type ConditionResult,
  type FalseCondition,
  type ConditionStatus,
  type StoredCondition,
} from '../history/condition-changes.ts';
import type { StatusChange } from '../history/types.ts';
import { CHANGE_LOG_LOCK, storeDetails, uniqueDetails } from './history-write.ts';
import type { Db } from './db.ts';
import { sqlOn, withSqlTransaction, type RawTx } from './sql-transaction.ts';
import { sql, empty } from './sql.ts';

/** One check run over a cluster's selected phases. */
export interface CheckRunWrite {
  /** The check's name. */
  check: string;
  source: CheckKind;
  cluster: string;
  intervalMs: number;
  at: Date;
  results: readonly ConditionResult[];
}

/** What a run wrote. */
export interface CheckRunWritten {
  changes: StatusChange[];
  /** Rows inserted or updated, the CheckRun row included. */
  rows: number;
  /** The run was older than one already written for its check and cluster: nothing was written. */
  stale?: true;
}

/** A phase's current condition as read back, with the last run of its check on the phase's cluster. */
export interface ConditionRecord extends StoredCondition {
  /** When its check last ran against the phase's cluster; null when unknown (no run recorded). */
  lastRunAt: Date | null;
  /** The check's interval at that run. */
  intervalMs: number | null;
}

/** The condition store. */
export interface ConditionStore {
  /** Writes one run's results (changes only) and the run's time; the cluster must exist. */
  recordRun(run: CheckRunWrite): Promise<CheckRunWritten>;
  /**
   * Moves a check's last run on a cluster from `previousAt` to `at`, and nothing else: what a run
   * that found every result as the one at `previousAt` wrote needs no other row. False (nothing
   * written) when the check's last run is no longer `previousAt` (another process ran it since).
   */
  confirmRun(check: string, cluster: string, previousAt: Date, at: Date): Promise<boolean>;
  /** Ids of a cluster's live phases by identity (`sourceKind/namespace/name`). */
  phaseIds(cluster: string): Promise<Map<string, number>>;
  /**
   * The conditions of `types` that are False now on a cluster's live phases, by phase identity
   * (`sourceKind/namespace/name`): what a snapshot folds into phase statuses (`affectsStatus`).
   */
  falseConditions(cluster: string, types: readonly string[]): Promise<Map<string, FalseCondition[]>>;
  /** Redacted object bodies of stored revisions, by hash. */
  revisionBodies(hashes: readonly string[]): Promise<Map<string, Record<string, unknown>>>;
  /** Current conditions of these phases, by phase id, ordered by type. */
  currentConditions(phaseIds: readonly number[]): Promise<Map<number, ConditionRecord[]>>;
  /** A phase's conditions at `at` (the interval of each type containing it), ordered by type. */
  conditionsAt(phaseId: number, at: Date): Promise<ConditionIntervalRecord[]>;
  /**
   * A phase's condition intervals overlapping [from, to), current one included, oldest first (then
   * by type); with `first`, at most that many, after the (from, type) cursor `after`.
   */
  conditionIntervals(
    phaseId: number,
    range: { from: Date; to: Date },
    page?: { type?: string; first?: number; after?: { from: Date; type: string } },
  ): Promise<ConditionIntervalRecord[]>;
}

/** One interval of a condition [from, to); `to` null while open. */
export interface ConditionIntervalRecord {
  phaseId: number;
  type: string;
  source: CheckKind;
  status: ConditionStatus;
  reason: string;
  message: string;
  from: Date;
  to: Date | null;
}

interface ConditionRow {
  phaseId: number;
  type: string;
  source: string;
  status: string;
  reason: string;
  message: string;
  from: Date;
}

const asStored = (r: ConditionRow): StoredCondition => ({
  ...r,
  source: r.source as CheckKind,
  status: r.status as ConditionStatus,
});

/** The condition store over a Prisma client. */
export function createConditionStore(db: Db): ConditionStore {
  const reads = sqlOn(db);
  return {
    recordRun: (run) => withSqlTransaction(db, (tx) => writeRun(tx, run), { timeoutMs: 60_000, maxWaitMs: 30_000 }),

    async confirmRun(check, cluster, previousAt, at) {
      const rows = await reads.$queryRaw<{ one: number }[]>`
        UPDATE "CheckRun" r SET "lastRunAt" = ${at}::timestamptz(3) FROM "Cluster" c
        WHERE c."name" = ${cluster} AND r."clusterId" = c."id" AND r."check" = ${check}
          AND r."lastRunAt" = ${previousAt}::timestamptz(3)
        RETURNING 1 AS "one"`;
      return rows.length > 0;
    },

    async phaseIds(cluster) {
      const rows = await reads.$queryRaw<{ id: number; sourceKind: string; namespace: string; name: string }[]>`
        SELECT p."id", p."sourceKind", p."namespace", p."name" FROM "Phase" p JOIN "Cluster" c ON c."id" = p."clusterId"
        WHERE c."name" = ${cluster} AND p."deletedAt" IS NULL`;
      return new Map(rows.map((r) => [`${r.sourceKind}/${r.namespace}/${r.name}`, r.id]));
    },

    async falseConditions(cluster, types) {
      const result = new Map<string, FalseCondition[]>();
      if (types.length === 0) return result;
      // Sub-conditions a webhook answers (`<check>/<suffix>`) belong to their check.
      const rows = await reads.$queryRaw<
        { sourceKind: string; namespace: string; name: string; type: string; reason: string; message: string }[]
      >`
        SELECT p."sourceKind", p."namespace", p."name", c."type", c."reason", c."message"
        FROM "PhaseConditionCurrent" c JOIN "Phase" p ON p."id" = c."phaseId" JOIN "Cluster" k ON k."id" = p."clusterId"
        WHERE k."name" = ${cluster} AND p."deletedAt" IS NULL AND c."status" = 'False' AND split_part(c."type", '/', 1) = ANY(${[...types]}::text[])
        ORDER BY c."type"`;
      for (const row of rows) {
        const key = `${row.sourceKind}/${row.namespace}/${row.name}`;
        const list = result.get(key) ?? [];
        list.push({ type: row.type, reason: row.reason, message: row.message });
        result.set(key, list);
      }
      return result;
    },

    async revisionBodies(hashes) {
      if (hashes.length === 0) return new Map();
      const rows = await reads.$queryRaw<{ hash: string; object: Record<string, unknown> }[]>`
        SELECT "hash", "object" FROM "ObjectRevision" WHERE "hash" = ANY(${[...hashes]}::text[])`;
      return new Map(rows.map((r) => [r.hash, r.object]));
    },

    async currentConditions(phaseIds) {
      const result = new Map<number, ConditionRecord[]>();
      if (phaseIds.length === 0) return result;
      const rows = await reads.$queryRaw<(ConditionRow & { lastRunAt: Date | null; intervalMs: number | null })[]>`
        SELECT c."phaseId", c."type", c."source", c."status", c."reason", c."message", c."from", r."lastRunAt", r."intervalMs"
        FROM "PhaseConditionCurrent" c
        JOIN "Phase" p ON p."id" = c."phaseId"
        LEFT JOIN "CheckRun" r ON r."check" = split_part(c."type", '/', 1) AND r."clusterId" = p."clusterId"
        WHERE c."phaseId" = ANY(${[...phaseIds]}::int[])
        ORDER BY c."phaseId", c."type"`;
      for (const row of rows) {
        const list = result.get(row.phaseId) ?? [];
        list.push({ ...asStored(row), lastRunAt: row.lastRunAt, intervalMs: row.intervalMs });
        result.set(row.phaseId, list);
      }
      return result;
    },

    async conditionsAt(phaseId, at) {
      const rows = await reads.$queryRaw<(ConditionRow & { to: Date | null })[]>`
        SELECT "phaseId", "type", "source", "status", "reason", "message", "from", "to" FROM "PhaseConditionInterval"
        WHERE "phaseId" = ${phaseId}::int AND "from" <= ${at}::timestamptz(3) AND "to" > ${at}::timestamptz(3)
        UNION ALL
        SELECT "phaseId", "type", "source", "status", "reason", "message", "from", NULL FROM "PhaseConditionCurrent"
        WHERE "phaseId" = ${phaseId}::int AND "from" <= ${at}::timestamptz(3)
        ORDER BY "type"`;
      return rows.map((r) => ({ ...asStored(r), to: r.to }));
    },

    async conditionIntervals(phaseId, { from, to }, page = {}) {
      const type = page.type === undefined ? empty : sql`AND "type" = ${page.type}`;
      const after =
        page.after === undefined
          ? empty
          : sql`WHERE ("from", "type") > (${page.after.from}::timestamptz(3), ${page.after.type})`;
      const limit = page.first === undefined ? empty : sql`LIMIT ${page.first}`;
      const rows = await reads.$queryRaw<(ConditionRow & { to: Date | null })[]>`
        SELECT * FROM (
          SELECT "phaseId", "type", "source", "status", "reason", "message", "from", "to" FROM "PhaseConditionInterval"
          WHERE "phaseId" = ${phaseId}::int AND "from" < ${to}::timestamptz(3) AND "to" > ${from}::timestamptz(3) ${type}
          UNION ALL
          SELECT "phaseId", "type", "source", "status", "reason", "message", "from", NULL FROM "PhaseConditionCurrent"
          WHERE "phaseId" = ${phaseId}::int AND "from" < ${to}::timestamptz(3) ${type}
        ) i ${after}
        ORDER BY "from", "type" ${limit}`;
      return rows.map((r) => ({ ...asStored(r), to: r.to }));
    },
  };
}

async function writeRun(tx: RawTx, run: CheckRunWrite): Promise<CheckRunWritten> {
  const [cluster] = await tx.$queryRaw<{ id: number }[]>`SELECT "id" FROM "Cluster" WHERE "name" = ${run.cluster}`;
  if (cluster === undefined) return { changes: [], rows: 0 };
  // The run's time moves the check's watermark, or the run is older than one already written (two
  // runs overlapped, a late job) and writes nothing: an older result must not undo a newer one. The
  // row stays locked to commit, so runs of one check on one cluster write one at a time.
  const [previous] = await tx.$queryRaw<{ lastRunAt: Date; intervalMs: number }[]>`
    SELECT "lastRunAt", "intervalMs" FROM "CheckRun" WHERE "check" = ${run.check} AND "clusterId" = ${cluster.id}::int FOR UPDATE`;
  const advanced = await tx.$queryRaw<{ one: number }[]>`
    INSERT INTO "CheckRun" ("check", "clusterId", "lastRunAt", "intervalMs") VALUES (${run.check}, ${cluster.id}::int, ${run.at}::timestamptz(3), ${run.intervalMs}::int)
    ON CONFLICT ("check", "clusterId") DO UPDATE SET "lastRunAt" = EXCLUDED."lastRunAt", "intervalMs" = EXCLUDED."intervalMs"
    WHERE "CheckRun"."lastRunAt" < EXCLUDED."lastRunAt"
    RETURNING 1 AS "one"`;
  if (advanced.length === 0) return { changes: [], rows: 0, stale: true };
  // Only phases of this cluster: a result naming another cluster's phase is dropped, not written.
  const phases = await tx.$queryRaw<{ id: number; sourceKind: string; namespace: string; name: string }[]>`
    SELECT "id", "sourceKind", "namespace", "name" FROM "Phase"
    WHERE "clusterId" = ${cluster.id}::int AND "id" = ANY(${[...new Set(run.results.map((r) => r.phaseId))]}::int[])`;
  const phaseById = new Map(phases.map((p) => [p.id, p]));
  const given = run.results.filter((r) => phaseById.has(r.phaseId) && isOfCheck(r.type, run.check));
  // The check's conditions: its own type, and for webhooks the sub-types `<check>/<suffix>` too.
  const stored =
    given.length === 0
      ? []
      : await tx.$queryRaw<ConditionRow[]>`
    SELECT "phaseId", "type", "source", "status", "reason", "message", "from" FROM "PhaseConditionCurrent"
    WHERE "phaseId" = ANY(${[...new Set(given.map((r) => r.phaseId))]}::int[])
      AND ("type" = ${run.check} OR left("type", ${run.check.length + 1}::int) = ${`${run.check}/`})
    FOR UPDATE`;
  // A sub-type a webhook answered before and not now: Unknown, rather than kept as last answered.
  const answered = new Set(given.map((r) => `${r.phaseId}\u0000${r.type}`));
  const asked = new Set(given.map((r) => r.phaseId));
  const dropped: ConditionResult[] = stored
    .filter((c) => c.type !== run.check && asked.has(c.phaseId) && !answered.has(`${c.phaseId}\u0000${c.type}`))
    .map((c) => ({
      phaseId: c.phaseId,
      type: c.type,
      status: 'Unknown',
      reason: 'NotReported',
      message: 'the service did not answer this condition',
    }));
  const results = [...given, ...dropped];
  // After a gap in the check's runs, what held in between was not observed: intervals end at the last run.
  const resumed =
    previous !== undefined &&
    previous.lastRunAt < run.at &&
    !isCheckRunFresh(previous.lastRunAt, previous.intervalMs, run.at);
  const plan = planConditionChanges(stored.map(asStored), results, resumed ? { resumedAfter: previous.lastRunAt } : {});
  const closedAt = plan.closedAt ?? run.at;
  // The CheckRun row: the one row a run that changed nothing writes.
  let rows = 1;
  if (plan.closed.length > 0) {
    rows += await tx.$executeRaw`
      INSERT INTO "PhaseConditionInterval" ("phaseId", "type", "source", "status", "reason", "message", "from", "to")
      SELECT p, t, s, st, r, m, f, ${closedAt}::timestamptz(3) FROM unnest(
        ${plan.closed.map((c) => c.phaseId)}::int[], ${plan.closed.map((c) => c.type)}::text[], ${plan.closed.map((c) => c.source)}::text[],
        ${plan.closed.map((c) => c.status)}::text[], ${plan.closed.map((c) => c.reason)}::text[], ${plan.closed.map((c) => c.message)}::text[],
        ${plan.closed.map((c) => c.from)}::timestamptz(3)[]
      ) AS x(p, t, s, st, r, m, f)
      ON CONFLICT DO NOTHING`;
  }
  if (plan.opened.length > 0) {
    rows += await tx.$executeRaw`
      INSERT INTO "PhaseConditionCurrent" ("phaseId", "type", "source", "status", "reason", "message", "from")
      SELECT p, t, ${run.source}, st, r, m, ${run.at}::timestamptz(3) FROM unnest(
        ${plan.opened.map((c) => c.phaseId)}::int[], ${plan.opened.map((c) => c.type)}::text[],
        ${plan.opened.map((c) => c.status)}::text[], ${plan.opened.map((c) => c.reason)}::text[], ${plan.opened.map((c) => c.message)}::text[]
      ) AS x(p, t, st, r, m)
      ON CONFLICT ("phaseId", "type") DO UPDATE SET "source" = EXCLUDED."source", "status" = EXCLUDED."status",
        "reason" = EXCLUDED."reason", "message" = EXCLUDED."message", "from" = EXCLUDED."from"`;
  }
  if (plan.updated.length > 0) {
    rows += await tx.$executeRaw`
      UPDATE "PhaseConditionCurrent" c SET "reason" = x.r, "message" = x.m
      FROM unnest(${plan.updated.map((c) => c.phaseId)}::int[], ${plan.updated.map((c) => c.type)}::text[],
        ${plan.updated.map((c) => c.reason)}::text[], ${plan.updated.map((c) => c.message)}::text[]) AS x(p, t, r, m)
      WHERE c."phaseId" = x.p AND c."type" = x.t`;
  }
  if (plan.changes.length === 0) return { changes: [], rows };

  const docs = plan.changes.map((c) => messageDetail(c.message));
  const detailIds = await storeDetails(tx, uniqueDetails(docs));
  // Under the change log's lock, held to commit, as every appender: seqs commit in order.
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(${CHANGE_LOG_LOCK})::text`;
  const inserted = await tx.$queryRaw<{ seq: bigint }[]>`
    INSERT INTO "StatusChange" ("at", "clusterId", "phaseId", "scope", "conditionType", "fromStatus", "toStatus", "detailId")
    SELECT ${run.at}::timestamptz(3), ${cluster.id}::int, p, 'condition', t, f, s, d FROM unnest(
      ${plan.changes.map((c) => c.phaseId)}::int[], ${plan.changes.map((c) => c.type)}::text[],
      ${plan.changes.map((c) => c.fromStatus)}::text[], ${plan.changes.map((c) => c.toStatus)}::text[],
      ${docs.map((d) => detailIds.get(d.hash) as number)}::int[]
    ) WITH ORDINALITY AS x(p, t, f, s, d, n)
    ORDER BY x.n
    RETURNING "seq"`;
  const seqs = inserted.map((r) => BigInt(r.seq)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const changes: StatusChange[] = plan.changes.map((c, n) => {
    const phase = phaseById.get(c.phaseId) as { sourceKind: string; namespace: string; name: string };
    return {
      seq: seqs[n] as bigint,
      at: run.at,
      cluster: run.cluster,
      clusterId: cluster.id,
      phaseId: c.phaseId,
      phase: { sourceKind: phase.sourceKind, namespace: phase.namespace, name: phase.name },
      scope: 'condition',
      resourceKey: null,
      conditionType: c.type,
      fromStatus: c.fromStatus,
      toStatus: c.toStatus,
      message: c.message,
    };
  });
  return { changes, rows: rows + changes.length };
}

/** Whether a condition type belongs to a check: its name, or `<name>/<suffix>` (webhook sub-types). */
function isOfCheck(type: string, check: string): boolean {
  return type === check || type.startsWith(`${check}/`);
}
