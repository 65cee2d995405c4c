/**
 * Applies a snapshot plan inside the snapshot transaction: bulk closes and opens, content-addressed
 * manifests, revisions and status details (stored once per hash), resources by int id, then the
 * change log under one advisory lock so `seq` grows in commit order. Returns the changes written and how many rows were touched.
 */
import { randomInt } from 'node:crypto';
import type { WrittenIds } from '../history/advance-state.ts';
import type { OpenedResource, PhaseWrite, PlannedChange, SnapshotPlan } from '../history/plan-snapshot.ts';
import { phaseKey } from '../history/plan-snapshot.ts';
import { messageDetail, phaseDetail, resourceDetail, type StatusDetailDoc } from '../history/status-detail.ts';
import type {
  HashedDocument,
  ObservedManifest,
  PhaseIdentity,
  ObservedResource,
  StatusChange,
} from '../history/types.ts';
import type { LockedCluster } from './history-state.ts';
import { storeRevisions } from './revisions.ts';
import type { RawTx } from './sql-transaction.ts';
import type { Sql } from './sql.ts';
import { sql, empty, join, raw } from './sql.ts';

type Tx = RawTx;

/** Any 64-bit constant: the key of the advisory lock serialising change-log appends. */
export const CHANGE_LOG_LOCK = 7_012_345_678_901n;
/** Rows per statement: one `unnest` statement per 10,000 rows keeps round trips few (bench/ingest.ts). */
const BATCH = 10_000;

/** What applying a plan wrote. */
export interface AppliedPlan {
  changes: StatusChange[];
  /** Rows inserted or updated (closes count one each). */
  rows: number;
  /** The cluster's stateVersion once the transaction commits (a new one unless nothing was written). */
  stateVersion: number;
  /** The ids the writes gave what the plan opened, so a caller can advance its kept state without reading it back. */
  written: WrittenIds;
}

/**
 * The version a snapshot gives its cluster's row: random rather than the next count, so that a
 * database restored from a backup under running workers never climbs back to a version a worker
 * kept a (now wrong) state for; a worker's kept version matches a later random one with odds of
 * 1 in 2^31 per snapshot.
 */
function nextStateVersion(previous: number): number {
  let next = previous;
  while (next === previous) next = randomInt(1, 2 ** 31 - 1);
  return next;
}

/** The locked cluster a plan is written for, with its configured labels when given. */
export interface PlanCluster extends LockedCluster {
  name: string;
  labels?: Record<string, string>;
}

/** What {@link applyPlan} writes besides the plan. */
export interface ApplyPlanOptions {
  /** The tick the plan records (the cluster's tick watermark moves to it, unless the plan keeps the run). */
  tickAt: Date;
  /**
   * Bodies of revisions the observation no longer holds (its watch cache dropped them once a
   * snapshot stored them), read from the cluster before the transaction, by hash.
   */
  revisionBodies?: ReadonlyMap<string, Record<string, unknown>>;
}

/** Writes `plan` for the locked cluster `cluster`. */
export async function applyPlan(
  tx: Tx,
  cluster: PlanCluster,
  plan: SnapshotPlan,
  options: ApplyPlanOptions,
): Promise<AppliedPlan> {
  let rows = 0;
  const at = plan.at;
  const clusterId = cluster.id;
  // A live snapshot that found nothing new writes nothing at all (the next tick moves the last good read).
  const known: KnownIds = {
    phaseDetails: new Map(),
    resourceDetails: new Map(),
    phases: new Map(),
    resources: new Map(),
    revisions: new Map(),
  };
  if (
    plan.tick === 'keep' &&
    plan.phases.length === 0 &&
    plan.changes.length === 0 &&
    plan.reachability === undefined
  ) {
    return { changes: [], rows: 0, stateVersion: cluster.stateVersion, written: known };
  }
  const stateVersion = nextStateVersion(cluster.stateVersion);
  if (plan.reachability !== undefined) {
    if (plan.reachability.closeId !== undefined) {
      await tx.$executeRaw`UPDATE "ClusterReachability" SET "to" = ${at}::timestamptz(3) WHERE "id" = ${plan.reachability.closeId}::int`;
      rows += 1;
    }
    const open = plan.reachability.open;
    await tx.$executeRaw`
      INSERT INTO "ClusterReachability" ("clusterId", "reachable", "errorKind", "message", "from")
      VALUES (${clusterId}::int, ${open.reachable}::boolean, ${open.errorKind ?? null}::text, ${open.message}::text, ${at}::timestamptz(3))`;
    rows += 1;
  }
  // What the writes learnt, for the change log: status details of what was opened (a change's
  // message is its new status' message) and the ids of the phases and resources created.
  // The change-log rows are worked out while the resource statuses are written.
  let prepared: PreparedChanges | undefined;
  const prepare = (): void => {
    prepared = prepareChanges(plan, known);
  };
  if (plan.phases.length > 0)
    rows += await applyPhaseWrites(
      tx,
      { clusterId, writes: plan.phases, at, known, revisionBodies: options.revisionBodies },
      prepare,
    );
  rows += await writeRun(tx, cluster, plan, options.tickAt, stateVersion);
  if (plan.changes.length === 0) return { changes: [], rows, stateVersion, written: known };
  const changes = await appendChanges(tx, cluster, plan, known, prepared ?? prepareChanges(plan, known));
  return { changes, rows: rows + changes.length, stateVersion, written: known };
}

/**
 * Ends the cluster's current observation run (it moves to ObservationTick) when the plan starts a
 * new one, and updates the cluster's row: its run, tick watermark, last good read, labels and
 * stateVersion. One statement. Returns rows written.
 */
