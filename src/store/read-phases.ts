/**
 * Read repository for phases: pages of phases with their current status, lookups by id or identity,
 * when each phase's current status began, and the status runs a gate needs. Every function answers
 * with one SQL statement, so DataLoaders can batch them.
 */
import { severityOf, STATUSES_BY_SEVERITY } from '../status/severity.ts';
import type { Db } from './db.ts';
import { createCoalescer, createReadSql } from './read-sql.ts';
import {
  intervalAt,
  intervalPageSql,
  RESOURCE_COLUMNS,
  toIntervalPage,
  toPhaseStatus,
  toResource,
  type IntervalColumns,
  type ResourceRow,
} from './read-history.ts';
import { readJson } from './read-json.ts';
import { accessConditions, type AccessColumns } from './access-rule.ts';
import type {
  AccessScope,
  Page,
  PhaseHistoryAsk,
  PhaseRecord,
  PhaseStatusRecord,
  ResourceRecord,
} from './read-types.ts';
import type { Sql } from './sql.ts';
import { sql, empty, join, raw } from './sql.ts';

/** Filter of {@link PhaseReader.listPhases}; every field narrows. */
export interface PhaseFilter {
  cluster?: string;
  namespace?: string;
  source?: string;
  status?: readonly string[];
  /** Every label given must match. */
  labels?: Record<string, string>;
  /** Only phases carrying this label key, whatever its value (plans declared by labels). */
  hasLabel?: string;
  /** Case-insensitive substring of the namespace or name. */
  search?: string;
  /** Include phases whose inventory was deleted. @default false */
  includeDeleted?: boolean;
  /** Only these phases. */
  ids?: readonly number[];
  /** Only phases whose current condition of each type (from checks) has the status given. */
  conditions?: readonly { type: string; status: string }[];
}

/** Orders of {@link PhaseReader.listPhases}. */
export type PhaseOrder = 'NAME' | 'SEVERITY';

/** Where a page starts: the sort key of the last phase of the previous page. */
export interface PhaseCursor {
  severity: number;
  cluster: string;
  namespace: string;
  name: string;
  id: number;
}

/** The sort key of a phase, for cursors. */
export function phaseCursorOf(phase: PhaseRecord): PhaseCursor {
  return {
    severity: severityOf(phase.current?.status ?? null),
    cluster: phase.cluster,
    namespace: phase.namespace,
    name: phase.name,
    id: phase.id,
  };
}

/** {@link severityOf} in SQL, of the status column `status`: a CASE over the one severity order. */
function severitySql(status: Sql): Sql {
  const ranks = STATUSES_BY_SEVERITY.map((word, rank) => `WHEN '${word}' THEN ${rank}`).join(' ');
  return sql`CASE ${status} ${raw(ranks)} ELSE ${raw(String(STATUSES_BY_SEVERITY.length))} END`;
}

const SEVERITY_SQL = severitySql(sql`s."status"`);

const PHASE_COLUMNS = sql`p."id", c."name" AS "cluster", c."reachable" AS "clusterReachable", c."lastGoodReadAt" AS "clusterLastGoodReadAt",
         c."tickLastSeenAt" AS "clusterLastObservedAt", c."snapshotIntervalMs" AS "clusterSnapshotIntervalMs", c."retiredAt" AS "clusterRetiredAt",
         p."sourceKind", p."namespace", p."name", p."inventoryId", p."labels", p."firstSeenAt", p."lastSeenAt", p."deletedAt",
         s."status", d."body", s."conditionTimes", s."stale", s."staleSince", s."from", NULL::timestamptz(3) AS "to", s."since"`;

/** A phase's current status `s` and its detail `d`. */
const CURRENT_STATUS_JOINS = sql`
  LEFT JOIN "PhaseCurrentStatus" s ON s."phaseId" = p."id"
  LEFT JOIN "StatusDetail" d ON d."id" = s."detailId"`;

const PHASE_SELECT = sql`
  SELECT ${PHASE_COLUMNS}
  FROM "Phase" p
  JOIN "Cluster" c ON c."id" = p."clusterId"
  ${CURRENT_STATUS_JOINS}`;

