/**
 * The whole fleet's current state for `/metrics`, as the Prometheus text of its per-phase series. At
 * tens of thousands of phases a scrape every few seconds spends most of its time turning rows into
 * objects and objects into lines; here PostgreSQL writes the lines while it reads, one text per
 * series family, and the process only joins them. Label values are escaped as the text format
 * requires. Lean on purpose: no messages, conditions or labels, and the changed-time and resource
 * series only for phases not Current, so a healthy fleet's scrape reads no status detail at all.
 *
 * Two statements, each on its own pooled connection so PostgreSQL runs them at once on two backends:
 * one over every phase (status and stale lines), one over the phases not Current (changed-time and
 * resource lines). They are separate transactions, so the two halves of a scrape may be a few
 * milliseconds apart, which a scrape interval of seconds does not notice.
 */
import type { Db } from './db.ts';
import { createReadSql } from './read-sql.ts';
import type { Sql } from './sql.ts';
import { sql } from './sql.ts';

/** A configured cluster and the facts its staleness rule needs. */
export interface FleetClusterFacts {
  id: number;
  name: string;
  /** Null before its first snapshot. */
  reachable: boolean | null;
  lastObservedAt: Date | null;
  snapshotIntervalMs: number | null;
}

/** The per-phase series, one text per family (lines joined by newlines; empty when none). */
export interface FleetSeries {
  /** `phaselog_phase_status`, one line per phase with a status. */
  status: string;
  /** `phaselog_phase_stale`, one line per stale phase. */
  stale: string;
  /** `phaselog_phase_status_changed_timestamp_seconds` of phases not Current. */
  changed: string;
  /** `phaselog_phase_resources` (non-zero counts) of phases not Current. */
  resources: string;
}

/** Reads the fleet's state for one scrape: the clusters first, then their phases' series. */
export interface FleetStateReader {
  clusters(): Promise<FleetClusterFacts[]>;
  /** Every phase of `staleClusterIds` is stale; any other phase when its stored status says so. */
  series(staleClusterIds: readonly number[]): Promise<FleetSeries>;
}

/** `value` escaped for a quoted label value (backslash, double quote, newline). */
const label = (value: Sql): Sql => sql`replace(replace(replace(${value}, '\\', '\\\\'), '"', '\\"'), E'\\n', '\\n')`;

/** Each live phase's identifying label set, for the phases `where` selects. */
const phases = (where: Sql): Sql => sql`
  SELECT p."clusterId", 'cluster="' || ${label(sql`c."name"`)} || '",namespace="' || ${label(sql`p."namespace"`)} || '",phase="' || ${label(sql`p."name"`)} || '"' AS "ids",
         p."sourceKind", s."status", s."stale", s."since", s."detailId"
  FROM "Phase" p JOIN "Cluster" c ON c."id" = p."clusterId" JOIN "PhaseCurrentStatus" s ON s."phaseId" = p."id"
  WHERE p."deletedAt" IS NULL AND c."retiredAt" IS NULL AND ${where}`;

const CLUSTERS_SQL = sql`
  SELECT c."id", c."name", c."reachable", c."tickLastSeenAt" AS "lastObservedAt", c."snapshotIntervalMs"
  FROM "Cluster" c WHERE c."retiredAt" IS NULL ORDER BY c."name"`;

const everyPhaseSql = (staleClusterIds: readonly number[]): Sql => sql`
  WITH ph AS (${phases(sql`TRUE`)})
  SELECT string_agg('phaselog_phase_status{' || ph."ids" || ',source="' || ${label(sql`ph."sourceKind"`)} || '",status="' || ${label(sql`ph."status"`)} || '"} 1', E'\\n') AS "status",
         string_agg('phaselog_phase_stale{' || ph."ids" || '} 1', E'\\n') FILTER (WHERE ph."stale" OR ph."clusterId" = ANY(${[...staleClusterIds]}::int[])) AS "stale"
  FROM ph`;

const NOT_CURRENT_SQL = sql`
  WITH ph AS (${phases(sql`s."status" <> 'Current'`)})
  SELECT (SELECT string_agg('phaselog_phase_status_changed_timestamp_seconds{' || ph."ids" || '} ' || trim_scale(extract(epoch FROM ph."since"))::text, E'\\n') FROM ph) AS "changed",
         (SELECT string_agg('phaselog_phase_resources{' || ph."ids" || ',status="' || ${label(sql`r."key"`)} || '"} ' || r."value", E'\\n')
          FROM ph JOIN "StatusDetail" d ON d."id" = ph."detailId" CROSS JOIN LATERAL jsonb_each_text(d."body" -> 'summary') r
          WHERE r."value" <> '0') AS "resources"`;

/** Reads the fleet's current state. */
export function createFleetStateReader(db: Db): FleetStateReader {
  const reads = createReadSql(db);
  return {
    clusters: () => reads.query<FleetClusterFacts>(CLUSTERS_SQL),
    async series(staleClusterIds) {
      // Both at once: pool.query hands each to its own idle connection.
      const [every, notCurrent] = await Promise.all([
        reads.query<{ status: string | null; stale: string | null }>(everyPhaseSql(staleClusterIds)),
        reads.query<{ changed: string | null; resources: string | null }>(NOT_CURRENT_SQL),
      ]);
      return {
        status: every[0]?.status ?? '',
        stale: every[0]?.stale ?? '',
        changed: notCurrent[0]?.changed ?? '',
        resources: notCurrent[0]?.resources ?? '',
      };
    },
  };
}