async function writeRun(
  tx: Tx,
  cluster: PlanCluster,
  plan: SnapshotPlan,
  tickAt: Date,
  stateVersion: number,
): Promise<number> {
  const set: Sql[] = [
    sql`"reachable" = ${plan.cluster.reachable}::boolean`,
    sql`"stateVersion" = ${stateVersion}::int`,
  ];
  // A live snapshot is no tick: the next scheduled tick must still run, whatever its slot.
  if (plan.tick !== 'keep') set.push(sql`"lastTickAt" = ${tickAt}::timestamptz(3)`);
  set.push(...nextRun(plan));
  if (plan.cluster.lastGoodReadAt) set.push(sql`"lastGoodReadAt" = ${plan.cluster.lastGoodReadAt}::timestamptz(3)`);
  if (cluster.labels !== undefined) set.push(sql`"labels" = ${JSON.stringify(cluster.labels)}::jsonb`);
  const update = sql`UPDATE "Cluster" SET ${join(set, ', ')} WHERE "id" = ${cluster.id}::int`;
  const { tickOutcome, tickStateHash, tickFirstSeenAt, tickLastSeenAt } = cluster;
  if (
    plan.tick !== 'start' ||
    tickOutcome === null ||
    tickStateHash === null ||
    tickFirstSeenAt === null ||
    tickLastSeenAt === null
  ) {
    await tx.$executeRaw(update);
    return 1;
  }
  // Data-modifying WITH clauses run whether or not the statement reads them.
  await tx.$executeRaw`
    WITH ended AS (
      INSERT INTO "ObservationTick" ("clusterId", "outcome", "stateHash", "firstSeenAt", "lastSeenAt", "count")
      VALUES (${cluster.id}::int, ${tickOutcome}, ${tickStateHash}, ${tickFirstSeenAt}::timestamptz(3), ${tickLastSeenAt}::timestamptz(3), ${cluster.tickCount}::int)
    )
    ${update}`;
  return 2;
}

/** The cluster's observation run after `plan`: extended, a new one, or (a live snapshot) kept. */
function nextRun(plan: SnapshotPlan): Sql[] {
  if (plan.tick === 'extend')
    return [sql`"tickLastSeenAt" = ${plan.at}::timestamptz(3)`, sql`"tickCount" = "tickCount" + 1`];
  if (plan.tick === 'start') {
    return [
      sql`"tickOutcome" = ${plan.outcome}`,
      sql`"tickStateHash" = ${plan.stateHash}`,
      sql`"tickFirstSeenAt" = ${plan.at}::timestamptz(3)`,
      sql`"tickLastSeenAt" = ${plan.at}::timestamptz(3)`,
      sql`"tickCount" = 1`,
      sql`"tickDiverged" = false`,
    ];
  }
  // A live snapshot wrote: what is stored no longer matches the run's hash, so a tick seeing that
  // hash again is a change back, not more of the same run.
  return [sql`"tickDiverged" = true`];
}

/**
 * Ids learnt while writing phases, so appending the change log looks nothing up again. Keyed by
 * number where the plan names the stored ids (a change of a stored phase or resource carries them):
 * a snapshot may change every resource of the cluster, and a string key per change costs more
 * than writing it.
 */
interface KnownIds {
  /** Detail id of each phase status opened, by phase id. */
  phaseDetails: Map<number, number>;
  /** Detail id of each resource status opened, by resource id. */
  resourceDetails: Map<number, number>;
  /** Phase id by {@link phaseKey}. */
  phases: Map<string, number>;
  /** Id of each resource created or put back in its phase, by phase id + NUL + resource key. */
  resources: Map<string, number>;
  /** Revision id of each opened resource interval, by resource id. */
  revisions: Map<number, number | null>;
}

/** The phase writes of one plan, and where {@link applyPhaseWrites} records the ids they get. */
interface PhaseWrites {
  clusterId: number;
  writes: PhaseWrite[];
  at: Date;
  known: KnownIds;
  revisionBodies: ApplyPlanOptions['revisionBodies'];
}

