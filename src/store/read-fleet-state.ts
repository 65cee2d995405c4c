/**
 * The whole fleet's current state for `/metrics`, in one statement, as the Prometheus text of its
 * per-phase series. At tens of thousands of phases a scrape every few seconds spends most of its time
 * turning rows into objects and objects into lines; here PostgreSQL writes the lines while it reads
 * (one aggregate per cluster), and the process only joins them. Label values are escaped as the
 * text format requires. Lean on purpose: no messages, conditions or labels, and resource counts
 * only for phases not Current, so a healthy fleet's scrape reads no status detail at all.
 */
import { Prisma } from '../generated/prisma/client.ts';
import type { Db } from './prisma.ts';
import { createReadSql } from './read-sql.ts';

/** A cluster, the facts its staleness rule needs, and its phases' series. */
export interface FleetCluster {
  name: string;
  /** Null before its first snapshot. */
  reachable: boolean | null;
  lastObservedAt: Date | null;
  snapshotIntervalMs: number | null;
  /** `phaselog_phase_status` lines, one per phase with a status. */
  statusLines: string;
  /** Every phase's label set (`cluster="..",namespace="..",phase=".."`), one a line. */
  phaseLabels: string;
  /** Label sets of the phases whose stored status is stale, one a line. */
  storedStaleLabels: string;
  /** `phaselog_phase_status_changed_timestamp_seconds` lines of phases not Current. */
  changedLines: string;
  /** `phaselog_phase_resources` lines (non-zero counts) of phases not Current. */
  resourceLines: string;
}

interface FleetRow {
  kind: number;
  clusterId: number;
  name: string | null;
  reachable: boolean | null;
  lastObservedAt: Date | null;
  snapshotIntervalMs: number | null;
  a: string | null;
  b: string | null;
  c: string | null;
  d: string | null;
}

/** `value` escaped for a quoted label value (backslash, double quote, newline). */
const label = (value: Prisma.Sql): Prisma.Sql => Prisma.sql`replace(replace(replace(${value}, '\\', '\\\\'), '"', '\\"'), E'\\n', '\\n')`;

// kind 0: a configured cluster; 1: its phases' status, label and changed lines; 2: its resource lines.
const FLEET_SQL = Prisma.sql`
  WITH ph AS (
    SELECT p."clusterId", 'cluster="' || ${label(Prisma.sql`c."name"`)} || '",namespace="' || ${label(Prisma.sql`p."namespace"`)} || '",phase="' || ${label(Prisma.sql`p."name"`)} || '"' AS "ids",
           p."sourceKind", s."status", s."stale", s."since", s."detailId"
    FROM "Phase" p JOIN "Cluster" c ON c."id" = p."clusterId" JOIN "PhaseCurrentStatus" s ON s."phaseId" = p."id"
    WHERE p."deletedAt" IS NULL AND c."retiredAt" IS NULL
  )
  SELECT 0 AS "kind", c."id" AS "clusterId", c."name", c."reachable", c."tickLastSeenAt" AS "lastObservedAt", c."snapshotIntervalMs",
         NULL::text AS "a", NULL::text AS "b", NULL::text AS "c", NULL::text AS "d"
  FROM "Cluster" c WHERE c."retiredAt" IS NULL
  UNION ALL
  SELECT 1, ph."clusterId", NULL, NULL, NULL, NULL,
         string_agg('phaselog_phase_status{' || ph."ids" || ',source="' || ${label(Prisma.sql`ph."sourceKind"`)} || '",status="' || ${label(Prisma.sql`ph."status"`)} || '"} 1', E'\\n'),
         string_agg(ph."ids", E'\\n'),
         string_agg(ph."ids", E'\\n') FILTER (WHERE ph."stale"),
         string_agg('phaselog_phase_status_changed_timestamp_seconds{' || ph."ids" || '} ' || trim_scale(extract(epoch FROM ph."since"))::text, E'\\n') FILTER (WHERE ph."status" <> 'Current')
  FROM ph GROUP BY ph."clusterId"
  UNION ALL
  SELECT 2, ph."clusterId", NULL, NULL, NULL, NULL,
         string_agg('phaselog_phase_resources{' || ph."ids" || ',status="' || ${label(Prisma.sql`r."key"`)} || '"} ' || r."value", E'\\n'), NULL, NULL, NULL
  FROM ph JOIN "StatusDetail" d ON d."id" = ph."detailId" CROSS JOIN LATERAL jsonb_each_text(d."body" -> 'summary') r
  WHERE ph."status" <> 'Current' AND r."value" <> '0'
  GROUP BY ph."clusterId"`;

/** Reads the fleet's current state. */
export function createFleetStateReader(db: Db): () => Promise<FleetCluster[]> {
  const sql = createReadSql(db);
  return async () => {
    const rows = await sql.query<FleetRow>(FLEET_SQL);
    const clusters = new Map<number, FleetCluster>();
    for (const row of rows) {
      if (row.kind !== 0 || row.name === null) continue;
      clusters.set(row.clusterId, {
        name: row.name, reachable: row.reachable, lastObservedAt: row.lastObservedAt, snapshotIntervalMs: row.snapshotIntervalMs,
        statusLines: '', phaseLabels: '', storedStaleLabels: '', changedLines: '', resourceLines: '',
      });
    }
    for (const row of rows) {
      const cluster = clusters.get(row.clusterId);
      if (cluster === undefined || row.kind === 0) continue;
      if (row.kind === 2) cluster.resourceLines = row.a ?? '';
      else Object.assign(cluster, { statusLines: row.a ?? '', phaseLabels: row.b ?? '', storedStaleLabels: row.c ?? '', changedLines: row.d ?? '' });
    }
    return [...clusters.values()];
  };
}
