/**
 * The whole fleet's current state in one statement, for `/metrics`: every configured cluster and
 * each of its phases' current status, stale flag, when the status began and resources per status.
 * Lean on purpose: no messages, conditions or labels, which a scrape every few seconds of tens of
 * thousands of phases would read for nothing.
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

/** A phase's current state; `status` is null before its first status. */
export interface FleetPhase {
  cluster: string;
  namespace: string;
  name: string;
  source: string;
  status: string | null;
  stale: boolean;
  /** When the run of the current status began. */
  since: Date | null;
  /** Resources per status, from the status detail. */
  resources: Record<string, number> | null;
}

export interface FleetState {
  clusters: FleetCluster[];
  phases: FleetPhase[];
}

interface FleetRow {
  cluster: string;
  reachable: boolean | null;
  lastObservedAt: Date | null;
  snapshotIntervalMs: number | null;
  namespace: string | null;
  name: string | null;
  source: string | null;
  status: string | null;
  stale: boolean | null;
  since: Date | null;
  resources: Record<string, number> | null;
}

// Retired clusters and deleted phases are history, not state; a cluster with no phase still has a row.
const FLEET_SQL = Prisma.sql`
  SELECT c."name" AS "cluster", c."reachable", c."tickLastSeenAt" AS "lastObservedAt", c."snapshotIntervalMs",
         p."namespace", p."name", p."sourceKind" AS "source", s."status", s."stale", s."since", d."body" -> 'summary' AS "resources"
  FROM "Cluster" c
  LEFT JOIN "Phase" p ON p."clusterId" = c."id" AND p."deletedAt" IS NULL
  LEFT JOIN "PhaseCurrentStatus" s ON s."phaseId" = p."id"
  LEFT JOIN "StatusDetail" d ON d."id" = s."detailId"
  WHERE c."retiredAt" IS NULL
  ORDER BY c."name", p."namespace", p."name", p."sourceKind"`;

/** Reads the fleet's current state. */
export function createFleetStateReader(db: Db): () => Promise<FleetState> {
  const sql = createReadSql(db);
  return async () => {
    const rows = await sql.query<FleetRow>(FLEET_SQL);
    const clusters: FleetCluster[] = [];
    const phases: FleetPhase[] = [];
    let last: string | undefined;
    for (const row of rows) {
      if (row.cluster !== last) {
        clusters.push({ name: row.cluster, reachable: row.reachable, lastObservedAt: row.lastObservedAt, snapshotIntervalMs: row.snapshotIntervalMs });
        last = row.cluster;
      }
      if (row.name === null) continue;
      phases.push({
        cluster: row.cluster, namespace: row.namespace ?? '', name: row.name, source: row.source ?? '',
        status: row.status, stale: row.stale ?? false, since: row.since, resources: row.resources,
      });
    }
    return { clusters, phases };
  };
}
