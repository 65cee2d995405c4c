/**
 * Read repository for a phase's history: resources now or at a time, status intervals, the phase's
 * change log, manifests over time and the global status change log. Intervals are [from, to): a
 * status that changed at T is the new one at T.
 */
import type { Db } from './db.ts';
import { createCoalescer, createReadSql, type ReadSql } from './read-sql.ts';
import { withConditionTimes } from '../history/status-detail.ts';
import { readApplied } from '../history/applied.ts';
import { readJson } from './read-json.ts';
import type { StatusChange } from '../history/types.ts';
import { accessConditions, type AccessColumns } from './access-rule.ts';
import type {
  AccessScope,
  ManifestEntry,
  ManifestVersionRecord,
  Page,
  PhaseIntervalRecord,
  PhaseStatusRecord,
  ResourceRecord,
  AppliedCountRecord,
} from './read-types.ts';
import type { Sql } from './sql.ts';
import { sql, empty, join } from './sql.ts';

/** Filter of {@link HistoryReader.listResources}. */
export interface ResourceFilter {
  kind?: string;
  namespace?: string;
  status?: readonly string[];
}

/** Options of {@link HistoryReader.listResources}. */
export interface ListResourcesOptions {
  /** The moment to read; now (open intervals) when omitted. */
  at?: Date;
  filter?: ResourceFilter;
  first: number;
  /** The key of the last resource of the previous page. */
  after?: string;
  /** Only these keys (for DataLoaders). */
  keys?: readonly string[];
}

/** Filter of {@link HistoryReader.listStatusChanges}. */
export interface StatusChangeFilter {
  cluster?: string;
  namespace?: string;
  phaseId?: number;
  scopes?: readonly string[];
  /** Only changes to one of these statuses. */
  toStatus?: readonly string[];
  /** Only condition changes of these types. */
  conditionTypes?: readonly string[];
  from?: Date;
  to?: Date;
}

/** Where a page of intervals starts. */
export interface IntervalCursor {
  from: Date;
  id: string;
}

/** Whether a history page carries each interval's detail (message, summary, worst resource). */
export interface IntervalDetailOption {
  /** Without it, a page spares one lookup per interval. */
  detail: boolean;
}

/** Options of {@link HistoryReader.listPhaseIntervals}. */
export interface ListPhaseIntervalsOptions {
  range: { from: Date; to: Date };
  first: number;
  after?: IntervalCursor;
  /** Read each interval's detail. @default true */
  detail?: boolean;
}

export interface HistoryReader {
  listResources(phaseId: number, options: ListResourcesOptions): Promise<Page<ResourceRecord>>;
  /** Open resource intervals for several (phase, key) pairs in one statement. */
  getCurrentResources(refs: readonly { phaseId: number; key: string }[]): Promise<ResourceRecord[]>;
  /**
   * For each (phase, key, at), `at` being the start of one of the resource's intervals: when the
   * run of that interval's status began (earlier intervals of the same status count while no gap
   * separates them); one index lookup per interval of the run.
   */
  resourceRunStarts(
    refs: readonly { phaseId: number; key: string; at: Date }[],
  ): Promise<{ phaseId: number; key: string; at: Date; from: Date }[]>;
  /**
   * How many members of each phase had each applier status value (per field: strategy, actuation,
   * reconcile, sync) at `at`, or now; one statement for all `phaseIds`. Members with none are not counted.
   */
  countApplied(phaseIds: readonly number[], at?: Date): Promise<AppliedCountRecord[]>;
  /** The phase status interval containing `at`. */
  phaseStatusAt(phaseId: number, at: Date): Promise<PhaseStatusRecord | null>;
  /** Phase status intervals overlapping the range, oldest first. */
  listPhaseIntervals(phaseId: number, options: ListPhaseIntervalsOptions): Promise<Page<PhaseIntervalRecord>>;
  /**
   * The status change log, oldest first, after `afterSeq`: also how a subscriber that missed live
   * events catches up. Appends commit in `seq` order, so a cursor never skips a change.
   */
  listStatusChanges(
    scope: AccessScope,
    filter: StatusChangeFilter,
    first: number,
    afterSeq?: bigint,
  ): Promise<Page<StatusChange>>;
  /**
   * The seq of the newest change the scope sees that matches `filter`; null when there is none. A
   * reader that takes it before reading current state and then follows the log after it misses nothing.
   */
  latestStatusChangeSeq(scope: AccessScope, filter: StatusChangeFilter): Promise<bigint | null>;
  /** The manifest a phase had at `at`. */
  manifestAt(phaseId: number, at: Date): Promise<ManifestVersionRecord | null>;
  /** The phase's manifests, newest first, each with the one before it. */
  listManifests(phaseId: number, first: number, after?: IntervalCursor): Promise<Page<ManifestVersionRecord>>;
  /** Object revision ids of a phase's resources in effect at each of `times`. */
  revisionsAt(phaseId: number, times: readonly Date[]): Promise<{ at: Date; key: string; revisionId: number | null }[]>;
  /**
   * Stored object revisions by id, in one statement (as stored: redacted). Ids retention removed are
   * missing from the answer. Callers pass only ids read from a phase they may see.
   */
  getRevisions(ids: readonly number[]): Promise<StoredRevision[]>;
}