/** Writes the plan's phases; `duringStatuses` (CPU only) runs while the resource statuses are written. */
async function applyPhaseWrites(
  tx: Tx,
  { clusterId, writes, at, known, revisionBodies }: PhaseWrites,
  duringStatuses: () => void,
): Promise<number> {
  let rows = 0;
  // The resource intervals the plan ends are ended first: that statement needs nothing but their
  // ids, and what the opened statuses need besides ids (their details hashed, the resources that
  // left) is worked out while it runs (or, with none to end, while the phases are written).
  let statuses: OpenedStatuses | undefined;
  const prepareStatuses = (): void => {
    statuses ??= prepareOpenedStatuses(writes);
  };
  const ending = writes.flatMap((w) => w.closeResources.map((r) => r.resourceId));
  if (ending.length > 0) {
    await tx.$executeRaw`SAVEPOINT ${raw(ENDED_SAVEPOINT)}`;
    rows += await overlapping(endResourceIntervals(tx, ending, at), prepareStatuses);
  }
  const ids = await overlapping(resolvePhaseIds(tx, clusterId, writes, at), prepareStatuses);
  for (const [key, id] of ids) known.phases.set(key, id);
  rows += writes.filter((w) => w.upsert !== undefined || w.markDeleted === true).length;
  const idOf = (w: PhaseWrite): number => {
    const id = ids.get(phaseKey(w.identity));
    if (id === undefined) throw new Error('phase id missing after upsert');
    return id;
  };

  const closeManifests = writes.flatMap((w) =>
    w.closeManifestIntervalId === undefined ? [] : [w.closeManifestIntervalId],
  );
  for (let i = 0; i < closeManifests.length; i += BATCH) {
    rows +=
      await tx.$executeRaw`UPDATE "PhaseManifest" SET "to" = ${at}::timestamptz(3) WHERE "id" = ANY(${intArray(closeManifests.slice(i, i + BATCH))}::int[])`;
  }
  const manifestWrites = writes.filter((w) => w.openManifest !== undefined);
  if (manifestWrites.length > 0) {
    const manifestIds = await storeManifests(
      tx,
      manifestWrites.map((w) => w.openManifest as ObservedManifest),
    );
    for (let i = 0; i < manifestWrites.length; i += BATCH) {
      const batch = manifestWrites.slice(i, i + BATCH);
      await tx.$executeRaw`
        INSERT INTO "PhaseManifest" ("phaseId", "manifestId", "from")
        SELECT p, m, ${at}::timestamptz(3) FROM unnest(${intArray(batch.map(idOf))}::int[], ${intArray(batch.map((w) => manifestIds.get((w.openManifest as ObservedManifest).hash) as number))}::int[]) AS t(p, m)`;
    }
    rows += manifestWrites.length;
  }

  const closeStatuses = writes.flatMap((w) =>
    w.closeStatusFrom === undefined ? [] : [{ id: idOf(w), reopened: w.openStatus !== undefined }],
  );
  if (closeStatuses.length > 0) rows += await closePhaseStatuses(tx, closeStatuses, at);
  const statusWrites = writes.filter((w) => w.openStatus !== undefined);
  if (statusWrites.length > 0) {
    prepareStatuses();
    const phaseDetails = (statuses as OpenedStatuses).phaseDetails;
    const opened = statusWrites.map((w) => ({
      phaseId: idOf(w),
      s: w.openStatus as NonNullable<PhaseWrite['openStatus']>,
      ...(phaseDetails.get(w) as ReturnType<typeof phaseDetail>),
    }));
    const detailIds = await storeDetails(tx, uniqueDetails(opened.map((o) => o.doc)));
    for (const o of opened) known.phaseDetails.set(o.phaseId, detailIds.get(o.doc.hash) as number);
    // Updated in place: the row keeps its page (HOT), so a change adds no index entry.
    await tx.$executeRaw`
      INSERT INTO "PhaseCurrentStatus" ("phaseId", "status", "detailId", "conditionTimes", "stale", "staleSince", "from", "since")
      SELECT p, s, d, ARRAY(SELECT (jsonb_array_elements_text(ct))::timestamptz(3)), st, ss, ${at}::timestamptz(3), coalesce(sn, ${at}::timestamptz(3)) FROM unnest(
        ${opened.map((o) => o.phaseId)}::int[], ${opened.map((o) => o.s.status)}::text[], ${opened.map((o) => detailIds.get(o.doc.hash) as number)}::int[],
        ${opened.map((o) => JSON.stringify(o.conditionTimes))}::jsonb[], ${opened.map((o) => o.s.stale)}::boolean[],
        ${opened.map((o) => o.s.staleSince?.toISOString() ?? null)}::timestamptz(3)[], ${opened.map((o) => o.s.since?.toISOString() ?? null)}::timestamptz(3)[]
      ) AS t(p, s, d, ct, st, ss, sn)
      ON CONFLICT ("phaseId") DO UPDATE SET "status" = excluded."status", "detailId" = excluded."detailId", "conditionTimes" = excluded."conditionTimes",
        "stale" = excluded."stale", "staleSince" = excluded."staleSince", "from" = excluded."from", "since" = excluded."since"`;
    rows += statusWrites.length;
  }

  prepareStatuses();
  const { gone, opened, details, revisions } = statuses as OpenedStatuses;
  // Resources that left their phase (or whose phase was deleted) lose their current status.
  for (let i = 0; i < gone.length; i += BATCH)
    rows +=
      await tx.$executeRaw`DELETE FROM "ResourceCurrentStatus" WHERE "resourceId" = ANY(${gone.slice(i, i + BATCH)}::int[])`;
  if (opened.length > 0) {
    const phaseIds = opened.map((o) => o.write.phaseId ?? idOf(o.write));
    const resourceIds = await resolveResourceIds(
      tx,
      opened.map((o, i) => ({ phaseId: phaseIds[i] as number, resourceId: o.resourceId, resource: o.resource })),
    );
    // A revision the resource already had is not sent again (most status changes leave the object's spec alone).
    const revisionIds = await storeRevisions(tx, revisions, revisionBodies);
    const detailIds = await storeDetails(tx, details.unique);
    const status: StatusColumns = { resourceIds: [], hasCurrent: [], statuses: [], detailIds: [], revisionIds: [] };
    for (let i = 0; i < opened.length; i += 1) {
      const o = opened[i] as OpenedStatuses['opened'][number];
      const resourceId = resourceIds[i] as number;
      if (o.resourceId === undefined)
        known.resources.set(`${phaseIds[i] as number}\u0000${o.resource.key}`, resourceId);
      const detailId = detailIds.get(details.hashes[i] as string) as number;
      const revisionId =
        o.revisionId ??
        (o.resource.revision === undefined ? null : (revisionIds.get(o.resource.revision.hash) ?? null));
      known.resourceDetails.set(resourceId, detailId);
      known.revisions.set(resourceId, revisionId);
      status.resourceIds.push(resourceId);
      // A resource that had an open interval has a current row (it was loaded from it).
      status.hasCurrent.push(o.resourceId !== undefined);
      status.statuses.push(o.resource.status);
      status.detailIds.push(detailId);
      status.revisionIds.push(revisionId);
    }
    rows += await overlapping(setResourceStatuses(tx, status, at), duringStatuses);
  }
  return rows;
}