interface PhaseRow {
  id: number;
  cluster: string;
  clusterReachable: boolean | null;
  clusterLastGoodReadAt: Date | null;
  clusterLastObservedAt: Date | null;
  clusterSnapshotIntervalMs: number | null;
  clusterRetiredAt: Date | null;
  sourceKind: string;
  namespace: string;
  name: string;
  inventoryId: string;
  labels: unknown;
  firstSeenAt: Date;
  lastSeenAt: Date;
  deletedAt: Date | null;
  status: string | null;
  body: unknown;
  conditionTimes: (Date | string | null)[] | null;
  stale: boolean | null;
  staleSince: Date | null;
  from: Date | null;
  to: Date | null;
  since: Date | null;
}

/** A phase row with its worst resource's current status (all null when it has none) and when that status's run began. */
interface PhaseWithWorstRow extends PhaseRow {
  worstKey: string | null;
  worstStatus: string | null;
  worstReason: string | null;
  worstMessage: string | null;
  worstConditions: unknown;
  worstPresence: string | null;
  worstGeneration: bigint | string | null;
  worstObservedGeneration: bigint | string | null;
  worstCustomHealth: unknown;
  worstApplied: unknown;
  worstRevisionId: number | null;
  worstFrom: Date | null;
  worstSince: Date | null;
}

/**
 * The phases `page` selects (PHASE_SELECT rows, in its own order and limit), each with its worst
 * resource's current status and when that status's run began, ordered by `orderBy` (over `page`):
 * one statement for what a page of phases with summaries, since and worst resources needs. The
 * worst resource is one unique-index lookup per phase (the LIMIT 1 keeps the planner from turning
 * it into a join over every resource); its run start walks back one index lookup per earlier
 * interval of the same status, as {@link HistoryReader.resourceRunStarts} does.
 */
function withWorstResources(page: Sql, orderBy: Sql): Sql {
  return sql`
    WITH RECURSIVE page AS MATERIALIZED (${page}),
    worst AS MATERIALIZED (
      SELECT w.* FROM page CROSS JOIN LATERAL (
        SELECT r."id" AS "resourceId", ${RESOURCE_COLUMNS} FROM "Resource" r ${intervalAt(undefined)}
        WHERE r."phaseId" = page."id" AND r."key" = page."body" ->> 'worstResource' LIMIT 1
      ) w
    ),
    walk AS (
      SELECT w."resourceId", w."from", w."status" FROM worst w
      UNION ALL
      SELECT walk."resourceId", prev."from", prev."status" FROM walk
      CROSS JOIN LATERAL (
        SELECT x."from", x."to", x."status" FROM "ResourceStatusInterval" x
        WHERE x."resourceId" = walk."resourceId" AND x."from" < walk."from" ORDER BY x."from" DESC LIMIT 1
      ) prev
      WHERE prev."to" = walk."from" AND prev."status" = walk."status"
    ),
    since AS (SELECT "resourceId", min("from") AS "since" FROM walk GROUP BY "resourceId")
    SELECT page.*, worst."resourceKey" AS "worstKey", worst."status" AS "worstStatus", worst."reason" AS "worstReason",
           worst."message" AS "worstMessage", worst."conditions" AS "worstConditions", worst."presence" AS "worstPresence",
           worst."generation" AS "worstGeneration", worst."observedGeneration" AS "worstObservedGeneration",
           worst."customHealth" AS "worstCustomHealth", worst."applied" AS "worstApplied", worst."revisionId" AS "worstRevisionId", worst."from" AS "worstFrom",
           since."since" AS "worstSince"
    FROM page
    LEFT JOIN worst ON worst."phaseId" = page."id"
    LEFT JOIN since ON since."resourceId" = worst."resourceId"
    ORDER BY ${orderBy}`;
}