/** An object revision as stored: metadata and spec, redacted (src/history/redact.ts). */
export interface StoredRevision {
  id: number;
  hash: string;
  object: unknown;
}

export interface ResourceRow {
  phaseId: number;
  resourceKey: string;
  status: string;
  reason: string | null;
  message: string;
  conditions: unknown;
  presence: string;
  generation: bigint | null;
  observedGeneration: bigint | null;
  customHealth: unknown;
  applied: unknown;
  revisionId: number | null;
  from: Date;
  to: Date | null;
}

export function toResource(row: ResourceRow): ResourceRecord {
  return {
    phaseId: Number(row.phaseId),
    key: row.resourceKey,
    status: row.status,
    reason: row.reason,
    message: row.message,
    conditions: readJson(row.conditions, []),
    presence: row.presence,
    generation: row.generation === null ? null : Number(row.generation),
    observedGeneration: row.observedGeneration === null ? null : Number(row.observedGeneration),
    customHealth: readJson(row.customHealth, null),
    applied: readApplied(row.applied),
    revisionId: row.revisionId,
    from: row.from,
    to: row.to,
  };
}

interface IntervalRow {
  phaseId: number;
  status: string;
  body: unknown;
  conditionTimes: (Date | string | null)[] | null;
  stale: boolean;
  staleSince: Date | null;
  unobserved: boolean;
  from: Date;
  to: Date | null;
}

/**
 * A phase's status intervals, ended ones and the current one (`to` NULL), as rows `s` with their
 * detail body; `ended` and `current` are the conditions each part must meet.
 */
function phaseIntervals(ended: Sql, current: Sql): Sql {
  return sql`(
    (SELECT s."phaseId", s."status", d."body", s."conditionTimes", s."stale", s."staleSince", s."unobserved", s."from", s."to"
    FROM "PhaseStatusInterval" s JOIN "StatusDetail" d ON d."id" = s."detailId" WHERE ${ended})
    UNION ALL
    SELECT s."phaseId", s."status", d."body", s."conditionTimes", s."stale", s."staleSince", false, s."from", NULL::timestamptz(3)
    FROM "PhaseCurrentStatus" s JOIN "StatusDetail" d ON d."id" = s."detailId" WHERE ${current}
  ) s`;
}

/** Shapes a phase interval row with its detail body; the id is its start (unique per phase). */
export function toPhaseStatus(row: Omit<IntervalRow, 'phaseId'> & { phaseId: number }): PhaseStatusRecord {
  const body = readJson<Record<string, unknown>>(row.body, {});
  const message = typeof body['message'] === 'string' ? body['message'] : '';
  return {
    phaseId: Number(row.phaseId),
    status: row.status,
    message,
    summary: (body['summary'] ?? {}) as Record<string, number>,
    conditions: withConditionTimes(
      Array.isArray(body['conditions']) ? (body['conditions'] as unknown[]) : [],
      row.conditionTimes,
      { reason: row.status, message },
    ),
    worstResource: typeof body['worstResource'] === 'string' ? body['worstResource'] : null,
    stale: row.stale,
    staleSince: row.staleSince,
    unobserved: row.unobserved,
    from: row.from,
    to: row.to,
  };
}

function toInterval(row: IntervalRow): PhaseStatusRecord & { id: string } {
  return { id: String(row.from.getTime()), ...toPhaseStatus(row) };
}