/** What writing the opened statuses needs that the plan alone tells (no ids from the database). */
interface OpenedStatuses {
  /** Every opened resource, in plan order, with its phase's write. */
  opened: (OpenedResource & { write: PhaseWrite })[];
  /** The status detail of each opened resource (its hash, in the order of `opened`), and the distinct ones. */
  details: { hashes: string[]; unique: UniqueDetails };
  /** Revisions to store: of opened resources whose revision is not the one they had. */
  revisions: HashedDocument[];
  /** Resources whose interval ends without a new one (they left their phase, or it was deleted). */
  gone: number[];
  /** The detail of each phase status opened, by its write. */
  phaseDetails: Map<PhaseWrite, ReturnType<typeof phaseDetail>>;
}

function prepareOpenedStatuses(writes: readonly PhaseWrite[]): OpenedStatuses {
  const opened: OpenedStatuses['opened'] = [];
  const docs: StatusDetailDoc[] = [];
  const hashes: string[] = [];
  const revisions: HashedDocument[] = [];
  const gone: number[] = [];
  const phaseDetails = new Map<PhaseWrite, ReturnType<typeof phaseDetail>>();
  for (const write of writes) {
    if (write.openStatus !== undefined) phaseDetails.set(write, phaseDetail(write.openStatus));
    const reopened = new Set<number>();
    for (const o of write.openResources) {
      opened.push({ ...o, write });
      const doc = resourceDetail(o.resource);
      docs.push(doc);
      hashes.push(doc.hash);
      if (o.resourceId !== undefined) reopened.add(o.resourceId);
      if (o.revisionId === undefined && o.resource.revision !== undefined) revisions.push(o.resource.revision);
    }
    for (const r of write.closeResources) if (!reopened.has(r.resourceId)) gone.push(r.resourceId);
  }
  return { opened, details: { hashes, unique: uniqueDetails(docs) }, revisions, gone, phaseDetails };
}

/**
 * Ends phases' current statuses at `at`: each becomes an ended interval [from, at), inserted once
 * and never updated (one that began at `at` would be empty and is dropped). Statuses not reopened
 * in the same plan (deleted phases) are removed.
 */
async function closePhaseStatuses(tx: Tx, refs: { id: number; reopened: boolean }[], at: Date): Promise<number> {
  const ids = refs.map((r) => r.id);
  const ended = await tx.$executeRaw`
    INSERT INTO "PhaseStatusInterval" ("phaseId", "status", "detailId", "conditionTimes", "stale", "staleSince", "from", "to")
    SELECT c."phaseId", c."status", c."detailId", c."conditionTimes", c."stale", c."staleSince", c."from", ${at}::timestamptz(3)
    FROM "PhaseCurrentStatus" c WHERE c."phaseId" = ANY(${ids}::int[]) AND c."from" < ${at}::timestamptz(3)
    ON CONFLICT ("phaseId", "from") DO NOTHING`;
  const gone = refs.filter((r) => !r.reopened).map((r) => r.id);
  if (gone.length > 0) await tx.$executeRaw`DELETE FROM "PhaseCurrentStatus" WHERE "phaseId" = ANY(${gone}::int[])`;
  return ended + gone.length;
}

/**
 * Ends the current statuses of resources `ids` at `at`: each becomes an ended interval [from, at)
 * copied from its current row (one that began at `at` would be empty and is not copied); the
 * current rows are set or removed afterwards. Returns the intervals ended.
 *
 * Inserted as they are first: an interval with the same resource and start can exist only when
 * workers' clocks disagree, and ON CONFLICT's arbitration is a large share of the statement's
 * cost, paid on every snapshot for a case that almost never happens. When one exists, the inserts
 * roll back to {@link ENDED_SAVEPOINT}, which the caller takes just before (a statement of its own, so that this
 * one is on its way to the database before the caller turns to other work), and run again skipping it.
 */
async function endResourceIntervals(tx: Tx, ids: number[], at: Date): Promise<number> {
  try {
    return await insertEndedIntervals(tx, ids, at, { onConflict: 'fail' });
  } catch (error) {
    if (!isUniqueViolation(error, 'ResourceStatusInterval')) throw error;
    await tx.$executeRaw`ROLLBACK TO SAVEPOINT ${raw(ENDED_SAVEPOINT)}`;
    return insertEndedIntervals(tx, ids, at, { onConflict: 'skip' });
  }
}

/** What {@link insertEndedIntervals} does with an ended interval that exists already: fail the statement, or skip it. */
interface EndedIntervalOptions {
  onConflict: 'fail' | 'skip';
}

async function insertEndedIntervals(
  tx: Tx,
  ids: number[],
  at: Date,
  { onConflict }: EndedIntervalOptions,
): Promise<number> {
  let count = 0;
  for (let i = 0; i < ids.length; i += BATCH) {
    count += await tx.$executeRaw`
      INSERT INTO "ResourceStatusInterval" ("resourceId", "status", "detailId", "revisionId", "from", "to")
      SELECT c."resourceId", c."status", c."detailId", c."revisionId", c."from", ${at}::timestamptz(3)
      FROM "ResourceCurrentStatus" c WHERE c."resourceId" = ANY(${intArray(ids.slice(i, i + BATCH))}::int[]) AND c."from" < ${at}::timestamptz(3)
      ${onConflict === 'skip' ? sql`ON CONFLICT ("resourceId", "from") DO NOTHING` : empty}`;
  }
  return count;
}