function toPhaseWithWorst(row: PhaseWithWorstRow): PhaseRecord {
  const phase = toPhase(row);
  if (phase.current?.worstResource == null) {
    phase.worstResource = null;
    return phase;
  }
  const resource: ResourceRecord | null =
    row.worstKey === null || row.worstStatus === null || row.worstFrom === null
      ? null
      : toResource({
          phaseId: row.id,
          resourceKey: row.worstKey,
          status: row.worstStatus,
          reason: row.worstReason,
          message: row.worstMessage ?? '',
          conditions: row.worstConditions,
          presence: row.worstPresence ?? '',
          generation: row.worstGeneration === null ? null : BigInt(row.worstGeneration),
          observedGeneration: row.worstObservedGeneration === null ? null : BigInt(row.worstObservedGeneration),
          customHealth: row.worstCustomHealth,
          applied: row.worstApplied,
          revisionId: row.worstRevisionId,
          from: row.worstFrom,
          to: null,
        } satisfies ResourceRow);
  if (resource !== null && row.worstSince !== null) resource.since = row.worstSince;
  phase.worstResource = resource;
  return phase;
}

export { readJson };

function toPhase(row: PhaseRow): PhaseRecord {
  const current: PhaseStatusRecord | null =
    row.status === null || row.from === null
      ? null
      : toPhaseStatus({
          phaseId: row.id,
          status: row.status,
          body: row.body,
          conditionTimes: row.conditionTimes,
          stale: row.stale ?? false,
          staleSince: row.staleSince,
          unobserved: false,
          from: row.from,
          to: row.to,
        });
  return {
    id: Number(row.id),
    cluster: row.cluster,
    clusterReachable: row.clusterReachable,
    clusterLastGoodReadAt: row.clusterLastGoodReadAt,
    clusterObservation: {
      lastObservedAt: row.clusterLastObservedAt,
      snapshotIntervalMs: row.clusterSnapshotIntervalMs,
      retiredAt: row.clusterRetiredAt,
    },
    source: row.sourceKind,
    namespace: row.namespace,
    name: row.name,
    inventoryId: row.inventoryId,
    labels: readJson(row.labels, {}),
    firstSeenAt: row.firstSeenAt,
    lastSeenAt: row.lastSeenAt,
    deletedAt: row.deletedAt,
    current,
    since: current === null ? null : row.since,
  };
}

/** Phases `p` of cluster `c`, as the access rule reads them (every phase has a namespace). */
const PHASE_ACCESS_COLUMNS: AccessColumns = { cluster: sql`c."name"`, namespace: sql`p."namespace"` };

/** SQL conditions restricting phases (`p`, cluster `c`) to what `scope` may see. */
function scopeConditions(scope: AccessScope): Sql[] {
  return accessConditions(scope, PHASE_ACCESS_COLUMNS);
}

function whereClause(conditions: Sql[]): Sql {
  return conditions.length === 0 ? empty : sql`WHERE ${join(conditions, ' AND ')}`;
}

/** Identity of a phase within its cluster; `source` may be left out when the name is unambiguous. */
export interface PhaseIdentityRef {
  cluster: string;
  namespace: string;
  name: string;
  source?: string;
}

/** A phase named by id or by identity, for {@link PhaseReader.findPhasesWithHistory}. */
export type PhaseLookup = { id: number } | PhaseIdentityRef;

/** Options of {@link PhaseReader.listPhases}. */
export interface ListPhasesOptions {
  filter: PhaseFilter;
  order: PhaseOrder;
  first: number;
  after?: PhaseCursor;
}

/** A run of equal statuses: the start of the newest run per phase. */
export interface StatusRunStart {
  phaseId: number;
  from: Date;
}