/** A resource interval with its detail: resource `r`, interval `i`, detail `d`. */
export const RESOURCE_COLUMNS = sql`r."phaseId", r."key" AS "resourceKey", i."status", d."body" ->> 'reason' AS "reason", coalesce(d."body" ->> 'message', '') AS "message",
  coalesce(d."body" -> 'conditions', '[]'::jsonb) AS "conditions", coalesce(d."body" ->> 'presence', '') AS "presence",
  (d."body" ->> 'generation')::bigint AS "generation", (d."body" ->> 'observedGeneration')::bigint AS "observedGeneration",
  d."body" -> 'customHealth' AS "customHealth", d."body" -> 'applied' AS "applied", i."revisionId", i."from", i."to"`;

/**
 * The status of resource `r` in effect at `at` (its current status when `at` is undefined), as `i`
 * with its detail `d`: the current status if it began by then, else one index lookup on the ended
 * intervals (resourceId, from), however long the history.
 */
export function intervalAt(at: Date | Sql | undefined): Sql {
  if (at === undefined) {
    return sql`CROSS JOIN LATERAL (
        SELECT c."status", c."detailId", c."revisionId", c."from", NULL::timestamptz(3) AS "to" FROM "ResourceCurrentStatus" c WHERE c."resourceId" = r."id"
      ) i
      JOIN "StatusDetail" d ON d."id" = i."detailId"`;
  }
  return sql`CROSS JOIN LATERAL (
      SELECT c."status", c."detailId", c."revisionId", c."from", NULL::timestamptz(3) AS "to" FROM "ResourceCurrentStatus" c
      WHERE c."resourceId" = r."id" AND c."from" <= ${at}
      UNION ALL
      (SELECT x."status", x."detailId", x."revisionId", x."from", x."to" FROM "ResourceStatusInterval" x
       WHERE x."resourceId" = r."id" AND x."from" <= ${at} ORDER BY x."from" DESC LIMIT 1)
    ) i
    JOIN "StatusDetail" d ON d."id" = i."detailId" AND (i."to" IS NULL OR i."to" > ${at})`;
}

interface ManifestRow {
  id: number;
  phaseId: number;
  hash: string;
  entries: unknown;
  source: unknown;
  from: Date;
  to: Date | null;
  prevHash: string | null;
  prevEntries: unknown;
  prevFrom: Date | null;
}

function toManifest(row: ManifestRow): ManifestVersionRecord {
  return {
    id: Number(row.id),
    phaseId: Number(row.phaseId),
    hash: row.hash,
    entries: readJson<ManifestEntry[]>(row.entries, []),
    source: readJson(row.source, {}),
    from: row.from,
    to: row.to,
    previous:
      row.prevHash === null || row.prevFrom === null
        ? null
        : { hash: row.prevHash, entries: readJson<ManifestEntry[]>(row.prevEntries, []), from: row.prevFrom },
  };
}

function manifestQuery(phaseId: number): Sql {
  return sql`
    WITH versions AS (
      SELECT pm."id", pm."phaseId", pm."manifestId", pm."from", pm."to",
             lag(pm."manifestId") OVER (ORDER BY pm."from", pm."id") AS "prevManifestId",
             lag(pm."from") OVER (ORDER BY pm."from", pm."id") AS "prevFrom"
      FROM "PhaseManifest" pm WHERE pm."phaseId" = ${phaseId}::int
    )
    SELECT v."id", v."phaseId", m."hash", m."entries", m."source", v."from", v."to",
           pm2."hash" AS "prevHash", pm2."entries" AS "prevEntries", v."prevFrom"
    FROM versions v
    JOIN "Manifest" m ON m."id" = v."manifestId"
    LEFT JOIN "Manifest" pm2 ON pm2."id" = v."prevManifestId"`;
}

/**
 * A history page as PostgreSQL sends it: one JSON array per column (null for an empty page), times
 * in epoch milliseconds, the detail's fields when asked.
 */
export type IntervalColumns = [
  status: string[] | null,
  stale: boolean[] | null,
  from: number[] | null,
  to: (number | null)[] | null,
  message?: (string | null)[] | null,
  summary?: (Record<string, number> | null)[] | null,
  worstResource?: (string | null)[] | null,
  /** Last, so pages without the detail keep their shape (NULLs where the detail would be). */
  unobserved?: boolean[] | null,
];

