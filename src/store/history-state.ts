/**
 * Reads what the history store holds about one cluster (its open intervals, its last observation
 * tick, its reachability) as the history core's domain types. Runs inside the snapshot transaction.
 */
import type { PhaseCondition } from '../status/phase-summary.ts';
import { phaseKey } from '../history/plan-snapshot.ts';
import type {
  ClusterObservation,
  ObservedPhase,
  ObservedResource,
  PhaseIdentity,
  StoredClusterState,
  StoredPhase,
} from '../history/types.ts';
import { withConditionTimes } from '../history/status-detail.ts';
import { canonicalJson } from '../history/canonical-hash.ts';
import { digestOfHex } from '../history/fingerprints.ts';
import { appliedText, readApplied, sameApplied, type AppliedStatus } from '../history/applied.ts';
import { createDateIntern, createStatusIntern, createTextIntern, keptCondition } from '../history/intern.ts';
import type { RawTx } from './sql-transaction.ts';
import { sql, empty } from './sql.ts';

type Tx = RawTx;

/** The cluster row a snapshot locks, with the cluster's current observation run. */
export interface LockedCluster {
  id: number;
  lastTickAt: Date | null;
  lastGoodReadAt: Date | null;
  tickOutcome: string | null;
  tickStateHash: string | null;
  /** A live snapshot wrote during the current run: the store no longer matches `tickStateHash`. */
  tickDiverged: boolean;
  tickFirstSeenAt: Date | null;
  tickLastSeenAt: Date | null;
  tickCount: number;
  /** The version of the cluster's stored state, new with every snapshot written (see Cluster.stateVersion). */
  stateVersion: number;
  /** The interval its workers snapshot it at, when one recorded it. */
  snapshotIntervalMs: number | null;
}

/**
 * The cluster's current observation run as planning compares with it: none when there is none, or
 * when a live snapshot wrote during it (what is stored no longer matches the run's hash, so no
 * tick may extend it).
 */
export function currentRun(cluster: LockedCluster): StoredClusterState['lastTick'] {
  if (cluster.tickDiverged || cluster.tickOutcome === null || cluster.tickStateHash === null) return null;
  return { outcome: cluster.tickOutcome, stateHash: cluster.tickStateHash };
}

/**
 * Creates the cluster row if needed and locks it until the transaction ends, so two snapshots of
 * the same cluster never write at once (whatever process they run in). One round trip once the
 * row exists: the insert is sent only when the lock found no row.
 */
export async function lockCluster(tx: Tx, name: string): Promise<LockedCluster> {
  const existing = await selectForUpdate(tx, name);
  if (existing !== undefined) return existing;
  await tx.$executeRaw`INSERT INTO "Cluster" ("name") VALUES (${name}) ON CONFLICT ("name") DO NOTHING`;
  const row = await selectForUpdate(tx, name);
  if (row === undefined) throw new Error(`cluster row for ${name} vanished inside its transaction`);
  return row;
}

async function selectForUpdate(tx: Tx, name: string): Promise<LockedCluster | undefined> {
  const rows = await tx.$queryRaw<LockedCluster[]>`
    SELECT "id", "lastTickAt", "lastGoodReadAt", "tickOutcome", "tickStateHash", "tickDiverged", "tickFirstSeenAt", "tickLastSeenAt", "tickCount", "stateVersion", "snapshotIntervalMs"
    FROM "Cluster" WHERE "name" = ${name} FOR UPDATE`;
  return rows[0];
}

/**
 * Loads the current state of a locked cluster (current-status rows only: its cost does not grow
 * with history); with `only`, just those phases (a live snapshot's), so recording a change of
 * one phase does not read the whole cluster. With `observation`, the one about to be planned
 * against the state, each phase's manifest hash and each resource's key and revision digest are
 * the observation's own strings where they are equal (see {@link observedResources}).
 */