/** Read access to phases. */
export interface PhaseReader {
  listPhases(scope: AccessScope, options: ListPhasesOptions): Promise<Page<PhaseRecord>>;
  /** Phases by id, in the order asked; missing or hidden ones are left out. */
  getPhasesByIds(scope: AccessScope, ids: readonly number[]): Promise<PhaseRecord[]>;
  /** Phases matching an identity (several when `source` is left out and names repeat across sources). */
  findPhases(scope: AccessScope, ref: PhaseIdentityRef): Promise<PhaseRecord[]>;
  /**
   * What {@link getPhasesByIds} (one id) or {@link findPhases} answers, each phase with the page of
   * its history that `history` asks in `PhaseRecord.history`: the lookup and the page in one
   * statement (those of concurrent requests shared), where a lookup followed by
   * `HistoryReader.listPhaseIntervals` takes two round trips one after the other.
   */
  findPhasesWithHistory(scope: AccessScope, ref: PhaseLookup, history: PhaseHistoryAsk): Promise<PhaseRecord[]>;
  /**
   * For each phase with an open status interval: when the run of its current status began
   * (earlier intervals of the same status count while no gap separates them). Costs one index
   * lookup per interval of the run, however long the history.
   */
  currentRunStarts(phaseIds: readonly number[], options?: CurrentRunOptions): Promise<StatusRunStart[]>;
}

/** Options of {@link PhaseReader.currentRunStarts}. */
export interface CurrentRunOptions {
  /** A change between stale and fresh also ends a run (a gate trusts only fresh reads). @default false */
  splitOnStale?: boolean;
}

const PHASE_PAGE = intervalPageSql(sql`p."id"`, { detail: false });
const PHASE_PAGE_WITH_DETAIL = intervalPageSql(sql`p."id"`, { detail: true });

/**
 * The phases `asks` name (all by id, or all by identity; within `scope`), each with its history
 * page ({@link intervalPageSql} over the ask's window, cursor and limit), in the order
 * {@link PhaseReader.findPhases} gives them, as rows with the ask's ordinal and the page.
 */
function phasesWithHistoryPages(
  scope: AccessScope,
  asks: readonly { ref: PhaseLookup; history: PhaseHistoryAsk }[],
  { detail }: { detail: boolean },
): Sql {
  const pages = sql`${asks.map((a) => a.history.range.from)}::timestamptz[], ${asks.map((a) => a.history.range.to)}::timestamptz[],
              ${asks.map((a) => a.history.after ?? null)}::timestamptz[], ${asks.map((a) => a.history.first + 1)}::int[]`;
  const page = detail ? PHASE_PAGE_WITH_DETAIL : PHASE_PAGE;
  const where = whereClause(scopeConditions(scope));
  if (asks.every((a) => 'id' in a.ref)) {
    return sql`
      SELECT k."ask", ${PHASE_COLUMNS}, ${page} AS "page"
      FROM unnest(${asks.map((a) => (a.ref as { id: number }).id)}::int[], ${pages})
        WITH ORDINALITY AS k("id", "from", "to", "after", "limit", "ask")
      JOIN "Phase" p ON p."id" = k."id"
      JOIN "Cluster" c ON c."id" = p."clusterId"
      ${CURRENT_STATUS_JOINS}
      ${where}`;
  }
  const refs = asks.map((a) => a.ref as PhaseIdentityRef);
  return sql`
    SELECT k."ask", ${PHASE_COLUMNS}, ${page} AS "page"
    FROM unnest(${refs.map((r) => r.cluster)}::text[], ${refs.map((r) => r.namespace)}::text[], ${refs.map((r) => r.name)}::text[], ${refs.map((r) => r.source ?? null)}::text[], ${pages})
      WITH ORDINALITY AS k("cluster", "namespace", "name", "source", "from", "to", "after", "limit", "ask")
    JOIN "Cluster" c ON c."name" = k."cluster"
    JOIN "Phase" p ON p."clusterId" = c."id" AND p."namespace" = k."namespace" AND p."name" = k."name" AND (k."source" IS NULL OR p."sourceKind" = k."source")
    ${CURRENT_STATUS_JOINS}
    ${where}
    ORDER BY k."ask", p."deletedAt" NULLS FIRST, p."sourceKind"`;
}

