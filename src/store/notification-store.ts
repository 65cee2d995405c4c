/**
 * Notification deliveries and each route's cursor in the change log. The scanner judges a batch of
 * changes and records its deliveries in the transaction that moves the route's cursor past them,
 * with the cursor row locked: two scanners never judge one change twice, and a crash (worker
 * SIGKILL, Redis lost) either keeps the whole batch or none of it. One row per (route, seq) is also
 * what a unique index says.
 */
import { accessConditions } from './access-rule.ts';
import type { Db } from './db.ts';
import { createReadSql } from './read-sql.ts';
import { sqlOn, withSqlTransaction } from './sql-transaction.ts';
import type { AccessScope } from './read-types.ts';
import { sql, empty, join } from './sql.ts';

export type DeliveryStatus = 'pending' | 'held' | 'delivered' | 'failed' | 'suppressed';
export type DeliveryKind = 'transition' | 'flapping';

/** A delivery as stored. */
export interface DeliveryRecord {
  id: bigint;
  route: string;
  seq: bigint;
  kind: DeliveryKind;
  status: DeliveryStatus;
  reason: string | null;
  subject: string;
  clusterId: number;
  cluster: string;
  phaseId: number | null;
  phase: { sourceKind: string; namespace: string; name: string } | null;
  at: Date;
  flapCount: number | null;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  deliveredAt: Date | null;
}

/** A delivery to record. */
export interface NewDelivery {
  seq: bigint;
  kind: DeliveryKind;
  status: 'pending' | 'held';
  reason?: string;
  subject: string;
  clusterId: number;
  phaseId: number | null;
  at: Date;
  flapCount?: number;
}

/** What a scan may do inside its transaction, with the route's cursor locked. */
export interface RouteScan {
  /** The route's cursor: the last seq judged. */
  readonly cursor: bigint;
  /** Deliveries of the subject at or after `since`, and whether the latest of them was flapping. */
  subjectPast(subject: string, since: Date): Promise<{ count: number; previousFlapping: boolean }>;
  record(delivery: NewDelivery): Promise<void>;
  /** The route's held deliveries, oldest first. */
  held(): Promise<Pick<DeliveryRecord, 'seq' | 'subject' | 'at' | 'reason'>[]>;
  setStatus(seq: bigint, status: 'pending' | 'suppressed', reason?: string): Promise<void>;
  advance(seq: bigint): Promise<void>;
}

/** Filter of {@link NotificationStore.listDeliveries}. */
export interface DeliveryFilter {
  route?: string;
  status?: readonly DeliveryStatus[];
  cluster?: string;
  namespace?: string;
}

export interface NotificationStore {
  /** Starts `route` at the log's head (a new route tells what happens from now on); no-op when it has a cursor. */
  ensureCursor(route: string): Promise<void>;
  /**
   * Runs `scan` in a transaction holding the route's cursor; resolves undefined without running it
   * when another scanner holds it.
   */
  withRouteScan<T>(route: string, scan: (tx: RouteScan) => Promise<T>): Promise<T | undefined>;
  /** Labels of phases, by id. */
  phaseLabels(ids: readonly number[]): Promise<Map<number, Record<string, string>>>;
  /** Pending deliveries of the given routes, oldest first (to queue their sending). */
  listPending(routes: readonly string[], limit: number): Promise<{ route: string; seq: bigint }[]>;
  get(route: string, seq: bigint): Promise<DeliveryRecord | undefined>;
  /** Records a successful attempt; false when the delivery was not pending any more. */
  markDelivered(route: string, seq: bigint): Promise<boolean>;
  /** Records a failed attempt; `final` makes the delivery failed (no more attempts). */
  markAttemptFailed(route: string, seq: bigint, error: string, final: { reason: string } | undefined): Promise<void>;
  /** Deliveries `scope` may see, newest first, after the cursor `afterId`. */
  listDeliveries(
    scope: AccessScope,
    filter: DeliveryFilter,
    first: number,
    afterId?: bigint,
  ): Promise<{ items: DeliveryRecord[]; hasMore: boolean }>;
}