/** Taken just before {@link endResourceIntervals}, which rolls back to it when an ended interval exists already. */
const ENDED_SAVEPOINT = 'ended_resource_intervals';

/** Ids of the resources of `opened`, creating the ones new to their phase (in order of `opened`). */
async function resolveResourceIds(
  tx: Tx,
  opened: { phaseId: number; resourceId?: number; resource: ObservedResource }[],
): Promise<number[]> {
  const missing = opened.filter((o) => o.resourceId === undefined);
  const found = new Map<string, number>();
  for (let i = 0; i < missing.length; i += BATCH) {
    const batch = missing.slice(i, i + BATCH);
    const phaseIds = batch.map((o) => o.phaseId);
    const keys = batch.map((o) => o.resource.key);
    await tx.$executeRaw`
      INSERT INTO "Resource" ("phaseId", "key") SELECT * FROM unnest(${phaseIds}::int[], ${keys}::text[])
      ON CONFLICT ("phaseId", "key") DO NOTHING`;
    const rows = await tx.$queryRaw<{ id: number; phaseId: number; key: string }[]>`
      SELECT r."id", r."phaseId", r."key" FROM "Resource" r JOIN unnest(${phaseIds}::int[], ${keys}::text[]) AS k(p, key)
      ON r."phaseId" = k.p AND r."key" = k.key`;
    for (const row of rows) found.set(`${row.phaseId}\u0000${row.key}`, row.id);
  }
  return opened.map((o) => {
    const id = o.resourceId ?? found.get(`${o.phaseId}\u0000${o.resource.key}`);
    if (id === undefined) throw new Error('resource id missing after upsert');
    return id;
  });
}

/** Distinct status details in hash order, with their bodies' JSON: what {@link storeDetails} sends. */
export interface UniqueDetails {
  hashes: string[];
  bodies: string[];
}

/**
 * The distinct details of `docs`, in hash order: snapshots of two clusters inserting the same new
 * details wait on each other in one order, never in a cycle (a deadlock).
 */
export function uniqueDetails(docs: readonly StatusDetailDoc[]): UniqueDetails {
  const byHash = new Map<string, StatusDetailDoc>();
  for (const doc of docs) if (!byHash.has(doc.hash)) byHash.set(doc.hash, doc);
  const hashes = [...byHash.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { hashes, bodies: hashes.map((h) => JSON.stringify((byHash.get(h) as StatusDetailDoc).body)) };
}

/**
 * Stores each distinct detail once (by hash); returns the id of every hash. Always inserts (doing
 * nothing on conflict) so the table lock retention takes waits for this transaction.
 */
export async function storeDetails(tx: Tx, details: UniqueDetails): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (let i = 0; i < details.hashes.length; i += BATCH) {
    const hashes = details.hashes.slice(i, i + BATCH);
    // One round trip: the ids of the details inserted, and of those stored before the statement began.
    const rows = await tx.$queryRaw<{ id: number; hash: string }[]>`
      WITH added AS (
        INSERT INTO "StatusDetail" ("hash", "body")
        SELECT * FROM unnest(${hashes}::text[], ${details.bodies.slice(i, i + BATCH)}::jsonb[])
        ON CONFLICT ("hash") DO NOTHING
        RETURNING "id", "hash"
      )
      SELECT "id", "hash" FROM added UNION ALL SELECT "id", "hash" FROM "StatusDetail" WHERE "hash" = ANY(${hashes}::text[])`;
    for (const row of rows) ids.set(row.hash, row.id);
    // A detail another snapshot committed while this statement waited on it is read by a new one.
    const late = hashes.filter((h) => !ids.has(h));
    if (late.length > 0) {
      for (const row of await tx.$queryRaw<
        { id: number; hash: string }[]
      >`SELECT "id", "hash" FROM "StatusDetail" WHERE "hash" = ANY(${late}::text[])`)
        ids.set(row.hash, row.id);
    }
  }
  return ids;
}

async function resolvePhaseIds(
  tx: Tx,
  clusterId: number,
  writes: PhaseWrite[],
  at: Date,
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  const fresh = writes.filter((w) => w.phaseId === undefined);
  if (fresh.length > 0) {
    for (let i = 0; i < fresh.length; i += BATCH) {
      const batch = fresh.slice(i, i + BATCH);
      const created = await tx.$queryRaw<{ id: number; sourceKind: string; namespace: string; name: string }[]>`
        INSERT INTO "Phase" ("clusterId", "sourceKind", "namespace", "name", "inventoryId", "labels", "firstSeenAt", "lastSeenAt")
        SELECT ${clusterId}::int, s, ns, n, i, l, ${at}::timestamptz(3), ${at}::timestamptz(3) FROM unnest(
          ${batch.map((w) => w.identity.sourceKind)}::text[], ${batch.map((w) => w.identity.namespace)}::text[], ${batch.map((w) => w.identity.name)}::text[],
          ${batch.map((w) => w.upsert?.inventoryId ?? '')}::text[], ${batch.map((w) => JSON.stringify(w.upsert?.labels ?? {}))}::jsonb[]
        ) AS t(s, ns, n, i, l)
        RETURNING "id", "sourceKind", "namespace", "name"`;
      for (const row of created) ids.set(phaseKey(row), row.id);
    }
  }
  const deleted: number[] = [];
  const seen: { id: number; inventoryId: string; labels: string }[] = [];
  for (const w of writes) {
    if (w.phaseId === undefined) continue;
    ids.set(phaseKey(w.identity), w.phaseId);
    if (w.markDeleted === true) deleted.push(w.phaseId);
    else if (w.upsert !== undefined)
      seen.push({ id: w.phaseId, inventoryId: w.upsert.inventoryId, labels: JSON.stringify(w.upsert.labels) });
  }
  // One statement each, not one per phase: a snapshot may touch every phase of the cluster.
  if (deleted.length > 0)
    await tx.$executeRaw`UPDATE "Phase" SET "deletedAt" = ${at}::timestamptz(3) WHERE "id" = ANY(${deleted}::int[])`;
  if (seen.length > 0) {
    await tx.$executeRaw`
      UPDATE "Phase" p SET "inventoryId" = u.i, "labels" = u.l, "lastSeenAt" = ${at}::timestamptz(3), "deletedAt" = NULL
      FROM unnest(${seen.map((s) => s.id)}::int[], ${seen.map((s) => s.inventoryId)}::text[], ${seen.map((s) => s.labels)}::jsonb[]) AS u(id, i, l)
      WHERE p."id" = u.id`;
  }
  return ids;
}