export function createPhaseReader(db: Db): PhaseReader {
  const reads = createReadSql(db);
  // Identity lookups of concurrent requests (every phase(cluster, namespace, name) query) share statements.
  const findPhase = createCoalescer<{ scope: AccessScope; ref: PhaseIdentityRef }, PhaseRecord[]>(async (asks) => {
    const byScope = new Map<string, number[]>();
    asks.forEach((ask, i) => {
      const key = JSON.stringify(ask.scope);
      byScope.set(key, [...(byScope.get(key) ?? []), i]);
    });
    const answers: PhaseRecord[][] = asks.map(() => []);
    await Promise.all(
      [...byScope.values()].map(async (indexes) => {
        const refs = indexes.map((i) => (asks[i] as { ref: PhaseIdentityRef }).ref);
        const scope = (asks[indexes[0] as number] as { scope: AccessScope }).scope;
        const rows = await reads.query<PhaseRow & { ask: string }>(sql`
          SELECT k."ask", ${PHASE_COLUMNS}
          FROM unnest(${refs.map((r) => r.cluster)}::text[], ${refs.map((r) => r.namespace)}::text[], ${refs.map((r) => r.name)}::text[], ${refs.map((r) => r.source ?? null)}::text[])
            WITH ORDINALITY AS k("cluster", "namespace", "name", "source", "ask")
          JOIN "Cluster" c ON c."name" = k."cluster"
          JOIN "Phase" p ON p."clusterId" = c."id" AND p."namespace" = k."namespace" AND p."name" = k."name" AND (k."source" IS NULL OR p."sourceKind" = k."source")
          ${CURRENT_STATUS_JOINS}
          ${whereClause(scopeConditions(scope))}
          ORDER BY k."ask", p."deletedAt" NULLS FIRST, p."sourceKind"`);
        for (const row of rows) answers[indexes[Number(row.ask) - 1] as number]?.push(toPhase(row));
      }),
    );
    return answers;
  });
  const findWithHistory = createCoalescer<
    { scope: AccessScope; ref: PhaseLookup; history: PhaseHistoryAsk },
    PhaseRecord[]
  >(async (asks) => {
    // One statement per shape: by id or by identity, with or without the detail, per distinct scope.
    const groups = new Map<string, number[]>();
    asks.forEach((ask, i) => {
      const key = `${'id' in ask.ref ? 'id' : 'name'}|${ask.history.detail}|${JSON.stringify(ask.scope)}`;
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    const answers: PhaseRecord[][] = asks.map(() => []);
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const group = indexes.map((i) => asks[i] as (typeof asks)[number]);
        const first = group[0] as (typeof asks)[number];
        const rows = await reads.query<PhaseRow & { ask: string; page: IntervalColumns }>(
          phasesWithHistoryPages(first.scope, group, { detail: first.history.detail }),
        );
        for (const row of rows) {
          const ask = group[Number(row.ask) - 1] as (typeof asks)[number];
          const items = toIntervalPage(row.page, { detail: ask.history.detail });
          const phase = toPhase(row);
          phase.history = {
            key: ask.history.key,
            page: { items: items.slice(0, ask.history.first), hasMore: items.length > ask.history.first },
          };
          answers[indexes[Number(row.ask) - 1] as number]?.push(phase);
        }
      }),
    );
    return answers;
  });
  return {
    async listPhases(scope, { filter, order, first, after }) {
      const where = scopeConditions(scope);
      if (filter.cluster !== undefined) where.push(sql`c."name" = ${filter.cluster}`);
      if (filter.namespace !== undefined) where.push(sql`p."namespace" = ${filter.namespace}`);
      if (filter.source !== undefined) where.push(sql`p."sourceKind" = ${filter.source}`);
      if (filter.status !== undefined) where.push(sql`s."status" = ANY(${[...filter.status]}::text[])`);
      if (filter.labels !== undefined && Object.keys(filter.labels).length > 0)
        where.push(sql`p."labels" @> ${JSON.stringify(filter.labels)}::jsonb`);
      if (filter.hasLabel !== undefined) where.push(sql`(p."labels" ->> ${filter.hasLabel}) IS NOT NULL`);
      if (filter.search !== undefined && filter.search !== '') {
        const pattern = `%${filter.search.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
        where.push(sql`(p."name" ILIKE ${pattern} OR p."namespace" ILIKE ${pattern})`);
      }
      if (filter.includeDeleted !== true) where.push(sql`p."deletedAt" IS NULL`);
      if (filter.ids !== undefined) where.push(sql`p."id" = ANY(${[...filter.ids]}::int[])`);
      for (const c of filter.conditions ?? []) {
        where.push(
          sql`EXISTS (SELECT 1 FROM "PhaseConditionCurrent" pc WHERE pc."phaseId" = p."id" AND pc."type" = ${c.type} AND pc."status" = ${c.status})`,
        );
      }
      const byName = sql`c."name", p."namespace", p."name", p."id"`;
      const pageByName = sql`page."cluster", page."namespace", page."name", page."id"`;
      if (after !== undefined) {
        where.push(
          order === 'NAME'
            ? sql`(c."name", p."namespace", p."name", p."id") > (${after.cluster}, ${after.namespace}, ${after.name}, ${after.id}::int)`
            : sql`(${SEVERITY_SQL}, c."name", p."namespace", p."name", p."id") > (${after.severity}::int, ${after.cluster}, ${after.namespace}, ${after.name}, ${after.id}::int)`,
        );
      }
      const orderBy = order === 'NAME' ? byName : sql`${SEVERITY_SQL}, ${byName}`;
      const pageOrder = order === 'NAME' ? pageByName : sql`${severitySql(sql`page."status"`)}, ${pageByName}`;
      const rows = await reads.query<PhaseWithWorstRow>(
        withWorstResources(
          sql`${PHASE_SELECT} ${whereClause(where)} ORDER BY ${orderBy} LIMIT ${first + 1}`,
          pageOrder,
        ),
      );
      return { items: rows.slice(0, first).map(toPhaseWithWorst), hasMore: rows.length > first };
    },

    async getPhasesByIds(scope, ids) {
      if (ids.length === 0) return [];
      const where = [...scopeConditions(scope), sql`p."id" = ANY(${[...ids]}::int[])`];
      const rows = await reads.query<PhaseRow>(sql`${PHASE_SELECT} ${whereClause(where)}`);
      const byId = new Map(rows.map((row) => [Number(row.id), toPhase(row)]));
      return ids.flatMap((id) => byId.get(id) ?? []);
    },

    findPhases(scope, ref) {
      return findPhase({ scope, ref });
    },

    findPhasesWithHistory(scope, ref, history) {
      return findWithHistory({ scope, ref, history });
    },

    async currentRunStarts(phaseIds, { splitOnStale = false } = {}) {
      if (phaseIds.length === 0) return [];
      if (!splitOnStale) {
        // Stored with the current status: one index lookup per phase.
        const rows = await reads.query<{ phaseId: number; from: Date }>(sql`
          SELECT s."phaseId", s."since" AS "from" FROM "PhaseCurrentStatus" s WHERE s."phaseId" = ANY(${[...phaseIds]}::int[])`);
        return rows.map((row) => ({ phaseId: Number(row.phaseId), from: row.from }));
      }
      // Walk back from the current status, one index lookup per step, while the previous interval
      // ends exactly where the next begins with the same status and staleness (a gate trusts fresh reads only).
      const rows = await reads.query<{ phaseId: number; from: Date }>(sql`
        WITH RECURSIVE walk AS (
          SELECT s."phaseId", s."from", s."status", s."stale" FROM "PhaseCurrentStatus" s
          WHERE s."phaseId" = ANY(${[...phaseIds]}::int[])
          UNION ALL
          SELECT prev."phaseId", prev."from", prev."status", prev."stale" FROM walk w
          CROSS JOIN LATERAL (
            SELECT p."phaseId", p."from", p."to", p."status", p."stale" FROM "PhaseStatusInterval" p
            WHERE p."phaseId" = w."phaseId" AND p."from" < w."from" ORDER BY p."from" DESC LIMIT 1
          ) prev
          WHERE prev."to" = w."from" AND prev."status" = w."status" AND prev."stale" = w."stale"
        )
        SELECT "phaseId", min("from") AS "from" FROM walk GROUP BY "phaseId"`);
      return rows.map((row) => ({ phaseId: Number(row.phaseId), from: row.from }));
    },
  };
}
