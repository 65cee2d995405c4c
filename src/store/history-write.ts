/**
 * Applies a snapshot plan inside the snapshot transaction: bulk closes and opens, content-addressed
 * manifests and revisions (stored once per hash), then the change log under one advisory lock so
 * `seq` grows in commit order. Returns the changes written and how many rows were touched.
 */
import type { PhaseWrite, SnapshotPlan } from '../history/plan-snapshot.ts';
import { phaseKey } from '../history/plan-snapshot.ts';
import type { HashedDocument, ObservedManifest, PhaseIdentity, ObservedResource, StatusChangeRecord } from '../history/types.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import type { LockedCluster } from './history-state.ts';

type Tx = Prisma.TransactionClient;
type Json = Prisma.InputJsonValue;

/** Any 64-bit constant: the key of the advisory lock serialising change-log appends. */
const CHANGE_LOG_LOCK = 7_012_345_678_901n;
const BATCH = 2000;

/** What applying a plan wrote. */
export interface AppliedPlan {
  changes: StatusChangeRecord[];
  /** Rows inserted or updated (closes count one each). */
  rows: number;
}

/** The locked cluster a plan is written for, with its configured labels when given. */
export interface PlanCluster extends LockedCluster {
  name: string;
  labels?: Record<string, string>;
}

/** Writes `plan` for the locked cluster `cluster`. */
export async function applyPlan(tx: Tx, cluster: PlanCluster, plan: SnapshotPlan, tickAt: Date): Promise<AppliedPlan> {
  let rows = 0;
  const at = plan.at;
  const clusterId = cluster.id;
  if (plan.reachability !== undefined) {
    if (plan.reachability.closeId !== undefined) {
      await tx.clusterReachability.update({ where: { id: plan.reachability.closeId }, data: { to: at } });
      rows += 1;
    }
    const open = plan.reachability.open;
    await tx.clusterReachability.create({ data: { clusterId, reachable: open.reachable, errorKind: open.errorKind ?? null, message: open.message, from: at } });
    rows += 1;
  }
  // The current run ends: it moves to ObservationTick, and the cluster row starts the next one.
  const endedRun = plan.tick === 'start' && cluster.tickOutcome !== null && cluster.tickStateHash !== null && cluster.tickFirstSeenAt !== null && cluster.tickLastSeenAt !== null;
  if (endedRun) {
    await tx.observationTick.create({
      data: { clusterId, outcome: cluster.tickOutcome as string, stateHash: cluster.tickStateHash as string, firstSeenAt: cluster.tickFirstSeenAt as Date, lastSeenAt: cluster.tickLastSeenAt as Date, count: cluster.tickCount },
    });
    rows += 1;
  }
  const run = plan.tick === 'extend' ? { tickLastSeenAt: at, tickCount: { increment: 1 } } : { tickOutcome: plan.outcome, tickStateHash: plan.stateHash, tickFirstSeenAt: at, tickLastSeenAt: at, tickCount: 1 };
  await tx.cluster.update({
    where: { id: clusterId },
    data: {
      reachable: plan.cluster.reachable,
      lastTickAt: tickAt,
      ...run,
      ...(plan.cluster.lastGoodReadAt ? { lastGoodReadAt: plan.cluster.lastGoodReadAt } : {}),
      ...(cluster.labels !== undefined ? { labels: cluster.labels as Json } : {}),
    },
  });
  rows += 1;
  if (plan.phases.length > 0) rows += await applyPhaseWrites(tx, clusterId, plan.phases, at);
  if (plan.changes.length === 0) return { changes: [], rows };
  const changes = await appendChanges(tx, cluster, plan);
  return { changes, rows: rows + changes.length };
}