export async function loadClusterState(
  tx: Tx,
  cluster: LockedCluster,
  only?: readonly PhaseIdentity[],
  observation?: ClusterObservation,
): Promise<StoredClusterState> {
  const clusterId = cluster.id;
  const ids = only === undefined ? undefined : await findPhaseIds(tx, clusterId, only);
  const inPhases = ids === undefined ? empty : sql`AND p."id" = ANY(${ids}::int[])`;
  const [phases, statuses, resources, openReachability] = await Promise.all([
    tx.$queryRaw<PhaseRow[]>`
      SELECT p."id", p."sourceKind", p."namespace", p."name", p."inventoryId", p."labels", p."deletedAt", pm."id" AS "manifestIntervalId", pm."hash" AS "manifestHash"
      FROM "Phase" p
      LEFT JOIN LATERAL (
        SELECT o."id", m."hash" FROM "PhaseManifest" o JOIN "Manifest" m ON m."id" = o."manifestId"
        WHERE o."phaseId" = p."id" AND o."to" IS NULL ORDER BY o."id" LIMIT 1
      ) pm ON true
      WHERE p."clusterId" = ${clusterId}::int ${inPhases}
      ORDER BY p."id"`,
    tx.$queryRaw<OpenPhaseRow[]>`
      SELECT s."phaseId", s."from", s."since", s."status", s."stale", s."conditionTimes", d."body"
      FROM "Phase" p
      JOIN "PhaseCurrentStatus" s ON s."phaseId" = p."id"
      JOIN "StatusDetail" d ON d."id" = s."detailId"
      WHERE p."clusterId" = ${clusterId} ${inPhases}`,
    tx.$queryRaw<OpenResourceRow[]>`
      SELECT r."id" AS "resourceId", r."phaseId", r."key", i."from", i."status",
             d."body" ->> 'reason' AS "reason", coalesce(d."body" ->> 'message', '') AS "message", coalesce(d."body" ->> 'presence', '') AS "presence",
             (d."body" ->> 'generation')::bigint AS "generation", (d."body" ->> 'observedGeneration')::bigint AS "observedGeneration",
             d."body" -> 'customHealth' ->> 'health' AS "customHealth", d."body" -> 'applied' AS "applied", rv."hash" AS "revisionHash", i."revisionId"
      FROM "Phase" p
      JOIN "Resource" r ON r."phaseId" = p."id"
      JOIN "ResourceCurrentStatus" i ON i."resourceId" = r."id"
      JOIN "StatusDetail" d ON d."id" = i."detailId"
      LEFT JOIN "ObjectRevision" rv ON rv."id" = i."revisionId"
      WHERE p."clusterId" = ${clusterId} AND p."deletedAt" IS NULL ${inPhases}`,
    tx.$queryRaw<{ id: number; reachable: boolean; errorKind: string | null }[]>`
      SELECT "id", "reachable", "errorKind" FROM "ClusterReachability" WHERE "clusterId" = ${clusterId}::int AND "to" IS NULL ORDER BY "from" DESC LIMIT 1`,
  ]);
  const reachability = openReachability[0] ?? null;
  const statusOf = new Map(statuses.map((s) => [s.phaseId, s]));
  // A worker may keep this state between snapshots, and the driver makes a string and a Date per
  // column of every row.
  const text = createTextIntern();
  const moment = createDateIntern();
  const byPhase = new Map<number, StoredPhase>();
  const observedPhases =
    observation?.outcome === 'ok' ? new Map(observation.phases.map((p) => [phaseKey(p.identity), p])) : undefined;
  for (const phase of phases) {
    const status = statusOf.get(phase.id);
    const body = status === undefined ? {} : readBody(status.body);
    const message = typeof body['message'] === 'string' ? body['message'] : '';
    const identity = { sourceKind: phase.sourceKind, namespace: phase.namespace, name: phase.name };
    // The observation's values where they are equal: its parsed inventory holds them from tick to
    // tick anyway, so a kept state sharing them holds no copy of its own.
    const seen = observedPhases?.get(phaseKey(identity));
    const labels = phase.labels as Record<string, string>;
    byPhase.set(phase.id, {
      id: phase.id,
      identity: seen?.identity ?? identity,
      inventoryId: sameString(phase.inventoryId, seen?.inventoryId),
      // Equal as planning compares them (its "labels moved" test), so sharing never hides a change.
      labels: seen !== undefined && canonicalJson(labels) === canonicalJson(seen.labels) ? seen.labels : labels,
      deleted: phase.deletedAt !== null,
      manifest:
        phase.manifestIntervalId === null || phase.manifestHash === null
          ? null
          : { intervalId: phase.manifestIntervalId, hash: sameString(phase.manifestHash, seen?.manifest.hash) },
      status:
        status === undefined
          ? null
          : {
              from: moment(status.from),
              since: moment(status.since),
              status: status.status,
              message,
              summary: (body['summary'] ?? {}) as Record<string, number>,
              conditions: withConditionTimes((body['conditions'] ?? []) as PhaseCondition[], status.conditionTimes, {
                reason: status.status,
                message,
              }).map((c) => keptCondition(c, text)),
              worstResource: typeof body['worstResource'] === 'string' ? body['worstResource'] : null,
              stale: status.stale,
            },
      resources: [],
    });
  }
  const status = createStatusIntern(text);
  const applied = createAppliedIntern();
  const observed = observedResources(byPhase.values(), observedPhases);
  for (const r of resources) {
    const seen = observed.get(r.phaseId)?.get(r.key);
    const digest = r.revisionHash === null ? null : digestOfHex(r.revisionHash);
    byPhase.get(r.phaseId)?.resources.push({
      resourceId: r.resourceId,
      from: moment(r.from),
      resourceKey: seen?.key ?? r.key,
      recorded: status({
        status: r.status,
        reason: r.reason,
        message: r.message,
        presence: r.presence,
        customHealth: r.customHealth,
        applied: applied(r.applied, seen?.applied),
      }),
      generation: r.generation === null ? null : Number(r.generation),
      observedGeneration: r.observedGeneration === null ? null : Number(r.observedGeneration),
      revisionDigest: digest !== null && seen?.revision?.digest === digest ? seen.revision.digest : digest,
      revisionId: r.revisionId,
    });
  }
  // A worker may keep the state: arrays of exactly their length (grown by push, each would keep
  // room for 16 more resources).
  for (const phase of byPhase.values()) phase.resources = phase.resources.slice();
  return {
    clusterId,
    lastGoodReadAt: cluster.lastGoodReadAt,
    reachability:
      reachability === null
        ? null
        : { id: reachability.id, reachable: reachability.reachable, errorKind: reachability.errorKind },
    lastTick: currentRun(cluster),
    phases: [...byPhase.values()],
  };
}

