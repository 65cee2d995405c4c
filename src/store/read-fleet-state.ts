/**
 * The whole fleet's current state in one statement, for `/metrics`: every configured cluster and
 * each of its phases' current status and stale flag, and for phases not Current when the status
 * began and their resources per status. Lean on purpose: no messages, conditions or labels, and no
 * sort, which a scrape every few seconds of tens of thousands of phases would pay for nothing.
 */
import { Prisma } from '../generated/prisma/client.ts';
import type { Db } from './prisma.ts';
import { createReadSql } from './read-sql.ts';

/** A cluster and the facts its staleness rule needs. */
export interface FleetCluster {
  name: string;
  /** Null before its first snapshot. */
  reachable: boolean | null;
  lastObservedAt: Date | null;
  snapshotIntervalMs: number | null;
}

/** A phase with a current status. */
export interface FleetPhase {
  cluster: string;
  namespace: string;
  name: string;
  source: string;
  status: string;
  stale: boolean;
  /** When the run of the current status began; null for Current phases (not read). */
  since: Date | null;
  /** Resources per status, from the status detail; null for Current phases (not read). */
  resources: Record<string, number> | null;
}

export interface FleetState {
  clusters: FleetCluster[];
  phases: FleetPhase[];
}

// One row shape for both: clusters (kind 0) and phases (kind 1) with their cluster's id.
interface FleetRow {
  kind: number;
  clusterId: number;
  name: string;
  namespace: string | null;
  source: string | null;
  flag: boolean | null;
  at: Date | null;
  intervalMs: number | null;
  status: string | null;
  resources: Record<string, number> | null;
}

// The detail (resource counts) is read only for phases not Current, by its key: a healthy fleet's
// scrape reads no detail at all. Retired clusters and deleted phases are history, not state.
const FLEET_SQL = Prisma.sql`
  SELECT 0 AS "kind", c."id" AS "clusterId", c."name", NULL::text AS "namespace", NULL::text AS "source", c."reachable" AS "flag",
         c."tickLastSeenAt" AS "at", c."snapshotIntervalMs" AS "intervalMs", NULL::text AS "status", NULL::jsonb AS "resources"
  FROM "Cluster" c WHERE c."retiredAt" IS NULL
  UNION ALL
  SELECT 1, p."clusterId", p."name", p."namespace", p."sourceKind", s."stale",
         CASE WHEN s."status" <> 'Current' THEN s."since" END, NULL, s."status",
         CASE WHEN s."status" <> 'Current' THEN (SELECT d."body" -> 'summary' FROM "StatusDetail" d WHERE d."id" = s."detailId") END
  FROM "Phase" p JOIN "PhaseCurrentStatus" s ON s."phaseId" = p."id"
  WHERE p."deletedAt" IS NULL`;

/** Reads the fleet's current state. */
export function createFleetStateReader(db: Db): () => Promise<FleetState> {
  const sql = createReadSql(db);
  return async () => {
    const rows = await sql.query<FleetRow>(FLEET_SQL);
    const names = new Map<number, string>();
    const clusters: FleetCluster[] = [];
    for (const row of rows) {
      if (row.kind !== 0) continue;
      names.set(row.clusterId, row.name);
      clusters.push({ name: row.name, reachable: row.flag, lastObservedAt: row.at, snapshotIntervalMs: row.intervalMs });
    }
    const phases: FleetPhase[] = [];
    for (const row of rows) {
      const cluster = row.kind === 1 ? names.get(row.clusterId) : undefined;
      if (cluster === undefined) continue;
      phases.push({ cluster, namespace: row.namespace ?? '', name: row.name, source: row.source ?? '', status: row.status ?? 'Unknown', stale: row.flag ?? false, since: row.at, resources: row.resources });
    }
    return { clusters, phases };
  };
}