async function applyPhaseWrites(tx: Tx, clusterId: number, writes: PhaseWrite[], at: Date): Promise<number> {
  let rows = 0;
  const ids = await resolvePhaseIds(tx, clusterId, writes, at);
  rows += writes.filter((w) => w.upsert !== undefined || w.markDeleted === true).length;
  const idOf = (w: PhaseWrite): number => {
    const id = ids.get(phaseKey(w.identity));
    if (id === undefined) throw new Error('phase id missing after upsert');
    return id;
  };

  const closeManifests = writes.flatMap((w) => (w.closeManifestIntervalId === undefined ? [] : [w.closeManifestIntervalId]));
  rows += await closeByIds((batch) => tx.phaseManifest.updateMany({ where: { id: { in: batch } }, data: { to: at } }), closeManifests);
  const manifestWrites = writes.filter((w) => w.openManifest !== undefined);
  if (manifestWrites.length > 0) {
    const manifestIds = await storeManifests(tx, manifestWrites.map((w) => w.openManifest as ObservedManifest));
    await tx.phaseManifest.createMany({ data: manifestWrites.map((w) => ({ phaseId: idOf(w), manifestId: manifestIds.get((w.openManifest as ObservedManifest).hash) as number, from: at })) });
    rows += manifestWrites.length;
  }

  const closeStatuses = writes.flatMap((w) => (w.closeStatusId === undefined ? [] : [w.closeStatusId]));
  rows += await closeByIds((batch) => tx.phaseStatusInterval.updateMany({ where: { id: { in: batch } }, data: { to: at } }), closeStatuses);
  const statusWrites = writes.filter((w) => w.openStatus !== undefined);
  if (statusWrites.length > 0) {
    const opened = statusWrites.map((w) => ({ phaseId: idOf(w), s: w.openStatus as NonNullable<PhaseWrite['openStatus']> }));
    await tx.$executeRaw`
      INSERT INTO "PhaseStatusInterval" ("phaseId", "status", "message", "summary", "conditions", "worstResource", "stale", "staleSince", "from")
      SELECT p, s, m, su, c, w, st, ss, ${at}::timestamptz(3) FROM unnest(
        ${opened.map((o) => o.phaseId)}::int[], ${opened.map((o) => o.s.status)}::text[], ${opened.map((o) => o.s.message)}::text[],
        ${opened.map((o) => JSON.stringify(o.s.summary))}::jsonb[], ${opened.map((o) => JSON.stringify(o.s.conditions))}::jsonb[],
        ${opened.map((o) => o.s.worstResource ?? null)}::text[], ${opened.map((o) => o.s.stale)}::boolean[],
        ${opened.map((o) => o.s.staleSince?.toISOString() ?? null)}::timestamptz(3)[]
      ) AS t(p, s, m, su, c, w, st, ss)`;
    rows += statusWrites.length;
  }

  const closeResources = writes.flatMap((w) => w.closeResourceIds);
  rows += await closeByIds((batch) => tx.resourceStatusInterval.updateMany({ where: { id: { in: batch } }, data: { to: at } }), closeResources);
  const opened = writes.flatMap((w) => w.openResources.map((resource) => ({ phaseId: idOf(w), resource })));
  if (opened.length > 0) {
    const revisionIds = await storeRevisions(tx, opened.map((o) => o.resource.revision).filter((r): r is HashedDocument => r !== undefined));
    await insertResourceIntervals(tx, opened, revisionIds, at);
    rows += opened.length;
  }
  return rows;
}