/**
 * Reads stored applier statuses, one copy of each value: the observation's own (shared by its
 * parsed inventories) when equal, else one per distinct value among the rows.
 */
function createAppliedIntern(): (stored: unknown, observed: AppliedStatus | undefined) => AppliedStatus | null {
  const seen = new Map<string, AppliedStatus>();
  return (stored, observed) => {
    const value = readApplied(stored);
    if (value === null) return null;
    if (sameApplied(value, observed)) return observed as AppliedStatus;
    const key = appliedText(value);
    const known = seen.get(key);
    if (known !== undefined) return known;
    seen.set(key, value);
    return value;
  };
}

/** `stored`, or `observed` when equal: the observation's string is the one the worker's memos hold. */
function sameString(stored: string, observed: string | undefined): string {
  return observed === stored ? observed : stored;
}

/**
 * The observed resources of each stored phase by key (none without an observation). A watch-mode
 * worker holds each resource's key and revision digest from tick to tick (src/kube/ref-keys.ts, its
 * watch cache's records): a state it keeps that shares them holds less per resource than
 * one holding the driver's copies, until the resource changes.
 */
function observedResources(
  phases: Iterable<StoredPhase>,
  observed: ReadonlyMap<string, ObservedPhase> | undefined,
): Map<number, Map<string, ObservedResource>> {
  const byPhase = new Map<number, Map<string, ObservedResource>>();
  if (observed === undefined) return byPhase;
  for (const phase of phases) {
    const resources = observed.get(phaseKey(phase.identity))?.resources;
    if (resources !== undefined) byPhase.set(phase.id, new Map(resources.map((r) => [r.key, r])));
  }
  return byPhase;
}