interface IntervalPageAsk {
  phaseId: number;
  range: { from: Date; to: Date };
  limit: number;
  after: Date | null;
}

/** Epoch milliseconds of a timestamptz(3) column (float8 arithmetic, rounded: exact, and cheaper than extract's numeric). */
const epochMs = (column: Sql) => sql`round(date_part('epoch', ${column}) * 1000)::int8`;

/**
 * One history page as a scalar subquery: the intervals of phase `phaseId` (an SQL expression) in
 * the window, after the cursor and up to the limit of the row `k` around it (columns "from", "to",
 * "after", "limit"), as one JSON value of column arrays ({@link IntervalColumns}). An index range
 * on (phaseId, from) stopping at the limit. Only the columns a page shows are read: no condition
 * times, and the detail's three fields only when `detail` (each interval's detail is one more
 * index lookup). One JSON value per page: the driver parses one text per page instead of a row per
 * interval with two timestamps (a tenth of a history request's CPU), and PostgreSQL spends about
 * what it spent sending the rows (per-row JSON, or aggregates that sort, cost it more).
 */
export function intervalPageSql(phaseId: Sql, { detail: withDetail }: IntervalDetailOption): Sql {
  const detail = withDetail
    ? sql`, d."body" ->> 'message' AS "message", d."body" -> 'summary' AS "summary", d."body" ->> 'worstResource' AS "worstResource"`
    : empty;
  const detailColumns = withDetail
    ? sql`, array_agg(s."message"), array_agg(s."summary"), array_agg(s."worstResource")`
    : sql`, NULL, NULL, NULL`;
  const join = withDetail ? sql`JOIN "StatusDetail" d ON d."id" = s."detailId"` : empty;
  // An interval's start is unique within its phase, so it is the whole cursor.
  const where = sql`s."phaseId" = ${phaseId} AND s."from" < k."to" AND s."from" > coalesce(k."after", '-infinity')`;
  return sql`(
        SELECT json_build_array(array_agg(s."status"), array_agg(s."stale"), array_agg(${epochMs(sql`s."from"`)}), array_agg(${epochMs(sql`s."to"`)}) ${detailColumns}, array_agg(s."unobserved"))
        FROM (
          SELECT s.* FROM (
            (SELECT s."status", s."stale", s."unobserved", s."from", s."to" ${detail}
             FROM "PhaseStatusInterval" s ${join}
             WHERE ${where} AND s."to" > k."from" ORDER BY s."from" LIMIT k."limit")
            UNION ALL
            SELECT s."status", s."stale", false, s."from", NULL::timestamptz(3) ${detail}
            FROM "PhaseCurrentStatus" s ${join} WHERE ${where}
          ) s
          ORDER BY s."from" LIMIT k."limit"
        ) s
      )`;
}

/**
 * Pages of phase intervals asked by concurrent requests (every history query of a phase already
 * resolved) share statements: one {@link intervalPageSql} per ask.
 */
function createIntervalPages(
  reads: ReadSql,
  detail: IntervalDetailOption,
): (ask: IntervalPageAsk) => Promise<PhaseIntervalRecord[]> {
  const page = intervalPageSql(sql`k."phaseId"`, detail);
  return createCoalescer<IntervalPageAsk, PhaseIntervalRecord[]>(async (asks) => {
    const rows = await reads.query<{ ask: number; page: IntervalColumns }>(sql`
      SELECT k."ask"::int AS "ask", ${page} AS "page"
      FROM unnest(${asks.map((a) => a.phaseId)}::int[], ${asks.map((a) => a.range.from)}::timestamptz[], ${asks.map((a) => a.range.to)}::timestamptz[],
                  ${asks.map((a) => a.after)}::timestamptz[], ${asks.map((a) => a.limit)}::int[])
        WITH ORDINALITY AS k("phaseId", "from", "to", "after", "limit", "ask")`);
    const answers: PhaseIntervalRecord[][] = asks.map(() => []);
    for (const row of rows) answers[row.ask - 1] = toIntervalPage(row.page, detail);
    return answers;
  });
}