async function resolvePhaseIds(tx: Tx, clusterId: number, writes: PhaseWrite[], at: Date): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  const fresh = writes.filter((w) => w.phaseId === undefined);
  if (fresh.length > 0) {
    const created = await tx.phase.createManyAndReturn({
      data: fresh.map((w) => ({
        clusterId, ...w.identity, inventoryId: w.upsert?.inventoryId ?? '', labels: (w.upsert?.labels ?? {}) as Json, firstSeenAt: at, lastSeenAt: at,
      })),
      select: { id: true, sourceKind: true, namespace: true, name: true },
    });
    for (const row of created) ids.set(phaseKey(row), row.id);
  }
  for (const w of writes) {
    if (w.phaseId === undefined) continue;
    ids.set(phaseKey(w.identity), w.phaseId);
    if (w.markDeleted === true) {
      await tx.phase.update({ where: { id: w.phaseId }, data: { deletedAt: at } });
    } else if (w.upsert !== undefined) {
      await tx.phase.update({ where: { id: w.phaseId }, data: { inventoryId: w.upsert.inventoryId, labels: w.upsert.labels as Json, lastSeenAt: at, deletedAt: null } });
    }
  }
  return ids;
}

async function closeByIds<T extends number | bigint>(close: (batch: T[]) => Promise<{ count: number }>, ids: T[]): Promise<number> {
  let count = 0;
  for (let i = 0; i < ids.length; i += BATCH) count += (await close(ids.slice(i, i + BATCH))).count;
  return count;
}

async function storeManifests(tx: Tx, manifests: ObservedManifest[]): Promise<Map<string, number>> {
  const unique = [...new Map(manifests.map((m) => [m.hash, m])).values()];
  const hashes = unique.map((m) => m.hash);
  await tx.$executeRaw`
    INSERT INTO "Manifest" ("hash", "source", "entries", "entryCount")
    SELECT * FROM unnest(${hashes}::text[], ${unique.map((m) => JSON.stringify(m.source))}::jsonb[],
      ${unique.map((m) => JSON.stringify(m.entries))}::jsonb[], ${unique.map((m) => m.entries.length)}::int[])
    ON CONFLICT ("hash") DO NOTHING`;
  const rows = await tx.$queryRaw<{ id: number; hash: string }[]>`SELECT "id", "hash" FROM "Manifest" WHERE "hash" = ANY(${hashes}::text[])`;
  return new Map(rows.map((r) => [r.hash, r.id]));
}

async function storeRevisions(tx: Tx, revisions: HashedDocument[]): Promise<Map<string, number>> {
  const unique = [...new Map(revisions.map((r) => [r.hash, r])).values()];
  const ids = new Map<string, number>();
  for (let i = 0; i < unique.length; i += BATCH) {
    const batch = unique.slice(i, i + BATCH);
    const hashes = batch.map((r) => r.hash);
    await tx.$executeRaw`
      INSERT INTO "ObjectRevision" ("hash", "object")
      SELECT * FROM unnest(${hashes}::text[], ${batch.map((r) => JSON.stringify(r.body))}::jsonb[])
      ON CONFLICT ("hash") DO NOTHING`;
    const rows = await tx.$queryRaw<{ id: number; hash: string }[]>`SELECT "id", "hash" FROM "ObjectRevision" WHERE "hash" = ANY(${hashes}::text[])`;
    for (const row of rows) ids.set(row.hash, row.id);
  }
  return ids;
}

/** Bulk-inserts opened resource intervals with one `unnest` per batch (Prisma's createMany costs ~0.5 ms a row here). */
async function insertResourceIntervals(tx: Tx, opened: { phaseId: number; resource: ObservedResource }[], revisionIds: Map<string, number>, at: Date): Promise<void> {
  for (let i = 0; i < opened.length; i += BATCH) {
    const batch = opened.slice(i, i + BATCH);
    const col = <T>(pick: (o: { phaseId: number; resource: ObservedResource }) => T): T[] => batch.map(pick);
    const optionalInt = (n: number | undefined): string | null => (n === undefined ? null : String(n));
    await tx.$executeRaw`
      INSERT INTO "ResourceStatusInterval"
        ("phaseId", "resourceKey", "status", "reason", "message", "conditions", "presence", "generation", "observedGeneration", "customHealth", "revisionId", "from")
      SELECT p, k, s, r, m, c, pr, g, og, ch, rv, ${at}::timestamptz(3) FROM unnest(
        ${col((o) => o.phaseId)}::int[], ${col((o) => o.resource.key)}::text[], ${col((o) => o.resource.status)}::text[],
        ${col((o) => o.resource.reason ?? null)}::text[], ${col((o) => o.resource.message)}::text[],
        ${col((o) => JSON.stringify(o.resource.conditions))}::jsonb[], ${col((o) => o.resource.presence)}::text[],
        ${col((o) => optionalInt(o.resource.generation))}::bigint[], ${col((o) => optionalInt(o.resource.observedGeneration))}::bigint[],
        ${col((o) => (o.resource.customHealth === undefined ? null : JSON.stringify(o.resource.customHealth)))}::jsonb[],
        ${col((o) => (o.resource.revision === undefined ? null : (revisionIds.get(o.resource.revision.hash) ?? null)))}::int[]
      ) AS t(p, k, s, r, m, c, pr, g, og, ch, rv)`;
  }
}

