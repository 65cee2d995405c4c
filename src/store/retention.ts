/**
 * Retention: how long each kind of history is kept, the compaction that enforces it, and storage
 * use per table. Open intervals (the present) are never removed, whatever their age; manifests and
 * object revisions go once nothing refers to them any more.
 */
import { z } from 'zod';
import { parseDuration } from '../duration.ts';
import type { Db } from './db.ts';
import { withSqlTransaction } from './sql-transaction.ts';

const ageSchema = z.union([z.number().int().positive(), z.string()]).transform((value, ctx) => {
  const ms = typeof value === 'number' ? value : parseDuration(value);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration (use e.g. 30d, 12h)` });
    return z.NEVER;
  }
  return ms;
});

/**
 * Ages (ms, or durations like `90d` in config) after which each kind of data is removed. A kind
 * left out is kept forever. For the lead: embed as `retention:` in phaselog.yaml.
 */
export const retentionPolicySchema = z.strictObject({
  /** Closed resource status intervals, by their end. */
  resourceIntervals: ageSchema.optional(),
  /** Closed phase status, condition and manifest intervals, by their end. */
  phaseIntervals: ageSchema.optional(),
  /** Change-log rows, by their time. */
  statusChanges: ageSchema.optional(),
  /** Ended observation-tick runs, by their last tick (each cluster's current run is on its row and kept). */
  observationTicks: ageSchema.optional(),
  /** Closed reachability intervals, by their end. */
  reachability: ageSchema.optional(),
  /** Phases deleted longer ago than this, with all their history. */
  deletedPhases: ageSchema.optional(),
  /** Finished notification deliveries (delivered, failed, suppressed), by their last change; pending and held ones are kept. */
  notificationDeliveries: ageSchema.optional(),
});

/** A retention policy, ages in milliseconds. */
export type RetentionPolicy = z.infer<typeof retentionPolicySchema>;

/** Rows removed per table by one compaction. */
export type RetentionResult = Record<
  | 'ResourceStatusInterval'
  | 'PhaseStatusInterval'
  | 'PhaseConditionInterval'
  | 'PhaseManifest'
  | 'StatusChange'
  | 'ObservationTick'
  | 'ClusterReachability'
  | 'Phase'
  | 'ObjectRevision'
  | 'Manifest'
  | 'StatusDetail'
  | 'NotificationDelivery',
  number
>;

/** Removes what `policy` says is too old at `now`, in one transaction. */
export async function applyRetention(
  db: Db,
  policy: RetentionPolicy,
  now: Date = new Date(),
): Promise<RetentionResult> {
  const before = (age: number | undefined): Date | undefined =>
    age === undefined ? undefined : new Date(now.getTime() - age);
  return withSqlTransaction(
    db,
    async (tx) => {
      const result: RetentionResult = {
        ResourceStatusInterval: 0,
        PhaseStatusInterval: 0,
        PhaseConditionInterval: 0,
        PhaseManifest: 0,
        StatusChange: 0,
        ObservationTick: 0,
        ClusterReachability: 0,
        Phase: 0,
        ObjectRevision: 0,
        Manifest: 0,
        StatusDetail: 0,
        NotificationDelivery: 0,
      };
      const deletedPhases = before(policy.deletedPhases);
      if (deletedPhases) {
        // Ended resource intervals have no foreign key to cascade from their resource: deleted here.
        result.ResourceStatusInterval += await tx.$executeRaw`
          DELETE FROM "ResourceStatusInterval" i USING "Resource" r, "Phase" p
          WHERE i."resourceId" = r."id" AND r."phaseId" = p."id" AND p."deletedAt" < ${deletedPhases}::timestamptz(3)`;
        // Ended condition intervals have no foreign key either.
        result.PhaseConditionInterval += await tx.$executeRaw`
          DELETE FROM "PhaseConditionInterval" i USING "Phase" p WHERE i."phaseId" = p."id" AND p."deletedAt" < ${deletedPhases}::timestamptz(3)`;
        // The rest of a deleted phase's history goes with it (its foreign keys cascade).
        result.Phase = await tx.$executeRaw`DELETE FROM "Phase" WHERE "deletedAt" < ${deletedPhases}::timestamptz(3)`;
      }
      const resources = before(policy.resourceIntervals);
      if (resources)
        result.ResourceStatusInterval +=
          await tx.$executeRaw`DELETE FROM "ResourceStatusInterval" WHERE "to" < ${resources}::timestamptz(3)`;
      const phases = before(policy.phaseIntervals);
      if (phases) {
        result.PhaseStatusInterval =
          await tx.$executeRaw`DELETE FROM "PhaseStatusInterval" WHERE "to" < ${phases}::timestamptz(3)`;
        result.PhaseConditionInterval +=
          await tx.$executeRaw`DELETE FROM "PhaseConditionInterval" WHERE "to" < ${phases}::timestamptz(3)`;
        result.PhaseManifest = await tx.$executeRaw`DELETE FROM "PhaseManifest" WHERE "to" < ${phases}::timestamptz(3)`;
      }
      const changes = before(policy.statusChanges);
      if (changes)
        result.StatusChange = await tx.$executeRaw`DELETE FROM "StatusChange" WHERE "at" < ${changes}::timestamptz(3)`;
      const reachability = before(policy.reachability);
      if (reachability)
        result.ClusterReachability =
          await tx.$executeRaw`DELETE FROM "ClusterReachability" WHERE "to" < ${reachability}::timestamptz(3)`;
      const deliveries = before(policy.notificationDeliveries);
      if (deliveries) {
        result.NotificationDelivery = await tx.$executeRaw`
          DELETE FROM "NotificationDelivery" WHERE "updatedAt" < ${deliveries}::timestamptz(3) AND "status" IN ('delivered', 'failed', 'suppressed')`;
      }
      const ticks = before(policy.observationTicks);
      if (ticks) {
        result.ObservationTick =
          await tx.$executeRaw`DELETE FROM "ObservationTick" WHERE "lastSeenAt" < ${ticks}::timestamptz(3)`;
      }
      // Snapshots insert into these tables before referring to a row; the lock makes them wait
      // (or makes this wait) so a row about to be referred to again is never collected.
      await tx.$executeRaw`LOCK TABLE "ObjectRevision", "Manifest", "StatusDetail" IN SHARE ROW EXCLUSIVE MODE`;
      result.ObjectRevision = await tx.$executeRaw`
        DELETE FROM "ObjectRevision" r WHERE NOT EXISTS (SELECT 1 FROM "ResourceStatusInterval" i WHERE i."revisionId" = r."id")
          AND NOT EXISTS (SELECT 1 FROM "ResourceCurrentStatus" c WHERE c."revisionId" = r."id")`;
      result.Manifest = await tx.$executeRaw`
        DELETE FROM "Manifest" m WHERE NOT EXISTS (SELECT 1 FROM "PhaseManifest" p WHERE p."manifestId" = m."id")`;
      result.StatusDetail = await tx.$executeRaw`
        DELETE FROM "StatusDetail" d
        WHERE NOT EXISTS (SELECT 1 FROM "ResourceStatusInterval" i WHERE i."detailId" = d."id")
          AND NOT EXISTS (SELECT 1 FROM "ResourceCurrentStatus" c WHERE c."detailId" = d."id")
          AND NOT EXISTS (SELECT 1 FROM "PhaseStatusInterval" s WHERE s."detailId" = d."id")
          AND NOT EXISTS (SELECT 1 FROM "PhaseCurrentStatus" s WHERE s."detailId" = d."id")
          AND NOT EXISTS (SELECT 1 FROM "StatusChange" c WHERE c."detailId" = d."id")`;
      return result;
    },
    { timeoutMs: 600_000, maxWaitMs: 60_000 },
  );
}

/** Storage used by one history table. */
export interface TableStorage {
  table: string;
  rows: number;
  /** Heap, indexes and TOAST (`pg_total_relation_size`). */
  bytes: number;
}

const HISTORY_TABLES = [
  'Cluster',
  'ClusterReachability',
  'Phase',
  'Manifest',
  'PhaseManifest',
  'ObjectRevision',
  'Resource',
  'StatusDetail',
  'ResourceCurrentStatus',
  'ResourceStatusInterval',
  'PhaseCurrentStatus',
  'PhaseStatusInterval',
  'PhaseConditionCurrent',
  'PhaseConditionInterval',
  'CheckRun',
  'StatusChange',
  'ObservationTick',
] as const;

/** Rows (exact count, so O(rows)) and bytes of every history table. */
export async function measureStorage(db: Db): Promise<TableStorage[]> {
  const out: TableStorage[] = [];
  for (const table of HISTORY_TABLES) {
    const rows = await db.$queryRawUnsafe<{ rows: bigint; bytes: bigint }[]>(
      `SELECT (SELECT count(*) FROM "${table}") AS rows, pg_total_relation_size('"${table}"') AS bytes`,
    );
    out.push({ table, rows: Number(rows[0]?.rows ?? 0), bytes: Number(rows[0]?.bytes ?? 0) });
  }
  return out;
}
