import type { ClusterObservationFacts } from '../history/observation.ts';
import type { Db } from './db.ts';
import { sqlOn, withSqlTransaction } from './sql-transaction.ts';

/** A cluster as the API shows it. */
export interface ClusterRecord {
  name: string;
  labels: Record<string, string>;
  reachable: boolean | null;
  lastGoodReadAt: Date | null;
  /** What decides whether the cluster is observed now (src/history/observation.ts). */
  observation: ClusterObservationFacts;
}

/** What a worker registers when it starts. */
export interface ClusterRegistration {
  /** Every cluster of the worker's configuration (loaded or not: a cluster that failed to load is still configured). */
  configured: readonly string[];
  /** The interval the worker snapshots them at. */
  snapshotIntervalMs: number;
  /** When the clusters not configured are retired. @default now */
  at?: Date;
}

/** What {@link ClusterStore.registerClusters} changed. */
export interface RegisteredClusters {
  /** Clusters marked retired by this call. */
  retired: string[];
  /** Clusters that were retired and are configured again. */
  restored: string[];
}

/** Read access to clusters, and the worker's registration of its configured ones. */
export interface ClusterStore {
  listClusters(): Promise<ClusterRecord[]>;
  /**
   * Records that the `configured` clusters are read every `snapshotIntervalMs` (creating their rows,
   * and un-retiring any that were retired) and retires every other cluster. Idempotent: workers
   * started with the same list agree. Only a worker calls it: an API-only process has no list.
   */
  registerClusters(registration: ClusterRegistration): Promise<RegisteredClusters>;
}

interface ClusterRow {
  name: string;
  labels: unknown;
  reachable: boolean | null;
  lastGoodReadAt: Date | null;
  tickLastSeenAt: Date | null;
  snapshotIntervalMs: number | null;
  retiredAt: Date | null;
}

/** Prisma's interactive-transaction defaults, which registration ran with before it ran on `pg`. */
const REGISTRATION_BOUNDS = { timeoutMs: 5_000, maxWaitMs: 2_000 };

export function createClusterStore(db: Db): ClusterStore {
  const sql = sqlOn(db);
  return {
    async listClusters() {
      const rows = await sql.$queryRaw<ClusterRow[]>`
        SELECT "name", "labels", "reachable", "lastGoodReadAt", "tickLastSeenAt", "snapshotIntervalMs", "retiredAt" FROM "Cluster" ORDER BY "name"`;
      return rows.map((row) => ({
        name: row.name,
        labels: (row.labels ?? {}) as Record<string, string>,
        reachable: row.reachable,
        lastGoodReadAt: row.lastGoodReadAt,
        observation: {
          lastObservedAt: row.tickLastSeenAt,
          snapshotIntervalMs: row.snapshotIntervalMs,
          retiredAt: row.retiredAt,
        },
      }));
    },

    async registerClusters({ configured, snapshotIntervalMs, at = new Date() }) {
      const names = [...new Set(configured)];
      return withSqlTransaction(
        db,
        async (tx) => {
          // "xmax <> 0" tells an updated row from an inserted one; the old retiredAt comes from the row before the update.
          const upserted = await tx.$queryRaw<{ name: string; wasRetired: boolean }[]>`
          WITH before AS (SELECT "name", "retiredAt" FROM "Cluster" WHERE "name" = ANY(${names}::text[]))
          INSERT INTO "Cluster" ("name", "snapshotIntervalMs") SELECT n, ${snapshotIntervalMs}::int FROM unnest(${names}::text[]) AS n
          ON CONFLICT ("name") DO UPDATE SET "snapshotIntervalMs" = excluded."snapshotIntervalMs", "retiredAt" = NULL
          RETURNING "name", coalesce((SELECT b."retiredAt" IS NOT NULL FROM before b WHERE b."name" = "Cluster"."name"), false) AS "wasRetired"`;
          const retired = await tx.$queryRaw<{ name: string }[]>`
          UPDATE "Cluster" SET "retiredAt" = ${at}::timestamptz(3)
          WHERE "retiredAt" IS NULL AND NOT ("name" = ANY(${names}::text[]))
          RETURNING "name"`;
          return {
            retired: retired.map((r) => r.name).sort(),
            restored: upserted
              .filter((r) => r.wasRetired)
              .map((r) => r.name)
              .sort(),
          };
        },
        REGISTRATION_BOUNDS,
      );
    },
  };
}