async function storeManifests(tx: Tx, manifests: ObservedManifest[]): Promise<Map<string, number>> {
  const unique = [...new Map(manifests.map((m) => [m.hash, m])).values()];
  const hashes = unique.map((m) => m.hash);
  await tx.$executeRaw`
    INSERT INTO "Manifest" ("hash", "source", "entries", "entryCount")
    SELECT * FROM unnest(${hashes}::text[], ${unique.map((m) => JSON.stringify(m.source))}::jsonb[],
      ${unique.map((m) => JSON.stringify(m.entries))}::jsonb[], ${unique.map((m) => m.entries.length)}::int[])
    ON CONFLICT ("hash") DO NOTHING`;
  const rows = await tx.$queryRaw<
    { id: number; hash: string }[]
  >`SELECT "id", "hash" FROM "Manifest" WHERE "hash" = ANY(${hashes}::text[])`;
  return new Map(rows.map((r) => [r.hash, r.id]));
}

/** The opened resource statuses, column by column. */
interface StatusColumns {
  resourceIds: number[];
  hasCurrent: boolean[];
  statuses: string[];
  detailIds: number[];
  revisionIds: (number | null)[];
}

/**
 * Sets resources' current statuses (their ended intervals were copied by
 * {@link endResourceIntervals}), in one statement per batch of 10,000: the current row is updated
 * in place (it keeps its page: HOT), or inserted for a resource without one (new to its phase, or
 * back in it). A plain UPDATE costs about 60 % of an upsert here. One `unnest` per batch (Prisma's
 * createMany sends a row at a time). Returns rows written.
 */
async function setResourceStatuses(tx: Tx, status: StatusColumns, at: Date): Promise<number> {
  let rows = 0;
  for (let i = 0; i < status.resourceIds.length; i += BATCH) {
    const resourceIds = intArray(status.resourceIds.slice(i, i + BATCH));
    const hasCurrent = status.hasCurrent.slice(i, i + BATCH);
    const statuses = textArray(status.statuses.slice(i, i + BATCH));
    const detailIds = intArray(status.detailIds.slice(i, i + BATCH));
    const revisionIds = intArray(status.revisionIds.slice(i, i + BATCH));
    const withCurrent = hasCurrent.filter((h) => h).length;
    if (withCurrent === hasCurrent.length) {
      // Every resource has its current row (the usual snapshot): a plain UPDATE.
      const updated = await tx.$executeRaw`
        UPDATE "ResourceCurrentStatus" c SET "status" = t.s, "detailId" = t.d, "revisionId" = t.rv, "from" = ${at}::timestamptz(3)
        FROM unnest(${resourceIds}::int[], ${statuses}::text[], ${detailIds}::int[], ${revisionIds}::int[]) AS t(r, s, d, rv)
        WHERE c."resourceId" = t.r`;
      if (updated !== withCurrent)
        throw new Error(`resource current statuses changed under the snapshot: ${updated} updated of ${withCurrent}`);
      rows += updated;
      continue;
    }
    const counts = await tx.$queryRaw<{ updated: number; inserted: number }[]>`
      WITH t AS (
        SELECT * FROM unnest(${resourceIds}::int[], ${boolArray(hasCurrent)}::boolean[], ${statuses}::text[], ${detailIds}::int[], ${revisionIds}::int[]) AS t(r, h, s, d, rv)
      ), updated AS (
        UPDATE "ResourceCurrentStatus" c SET "status" = t.s, "detailId" = t.d, "revisionId" = t.rv, "from" = ${at}::timestamptz(3)
        FROM t WHERE t.h AND c."resourceId" = t.r
        RETURNING 1
      ), inserted AS (
        INSERT INTO "ResourceCurrentStatus" ("resourceId", "status", "detailId", "revisionId", "from")
        SELECT r, s, d, rv, ${at}::timestamptz(3) FROM t WHERE NOT t.h
        ON CONFLICT ("resourceId") DO UPDATE SET "status" = excluded."status", "detailId" = excluded."detailId", "revisionId" = excluded."revisionId", "from" = excluded."from"
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM updated)::int AS updated, (SELECT count(*) FROM inserted)::int AS inserted`;
    const count = counts[0];
    if (count !== undefined && count.updated !== withCurrent) {
      // Only a process that changed the store outside the cluster lock could cause this.
      throw new Error(
        `resource current statuses changed under the snapshot: ${count.updated} updated of ${withCurrent}`,
      );
    }
    rows += (count?.updated ?? 0) + (count?.inserted ?? 0);
  }
  return rows;
}