/** Ids of the stored phases among `identities` (phases not stored yet have none). */
async function findPhaseIds(tx: Tx, clusterId: number, identities: readonly PhaseIdentity[]): Promise<number[]> {
  if (identities.length === 0) return [];
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT p."id" FROM "Phase" p
    JOIN unnest(${identities.map((i) => i.sourceKind)}::text[], ${identities.map((i) => i.namespace)}::text[], ${identities.map((i) => i.name)}::text[]) AS k(s, ns, n)
      ON p."sourceKind" = k.s AND p."namespace" = k.ns AND p."name" = k.n
    WHERE p."clusterId" = ${clusterId}`;
  return rows.map((r) => r.id);
}

function readBody(value: unknown): Record<string, unknown> {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
}

interface PhaseRow {
  id: number;
  sourceKind: string;
  namespace: string;
  name: string;
  inventoryId: string;
  labels: unknown;
  deletedAt: Date | null;
  manifestIntervalId: number | null;
  manifestHash: string | null;
}

interface OpenPhaseRow {
  phaseId: number;
  from: Date;
  since: Date;
  status: string;
  stale: boolean;
  conditionTimes: (Date | string | null)[] | null;
  body: unknown;
}

interface OpenResourceRow {
  resourceId: number;
  phaseId: number;
  key: string;
  from: Date;
  status: string;
  reason: string | null;
  message: string;
  presence: string;
  generation: bigint | number | null;
  observedGeneration: bigint | number | null;
  customHealth: string | null;
  applied: unknown;
  revisionHash: string | null;
  revisionId: number | null;
}

/**
 * Records that the locked cluster went unobserved from `gapFrom` until the tick at `at` (see
 * src/history/observation.ts): each phase's current status ends at `gapFrom`, the span
 * [gapFrom, at) becomes an interval of the same status marked stale and unobserved, and the current
 * status starts again at `at` (its run too: nothing vouched for it in between). The snapshot then
 * diffs the observation against these rows as usual. One statement.
 */
export async function recordUnobservedGap(tx: Tx, cluster: LockedCluster, gapFrom: Date, at: Date): Promise<number> {
  return tx.$executeRaw`
    WITH cur AS (
      SELECT c."phaseId", c."status", c."detailId", c."conditionTimes", c."stale", c."staleSince", c."from"
      FROM "PhaseCurrentStatus" c JOIN "Phase" p ON p."id" = c."phaseId"
      WHERE p."clusterId" = ${cluster.id}::int AND c."from" < ${at}::timestamptz(3)
    ), ended AS (
      INSERT INTO "PhaseStatusInterval" ("phaseId", "status", "detailId", "conditionTimes", "stale", "staleSince", "unobserved", "from", "to")
      SELECT "phaseId", "status", "detailId", "conditionTimes", "stale", "staleSince", false, "from", ${gapFrom}::timestamptz(3) FROM cur WHERE "from" < ${gapFrom}::timestamptz(3)
      UNION ALL
      SELECT "phaseId", "status", "detailId", "conditionTimes", true, coalesce("staleSince", ${cluster.lastGoodReadAt}::timestamptz(3)), true,
             greatest("from", ${gapFrom}::timestamptz(3)), ${at}::timestamptz(3) FROM cur
      ON CONFLICT ("phaseId", "from") DO NOTHING
    )
    UPDATE "PhaseCurrentStatus" c SET "from" = ${at}::timestamptz(3), "since" = ${at}::timestamptz(3) FROM cur WHERE c."phaseId" = cur."phaseId"`;
}