/** A delivery as PostgreSQL returns it: int8 as text, the phase's columns flat. */
type DeliveryRow = Omit<DeliveryRecord, 'id' | 'seq' | 'phase'> & {
  id: string | bigint;
  seq: string | bigint;
  sourceKind: string | null;
  namespace: string | null;
  name: string | null;
};

const DELIVERY_COLUMNS = sql`
  nd."id", nd."route", nd."seq", nd."kind", nd."status", nd."reason", nd."subject", nd."clusterId", c."name" AS "cluster", nd."phaseId",
  p."sourceKind", p."namespace", p."name", nd."at", nd."flapCount", nd."attempts", nd."lastError", nd."createdAt", nd."updatedAt", nd."deliveredAt"`;
const DELIVERY_FROM = sql`
  FROM "NotificationDelivery" nd JOIN "Cluster" c ON c."id" = nd."clusterId" LEFT JOIN "Phase" p ON p."id" = nd."phaseId"`;

function toRecord(row: DeliveryRow): DeliveryRecord {
  const { sourceKind, namespace, name, ...rest } = row;
  return {
    ...rest,
    id: BigInt(row.id),
    seq: BigInt(row.seq),
    clusterId: Number(row.clusterId),
    phaseId: row.phaseId === null ? null : Number(row.phaseId),
    phase: sourceKind === null || namespace === null || name === null ? null : { sourceKind, namespace, name },
  };
}

/** Scans must not wait on each other: a locked cursor means another scanner is on it. */
const SCAN_TIMEOUT_MS = 60_000;
/** How long a scan waits for a pooled connection (Prisma's default, which scans ran with before). */
const SCAN_CONNECTION_WAIT_MS = 2_000;