/** True for a unique violation on `table`, as `pg` raises it or as Prisma's driver adapter wraps it. */
function isUniqueViolation(error: unknown, table: string): boolean {
  const pgError = error as { code?: unknown; table?: unknown } | null;
  if (pgError?.code === '23505') return pgError.table === table;
  const cause = (error as { meta?: { driverAdapterError?: { cause?: { kind?: string; table?: string } } } } | null)
    ?.meta?.driverAdapterError?.cause;
  return cause?.kind === 'UniqueConstraintViolation' && cause.table === table;
}

/** Change-log rows as far as the plan and the writes so far tell them (ids the plan did not name are looked up later). */
interface PreparedChanges {
  rows: { change: PlannedChange; phaseId: number | null; resourceId: number | null }[];
  /** Identities of the phases written, by id. */
  identities: Map<number, PhaseIdentity>;
  /** Detail id of the status each change opened, if known. */
  opened: (number | undefined)[];
  /** Per batch of {@link BATCH} rows, the array literals of every column but the detail's. */
  columns: ChangeColumns[];
}

interface ChangeColumns {
  phaseIds: string;
  scopes: string;
  resourceIds: string;
  fromStatuses: string;
  toStatuses: string;
}

function changeColumns(rows: PreparedChanges['rows']): ChangeColumns[] {
  const columns: ChangeColumns[] = [];
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    columns.push({
      phaseIds: intArray(batch.map((r) => r.phaseId)),
      scopes: textArray(batch.map((r) => r.change.scope)),
      resourceIds: intArray(batch.map((r) => r.resourceId)),
      fromStatuses: textArray(batch.map((r) => r.change.fromStatus)),
      toStatuses: textArray(batch.map((r) => r.change.toStatus)),
    });
  }
  return columns;
}

/** Every change's phase id, resource id and opened detail, from the plan and what the writes learnt; no I/O. */
function prepareChanges(plan: SnapshotPlan, known: KnownIds): PreparedChanges {
  const identities = new Map<number, PhaseIdentity>();
  for (const w of plan.phases) {
    const id = w.phaseId ?? known.phases.get(phaseKey(w.identity));
    if (id !== undefined) identities.set(id, w.identity);
  }
  const rows = plan.changes.map((c) => {
    const phaseId = phaseOf(c, known);
    return { change: c, phaseId, resourceId: resourceOf(c, phaseId, known) };
  });
  return { rows, identities, opened: rows.map((r) => openedDetail(r, known)), columns: changeColumns(rows) };
}

function phaseOf(c: PlannedChange, known: KnownIds): number | null {
  return c.phaseId ?? (c.phase === undefined ? null : (known.phases.get(phaseKey(c.phase)) ?? null));
}

function resourceOf(c: PlannedChange, phaseId: number | null, known: KnownIds): number | null {
  return (
    c.resourceId ??
    (c.resourceKey === undefined ? null : (known.resources.get(`${phaseId ?? 0}\u0000${c.resourceKey}`) ?? null))
  );
}

/**
 * The detail of the status a change opened, which carries its message; other changes (removals,
 * reachability) get a detail of their message alone.
 */
function openedDetail(
  { change, phaseId, resourceId }: PreparedChanges['rows'][number],
  known: KnownIds,
): number | undefined {
  if (change.toStatus === null || change.ownMessage === true) return undefined;
  if (change.scope === 'resource') return resourceId === null ? undefined : known.resourceDetails.get(resourceId);
  return change.scope === 'phase' && phaseId !== null ? known.phaseDetails.get(phaseId) : undefined;
}

async function appendChanges(
  tx: Tx,
  cluster: { id: number; name: string },
  plan: SnapshotPlan,
  known: KnownIds,
  prepared: PreparedChanges,
): Promise<StatusChange[]> {
  let { rows: rowsOf, opened, columns } = prepared;
  const { identities } = prepared;
  // Every change of a phase or resource comes with a write of its phase, so the plan or the writes
  // named their ids; any other plan's are looked up.
  const missing = rowsOf.filter(
    (r) =>
      (r.change.phase !== undefined && r.phaseId === null) ||
      (r.change.resourceKey !== undefined && r.resourceId === null),
  );
  if (missing.length > 0) {
    await lookUpMissingIds(tx, { clusterId: cluster.id, changes: missing.map((r) => r.change), known, identities });
    rowsOf = rowsOf.map((r) => {
      const phaseId = r.phaseId ?? phaseOf(r.change, known);
      return { change: r.change, phaseId, resourceId: r.resourceId ?? resourceOf(r.change, phaseId, known) };
    });
    opened = rowsOf.map((r) => openedDetail(r, known));
    columns = changeColumns(rowsOf);
  }
  const own = rowsOf.filter((_, n) => opened[n] === undefined);
  const messageIds =
    own.length === 0
      ? new Map<string, number>()
      : await storeDetails(tx, uniqueDetails(own.map((r) => messageDetail(r.change.message))));
  const detailIds = rowsOf.map((r, n) => opened[n] ?? (messageIds.get(messageDetail(r.change.message).hash) as number));
  // Taken last and held to commit: appends of different clusters commit in seq order. Under it
  // (every appender takes it) the snapshot reserves its changes' seqs in one go and writes them
  // itself: a nextval() per row would be a sequence call per change, and nothing needs reading back.
  const [reserved] = await tx.$queryRaw<{ last: bigint }[]>`
    SELECT setval(pg_get_serial_sequence('"StatusChange"', 'seq'), nextval(pg_get_serial_sequence('"StatusChange"', 'seq')) + ${rowsOf.length - 1}::bigint) AS "last"
    FROM (SELECT pg_advisory_xact_lock(${CHANGE_LOG_LOCK})) AS "locked"`;
  if (reserved === undefined) throw new Error('no seqs reserved for the change log');
  const first = BigInt(reserved.last) - BigInt(rowsOf.length - 1);
  let records: StatusChange[] = [];
  for (let i = 0; i < rowsOf.length; i += BATCH) {
    const batch = rowsOf.slice(i, i + BATCH);
    const column = columns[i / BATCH] as ChangeColumns;
    // The n-th row of the batch (unnest order) gets the batch's n-th seq.
    const inserting = tx.$executeRaw`
      INSERT INTO "StatusChange" ("seq", "at", "clusterId", "phaseId", "scope", "resourceId", "fromStatus", "toStatus", "detailId")
      SELECT ${String(first + BigInt(i))}::bigint + x.n - 1, ${plan.at}::timestamptz(3), ${cluster.id}::int, p, s, r, f, t, d FROM unnest(
        ${column.phaseIds}::int[], ${column.scopes}::text[], ${column.resourceIds}::int[],
        ${column.fromStatuses}::text[], ${column.toStatuses}::text[], ${intArray(detailIds.slice(i, i + BATCH))}::int[]
      ) WITH ORDINALITY AS x(p, s, r, f, t, d, n)`;
    const inserted = await (i > 0
      ? inserting
      : overlapping(inserting, () => {
          records = rowsOf.map((row, n) => writtenChange(row, first + BigInt(n), plan.at, cluster, identities));
        }));
    if (inserted !== batch.length) throw new Error('status change rows missing after insert');
  }
  return records;
}