/** The intervals of a page in the order of their start, from the columns PostgreSQL sent. */
export function toIntervalPage(
  [statuses, stale, from, to, messages, summaries, worst, unobserved]: IntervalColumns,
  { detail: withDetail }: IntervalDetailOption,
): PhaseIntervalRecord[] {
  if (statuses === null || from === null) return [];
  const items = statuses.map((status, i): PhaseIntervalRecord => {
    const start = from[i] as number;
    const end = to?.[i] ?? null;
    return {
      id: String(start),
      status,
      stale: stale?.[i] === true,
      unobserved: unobserved?.[i] === true,
      from: new Date(start),
      to: end === null ? null : new Date(end),
      detail: withDetail
        ? { message: messages?.[i] ?? '', summary: summaries?.[i] ?? {}, worstResource: worst?.[i] ?? null }
        : undefined,
    };
  });
  // array_agg keeps the order of the ordered subquery it reads (PostgreSQL reads it as it comes),
  // which SQL does not promise: a page out of order is sorted here.
  for (let i = 1; i < from.length; i++) {
    if ((from[i - 1] as number) > (from[i] as number)) return items.sort((a, b) => a.from.getTime() - b.from.getTime());
  }
  return items;
}

/**
 * Change-log rows `sc` of cluster `c` and phase `p` (LEFT JOINed: NULL once retention deleted the
 * phase), as the access rule reads them: a row with no phase is a cluster-level fact (reachability).
 */
const CHANGE_ACCESS_COLUMNS: AccessColumns = {
  cluster: sql`c."name"`,
  namespace: sql`p."namespace"`,
  clusterLevel: sql`sc."phaseId" IS NULL`,
};

/** What a change-log read may see and asked for, over `sc` (StatusChange), `c` (Cluster) and `p` (Phase). */
function changeConditions(scope: AccessScope, filter: StatusChangeFilter): Sql[] {
  const where = accessConditions(scope, CHANGE_ACCESS_COLUMNS);
  if (filter.cluster !== undefined) where.push(sql`c."name" = ${filter.cluster}`);
  if (filter.namespace !== undefined) where.push(sql`p."namespace" = ${filter.namespace}`);
  if (filter.phaseId !== undefined) where.push(sql`sc."phaseId" = ${filter.phaseId}::int`);
  if (filter.scopes !== undefined) where.push(sql`sc."scope" = ANY(${[...filter.scopes]}::text[])`);
  if (filter.toStatus !== undefined) where.push(sql`sc."toStatus" = ANY(${[...filter.toStatus]}::text[])`);
  if (filter.conditionTypes !== undefined)
    where.push(sql`sc."conditionType" = ANY(${[...filter.conditionTypes]}::text[])`);
  if (filter.from !== undefined) where.push(sql`sc."at" >= ${filter.from}`);
  if (filter.to !== undefined) where.push(sql`sc."at" < ${filter.to}`);
  return where;
}