export function createNotificationStore(db: Db): NotificationStore {
  const reads = createReadSql(db);
  const raw = sqlOn(db);
  return {
    async ensureCursor(route) {
      await raw.$executeRaw`
        INSERT INTO "NotificationCursor" ("route", "seq", "updatedAt")
        SELECT ${route}, coalesce(max("seq"), 0), now() FROM "StatusChange"
        ON CONFLICT ("route") DO NOTHING`;
    },

    async withRouteScan(route, scan) {
      return withSqlTransaction(
        db,
        async (tx) => {
          const locked = await tx.$queryRaw<
            { seq: bigint }[]
          >`SELECT "seq" FROM "NotificationCursor" WHERE "route" = ${route} FOR UPDATE SKIP LOCKED`;
          const row = locked[0];
          if (row === undefined) return undefined;
          const state: RouteScan = {
            cursor: BigInt(row.seq),
            async subjectPast(subject, since) {
              const rows = await tx.$queryRaw<{ count: bigint; kind: string | null; reason: string | null }[]>`
              SELECT (SELECT count(*) FROM "NotificationDelivery" WHERE "route" = ${route} AND "subject" = ${subject} AND "at" >= ${since}) AS "count",
                     last."kind", last."reason"
              FROM (SELECT 1) one
              LEFT JOIN LATERAL (SELECT "kind", "reason" FROM "NotificationDelivery" WHERE "route" = ${route} AND "subject" = ${subject} ORDER BY "seq" DESC LIMIT 1) last ON true`;
              const first = rows[0];
              return {
                count: Number(first?.count ?? 0),
                previousFlapping: first?.kind === 'flapping' || first?.reason === 'flapping',
              };
            },
            async record(d) {
              await tx.$executeRaw`
              INSERT INTO "NotificationDelivery" ("route", "seq", "kind", "status", "reason", "subject", "clusterId", "phaseId", "at", "flapCount")
              VALUES (${route}, ${d.seq}, ${d.kind}, ${d.status}, ${d.reason ?? null}, ${d.subject}, ${d.clusterId}, ${d.phaseId}, ${d.at}, ${d.flapCount ?? null})`;
            },
            async held() {
              const rows = await tx.$queryRaw<{ seq: bigint; subject: string; at: Date; reason: string | null }[]>`
              SELECT "seq", "subject", "at", "reason" FROM "NotificationDelivery" WHERE "route" = ${route} AND "status" = 'held' ORDER BY "seq"`;
              return rows.map((r) => ({ seq: BigInt(r.seq), subject: r.subject, at: r.at, reason: r.reason }));
            },
            async setStatus(seq, status, reason) {
              await tx.$executeRaw`
              UPDATE "NotificationDelivery" SET "status" = ${status}, "reason" = ${reason ?? null}, "updatedAt" = now()
              WHERE "route" = ${route} AND "seq" = ${seq} AND "status" = 'held'`;
            },
            async advance(seq) {
              await tx.$executeRaw`UPDATE "NotificationCursor" SET "seq" = ${seq}, "updatedAt" = now() WHERE "route" = ${route}`;
            },
          };
          return scan(state);
        },
        { timeoutMs: SCAN_TIMEOUT_MS, maxWaitMs: SCAN_CONNECTION_WAIT_MS },
      );
    },

    async phaseLabels(ids) {
      if (ids.length === 0) return new Map();
      const rows = await reads.query<{ id: number; labels: unknown }>(
        sql`SELECT "id", "labels" FROM "Phase" WHERE "id" = ANY(${[...ids]}::int[])`,
      );
      const labels = new Map<number, Record<string, string>>();
      for (const row of rows) {
        const value = row.labels;
        const plain: Record<string, string> = {};
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          for (const [k, v] of Object.entries(value)) if (typeof v === 'string') plain[k] = v;
        }
        labels.set(Number(row.id), plain);
      }
      return labels;
    },

    async listPending(routes, limit) {
      if (routes.length === 0) return [];
      const rows = await reads.query<{ route: string; seq: string }>(sql`
        SELECT "route", "seq" FROM "NotificationDelivery" WHERE "status" = 'pending' AND "route" = ANY(${[...routes]}::text[]) ORDER BY "id" LIMIT ${limit}`);
      return rows.map((r) => ({ route: r.route, seq: BigInt(r.seq) }));
    },

    async get(route, seq) {
      const rows = await reads.query<DeliveryRow>(
        sql`SELECT ${DELIVERY_COLUMNS} ${DELIVERY_FROM} WHERE nd."route" = ${route} AND nd."seq" = ${seq}::bigint`,
      );
      return rows[0] === undefined ? undefined : toRecord(rows[0]);
    },

    async markDelivered(route, seq) {
      const updated = await raw.$executeRaw`
        UPDATE "NotificationDelivery" SET "status" = 'delivered', "attempts" = "attempts" + 1, "deliveredAt" = now(), "updatedAt" = now()
        WHERE "route" = ${route} AND "seq" = ${seq} AND "status" = 'pending'`;
      return updated > 0;
    },

    async markAttemptFailed(route, seq, error, final) {
      await raw.$executeRaw`
        UPDATE "NotificationDelivery"
        SET "attempts" = "attempts" + 1, "lastError" = ${error.slice(0, 500)}, "updatedAt" = now(),
            "status" = ${final === undefined ? 'pending' : 'failed'}, "reason" = ${final?.reason ?? null}
        WHERE "route" = ${route} AND "seq" = ${seq} AND "status" = 'pending'`;
    },

    async listDeliveries(scope, filter, first, afterId) {
      // A delivery is about its change's cluster and phase: the access rule of the change log applies.
      const where = accessConditions(scope, {
        cluster: sql`c."name"`,
        namespace: sql`p."namespace"`,
        clusterLevel: sql`nd."phaseId" IS NULL`,
      });
      if (filter.route !== undefined) where.push(sql`nd."route" = ${filter.route}`);
      if (filter.status !== undefined) where.push(sql`nd."status" = ANY(${[...filter.status]}::text[])`);
      if (filter.cluster !== undefined) where.push(sql`c."name" = ${filter.cluster}`);
      if (filter.namespace !== undefined) where.push(sql`p."namespace" = ${filter.namespace}`);
      if (afterId !== undefined) where.push(sql`nd."id" < ${afterId}::bigint`);
      const rows = await reads.query<DeliveryRow>(sql`
        SELECT ${DELIVERY_COLUMNS} ${DELIVERY_FROM}
        ${where.length === 0 ? empty : sql`WHERE ${join(where, ' AND ')}`}
        ORDER BY nd."id" DESC LIMIT ${first + 1}`);
      return { items: rows.slice(0, first).map(toRecord), hasMore: rows.length > first };
    },
  };
}