/**
 * Runs `work` (synchronous, CPU only) while `statement` executes: one turn of the event loop lets
 * the client send the statement first, so Node's work and the database's overlap (2 cores here).
 */
async function overlapping<T>(statement: PromiseLike<T>, work: () => void): Promise<T> {
  const running = Promise.resolve(statement);
  // Awaited below; until then a failure must not count as unhandled.
  running.catch(() => undefined);
  await new Promise((resolve) => setImmediate(resolve));
  work();
  return running;
}

/*
 * PostgreSQL array literals ('{1,NULL,3}', '{"a","b"}') for the bulk statements' parameters:
 * Prisma passes one string through instead of converting each element of a 10,000-element array
 * (converting each element of a large array is a noticeable part of a bulk statement).
 */
function intArray(values: readonly (number | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : String(v))).join(',')}}`;
}

function boolArray(values: readonly boolean[]): string {
  return `{${values.map((v) => (v ? 't' : 'f')).join(',')}}`;
}

function textArray(values: readonly (string | null)[]): string {
  return `{${values.map(quoteElement).join(',')}}`;
}

/** One element of an array literal: quoted, with `"` and `\\` escaped (statuses and scopes have neither, so the common case skips the regexp). */
function quoteElement(value: string | null): string {
  if (value === null) return 'NULL';
  return value.includes('"') || value.includes('\\') ? `"${value.replace(/["\\]/g, '\\$&')}"` : `"${value}"`;
}

/** Ids of changes the writes did not name (none in plans from planSnapshot; kept for any other plan). */
/** Changes whose ids the writes did not learn, and where the ids looked up go. */
interface MissingIds {
  clusterId: number;
  changes: PlannedChange[];
  /** Takes the phase and resource ids found. */
  known: KnownIds;
  /** Takes the identities of the phases found, by id. */
  identities: Map<number, PhaseIdentity>;
}

async function lookUpMissingIds(tx: Tx, { clusterId, changes, known, identities }: MissingIds): Promise<void> {
  const { phases: phaseIds, resources: resourceIds } = known;
  if (changes.some((c) => c.phase !== undefined && !phaseIds.has(phaseKey(c.phase)))) {
    const rows = await tx.$queryRaw<{ id: number; sourceKind: string; namespace: string; name: string }[]>`
      SELECT "id", "sourceKind", "namespace", "name" FROM "Phase" WHERE "clusterId" = ${clusterId}::int`;
    for (const { id, ...identity } of rows) {
      phaseIds.set(phaseKey(identity), id);
      identities.set(id, identity);
    }
  }
  const refs = changes.flatMap((c) => {
    if (c.resourceKey === undefined || c.phase === undefined) return [];
    const phaseId = phaseIds.get(phaseKey(c.phase)) ?? 0;
    return resourceIds.has(`${phaseId}\u0000${c.resourceKey}`) ? [] : [{ phaseId, key: c.resourceKey }];
  });
  if (refs.length === 0) return;
  const rows = await tx.$queryRaw<{ id: number; phaseId: number; key: string }[]>`
    SELECT r."id", r."phaseId", r."key" FROM "Resource" r
    JOIN unnest(${refs.map((r) => r.phaseId)}::int[], ${refs.map((r) => r.key)}::text[]) AS k(p, key) ON r."phaseId" = k.p AND r."key" = k.key`;
  for (const row of rows) resourceIds.set(`${row.phaseId}\u0000${row.key}`, row.id);
}

/** A planned change as written under `seq`, with the ids and phase identity the writes settled. */
function writtenChange(
  { change, phaseId, resourceId }: PreparedChanges['rows'][number],
  seq: bigint,
  at: Date,
  cluster: { id: number; name: string },
  identities: ReadonlyMap<number, PhaseIdentity>,
): StatusChange {
  return {
    seq,
    at,
    cluster: cluster.name,
    clusterId: cluster.id,
    phaseId,
    phase: phaseId === null ? null : (identities.get(phaseId) ?? null),
    scope: change.scope,
    // As the log reads back: it stores the resource's id, so a resource the writes could not name has no key.
    resourceKey: resourceId === null ? null : (change.resourceKey ?? null),
    fromStatus: change.fromStatus,
    toStatus: change.toStatus,
    message: change.message,
  };
}