export function createHistoryReader(db: Db): HistoryReader {
  const reads = createReadSql(db);
  const intervalPages = createIntervalPages(reads, { detail: true });
  const bareIntervalPages = createIntervalPages(reads, { detail: false });
  return {
    async listResources(phaseId, { at, filter = {}, first, after, keys }) {
      const where = [sql`r."phaseId" = ${phaseId}::int`];
      if (filter.kind !== undefined) where.push(sql`split_part(r."key", '/', 2) = ${filter.kind}`);
      if (filter.namespace !== undefined) where.push(sql`split_part(r."key", '/', 3) = ${filter.namespace}`);
      if (filter.status !== undefined) where.push(sql`i."status" = ANY(${[...filter.status]}::text[])`);
      if (after !== undefined) where.push(sql`r."key" > ${after}`);
      if (keys !== undefined) where.push(sql`r."key" = ANY(${[...keys]}::text[])`);
      const rows = await reads.query<ResourceRow>(sql`
        SELECT ${RESOURCE_COLUMNS} FROM "Resource" r ${intervalAt(at)}
        WHERE ${join(where, ' AND ')} ORDER BY r."key" LIMIT ${first + 1}`);
      return { items: rows.slice(0, first).map(toResource), hasMore: rows.length > first };
    },

    async getCurrentResources(refs) {
      if (refs.length === 0) return [];
      const rows = await reads.query<ResourceRow>(sql`
        SELECT ${RESOURCE_COLUMNS}
        FROM unnest(${refs.map((r) => r.phaseId)}::int[], ${refs.map((r) => r.key)}::text[]) AS k("phaseId", "key")
        JOIN "Resource" r ON r."phaseId" = k."phaseId" AND r."key" = k."key"
        ${intervalAt(undefined)}`);
      return rows.map(toResource);
    },

    async resourceRunStarts(refs) {
      if (refs.length === 0) return [];
      // From the interval starting at `at`, walk back one index lookup per step (as for phases).
      const rows = await reads.query<{ phaseId: number; resourceKey: string; at: Date; from: Date }>(sql`
        WITH RECURSIVE walk AS (
          SELECT r."id" AS "resourceId", r."phaseId", r."key" AS "resourceKey", k."at", i."from", i."status"
          FROM unnest(${refs.map((r) => r.phaseId)}::int[], ${refs.map((r) => r.key)}::text[], ${refs.map((r) => r.at)}::timestamptz[]) AS k("phaseId", "key", "at")
          JOIN "Resource" r ON r."phaseId" = k."phaseId" AND r."key" = k."key"
          CROSS JOIN LATERAL (
            SELECT c."from", c."status" FROM "ResourceCurrentStatus" c WHERE c."resourceId" = r."id" AND c."from" = k."at"
            UNION ALL
            SELECT x."from", x."status" FROM "ResourceStatusInterval" x WHERE x."resourceId" = r."id" AND x."from" = k."at"
          ) i
          UNION ALL
          SELECT w."resourceId", w."phaseId", w."resourceKey", w."at", prev."from", prev."status" FROM walk w
          CROSS JOIN LATERAL (
            SELECT p."from", p."to", p."status" FROM "ResourceStatusInterval" p
            WHERE p."resourceId" = w."resourceId" AND p."from" < w."from"
            ORDER BY p."from" DESC LIMIT 1
          ) prev
          WHERE prev."to" = w."from" AND prev."status" = w."status"
        )
        SELECT "phaseId", "resourceKey", "at", min("from") AS "from" FROM walk GROUP BY "phaseId", "resourceKey", "at"`);
      return rows.map((row) => ({ phaseId: Number(row.phaseId), key: row.resourceKey, at: row.at, from: row.from }));
    },

    async countApplied(phaseIds, at) {
      if (phaseIds.length === 0) return [];
      const rows = await reads.query<{ phaseId: number; field: string; value: string; count: bigint | number }>(sql`
        SELECT r."phaseId", f."key" AS "field", f."value", count(*) AS "count"
        FROM "Resource" r ${intervalAt(at)}
        CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(d."body" -> 'applied') = 'object' THEN d."body" -> 'applied' ELSE '{}'::jsonb END) f
        WHERE r."phaseId" = ANY(${[...phaseIds]}::int[])
        GROUP BY r."phaseId", f."key", f."value"
        ORDER BY r."phaseId", f."key", f."value"`);
      return rows.map((row) => ({
        phaseId: Number(row.phaseId),
        field: row.field,
        value: row.value,
        count: Number(row.count),
      }));
    },

    async phaseStatusAt(phaseId, at) {
      // The current status if it began by `at`, else the one ended interval that can contain `at`.
      const rows = await reads.query<IntervalRow>(sql`
        SELECT s.* FROM ${phaseIntervals(
          sql`s."phaseId" = ${phaseId}::int AND s."from" = (SELECT max(x."from") FROM "PhaseStatusInterval" x WHERE x."phaseId" = ${phaseId}::int AND x."from" <= ${at})`,
          sql`s."phaseId" = ${phaseId}::int AND s."from" <= ${at}`,
        )}
        WHERE s."to" IS NULL OR s."to" > ${at} ORDER BY s."from" DESC LIMIT 1`);
      const row = rows[0];
      return row === undefined ? null : toInterval(row);
    },

    async listPhaseIntervals(phaseId, { range, first, after, detail = true }) {
      const pages = detail ? intervalPages : bareIntervalPages;
      const items = await pages({ phaseId, range, limit: first + 1, after: after?.from ?? null });
      return { items: items.slice(0, first), hasMore: items.length > first };
    },

    async listStatusChanges(scope, filter, first, afterSeq) {
      const where = changeConditions(scope, filter);
      if (afterSeq !== undefined) where.push(sql`sc."seq" > ${afterSeq}::bigint`);
      const rows = await reads.query<
        Omit<StatusChange, 'phase'> & { sourceKind: string | null; namespace: string | null; name: string | null }
      >(sql`
        SELECT sc."seq", sc."at", c."name" AS "cluster", sc."clusterId", sc."phaseId", sc."scope", r."key" AS "resourceKey", sc."conditionType", sc."fromStatus", sc."toStatus",
               coalesce(d."body" ->> 'message', '') AS "message", p."sourceKind", p."namespace", p."name"
        FROM "StatusChange" sc
        JOIN "Cluster" c ON c."id" = sc."clusterId"
        LEFT JOIN "Phase" p ON p."id" = sc."phaseId"
        LEFT JOIN "Resource" r ON r."id" = sc."resourceId"
        LEFT JOIN "StatusDetail" d ON d."id" = sc."detailId"
        ${where.length === 0 ? empty : sql`WHERE ${join(where, ' AND ')}`}
        ORDER BY sc."seq" LIMIT ${first + 1}`);
      // conditionType only on condition changes, as the published events carry it.
      const items = rows.slice(0, first).map(({ sourceKind, namespace, name, conditionType, ...row }) => ({
        ...row,
        ...(conditionType != null ? { conditionType } : {}),
        seq: BigInt(row.seq),
        clusterId: Number(row.clusterId),
        phaseId: row.phaseId === null ? null : Number(row.phaseId),
        phase: sourceKind === null || namespace === null || name === null ? null : { sourceKind, namespace, name },
      }));
      return { items, hasMore: rows.length > first };
    },

    async latestStatusChangeSeq(scope, filter) {
      const where = changeConditions(scope, filter);
      const rows = await reads.query<{ seq: bigint | string }>(sql`
        SELECT sc."seq" FROM "StatusChange" sc
        JOIN "Cluster" c ON c."id" = sc."clusterId"
        LEFT JOIN "Phase" p ON p."id" = sc."phaseId"
        ${where.length === 0 ? empty : sql`WHERE ${join(where, ' AND ')}`}
        ORDER BY sc."seq" DESC LIMIT 1`);
      const row = rows[0];
      return row === undefined ? null : BigInt(row.seq);
    },

    async manifestAt(phaseId, at) {
      const rows = await reads.query<ManifestRow>(
        sql`${manifestQuery(phaseId)} WHERE v."from" <= ${at} AND (v."to" IS NULL OR v."to" > ${at}) ORDER BY v."from" DESC LIMIT 1`,
      );
      const row = rows[0];
      return row === undefined ? null : toManifest(row);
    },

    async listManifests(phaseId, first, after) {
      const cursor = after === undefined ? empty : sql`WHERE (v."from", v."id") < (${after.from}, ${after.id}::int)`;
      const rows = await reads.query<ManifestRow>(
        sql`${manifestQuery(phaseId)} ${cursor} ORDER BY v."from" DESC, v."id" DESC LIMIT ${first + 1}`,
      );
      return { items: rows.slice(0, first).map(toManifest), hasMore: rows.length > first };
    },

    async revisionsAt(phaseId, times) {
      if (times.length === 0) return [];
      const rows = await reads.query<{ at: Date; resourceKey: string; revisionId: number | null }>(sql`
        SELECT t."at", r."key" AS "resourceKey", i."revisionId"
        FROM unnest(${[...times]}::timestamptz[]) AS t("at")
        JOIN "Resource" r ON r."phaseId" = ${phaseId}::int
        CROSS JOIN LATERAL (
          SELECT c."revisionId", NULL::timestamptz(3) AS "to" FROM "ResourceCurrentStatus" c WHERE c."resourceId" = r."id" AND c."from" <= t."at"
          UNION ALL
          (SELECT x."revisionId", x."to" FROM "ResourceStatusInterval" x WHERE x."resourceId" = r."id" AND x."from" <= t."at" ORDER BY x."from" DESC LIMIT 1)
        ) i
        WHERE i."to" IS NULL OR i."to" > t."at"`);
      return rows.map((row) => ({ at: row.at, key: row.resourceKey, revisionId: row.revisionId }));
    },

    async getRevisions(ids) {
      if (ids.length === 0) return [];
      const rows = await reads.query<StoredRevision>(
        sql`SELECT "id", "hash", "object" FROM "ObjectRevision" WHERE "id" = ANY(${[...ids]}::int[])`,
      );
      return rows.map((row) => ({ id: row.id, hash: row.hash, object: readJson<unknown>(row.object, null) }));
    },
  };
}