async function appendChanges(tx: Tx, cluster: { id: number; name: string }, plan: SnapshotPlan): Promise<StatusChangeRecord[]> {
  const phaseIds = new Map<string, number>();
  const identities = new Map<number, PhaseIdentity>();
  if (plan.changes.some((c) => c.phase !== undefined)) {
    const rows = await tx.phase.findMany({ where: { clusterId: cluster.id }, select: { id: true, sourceKind: true, namespace: true, name: true } });
    for (const { id, ...identity } of rows) {
      phaseIds.set(phaseKey(identity), id);
      identities.set(id, identity);
    }
  }
  // Taken last and held to commit: appends of different clusters commit in seq order.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${CHANGE_LOG_LOCK})`;
  const written: ChangeRow[] = [];
  for (let i = 0; i < plan.changes.length; i += BATCH) {
    const batch = plan.changes.slice(i, i + BATCH);
    const rows = await tx.$queryRaw<typeof written>`
      INSERT INTO "StatusChange" ("at", "clusterId", "phaseId", "scope", "resourceKey", "fromStatus", "toStatus", "message")
      SELECT ${plan.at}::timestamptz(3), ${cluster.id}::int, p, s, k, f, t, m FROM unnest(
        ${batch.map((c) => (c.phase === undefined ? null : (phaseIds.get(phaseKey(c.phase)) ?? null)))}::int[], ${batch.map((c) => c.scope)}::text[],
        ${batch.map((c) => c.resourceKey ?? null)}::text[], ${batch.map((c) => c.fromStatus)}::text[], ${batch.map((c) => c.toStatus)}::text[],
        ${batch.map((c) => c.message)}::text[]
      ) AS x(p, s, k, f, t, m)
      RETURNING "seq", "at", "phaseId", "scope", "resourceKey", "fromStatus", "toStatus", "message"`;
    written.push(...rows);
  }
  return written.sort((a, b) => (a.seq < b.seq ? -1 : 1)).map((row) => toChangeRecord(row, cluster, identities));
}

/** A StatusChange row as the change log's readers and publishers see it. */
export interface ChangeRow {
  seq: bigint;
  at: Date;
  phaseId: number | null;
  scope: string;
  resourceKey: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  message: string;
}

/** Shape a stored change row, given its cluster and the identities of the phases involved. */
export function toChangeRecord(row: ChangeRow, cluster: { id: number; name: string }, identities: ReadonlyMap<number, PhaseIdentity>): StatusChangeRecord {
  return {
    seq: row.seq,
    at: row.at,
    cluster: cluster.name,
    clusterId: cluster.id,
    phaseId: row.phaseId,
    phase: row.phaseId === null ? null : (identities.get(row.phaseId) ?? null),
    scope: row.scope as StatusChangeRecord['scope'],
    resourceKey: row.resourceKey,
    fromStatus: row.fromStatus,
    toStatus: row.toStatus,
    message: row.message,
  };
}
