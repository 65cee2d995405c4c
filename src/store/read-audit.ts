/**
 * Reads what an audit report needs for a time range, in a fixed number of statements whatever the
 * number of phases: phases, their status intervals overlapping the range (with what caused each),
 * cluster reachability, manifest changes and object revision changes in the range.
 */
import type { AuditInput, ManifestChange, PhaseHistory } from '../reports/index.ts';
import { isResourceStatus } from '../status/types.ts';
import { observationStateOf } from '../history/observation.ts';
import type { Db } from './db.ts';
import { accessConditions } from './access-rule.ts';
import type { AccessScope } from './read-types.ts';
import { readStatusCauses } from './read-audit-causes.ts';
import { sqlOn, type RawTx } from './sql-transaction.ts';
import { sql, join } from './sql.ts';

/** Which phases a report asks for; empty lists mean all. The caller's restrictions are apart ({@link readAuditInput}). */
export interface AuditSelection {
  clusters: string[];
  namespaces: string[];
  /** Phase names (any cluster/namespace). */
  phases: string[];
}

interface Entry {
  group?: string;
  kind?: string;
  namespace?: string;
  name?: string;
}

const entryKey = (e: Entry) => `${e.group ?? ''}/${e.kind ?? ''}/${e.namespace ?? ''}/${e.name ?? ''}`;

function entriesOf(value: unknown): string[] {
  return Array.isArray(value) ? (value as Entry[]).map(entryKey) : [];
}

/**
 * Build the report input for [from, to) from the store. `to` must not be in the future. `access`
 * is what the caller may see: it narrows the selection as one more condition, so a selection
 * outside it matches no phase (an empty report), as every other read treats restrictions.
 */
export async function readAuditInput(
  db: Db,
  range: { from: Date; to: Date },
  selection: AuditSelection,
  access: AccessScope,
): Promise<AuditInput> {
  const reads = sqlOn(db);
  const { from, to } = range;
  const columns = { cluster: sql`c."name"`, namespace: sql`p."namespace"` };
  const where = [
    // The selection's lists mean what a scope's do (empty: all), so it narrows as a second scope.
    ...accessConditions(selection, columns),
    ...accessConditions(access, columns),
    ...(selection.phases.length > 0 ? [sql`p."name" = ANY(${selection.phases}::text[])`] : []),
    sql`p."firstSeenAt" < ${to}::timestamptz(3)`,
    sql`(p."deletedAt" IS NULL OR p."deletedAt" > ${from}::timestamptz(3))`,
  ];
  const phases = (
    await reads.$queryRaw<
      {
        id: number;
        clusterId: number;
        sourceKind: string;
        namespace: string;
        name: string;
        clusterName: string;
        tickLastSeenAt: Date | null;
        snapshotIntervalMs: number | null;
        retiredAt: Date | null;
      }[]
    >`
      SELECT p."id", p."clusterId", p."sourceKind", p."namespace", p."name", c."name" AS "clusterName", c."tickLastSeenAt", c."snapshotIntervalMs", c."retiredAt"
      FROM "Phase" p JOIN "Cluster" c ON c."id" = p."clusterId"
      WHERE ${join(where, ' AND ')}
      ORDER BY p."clusterId", p."namespace", p."name"`
  ).map(({ clusterName, tickLastSeenAt, snapshotIntervalMs, retiredAt, ...phase }) => ({
    ...phase,
    cluster: { name: clusterName, tickLastSeenAt, snapshotIntervalMs, retiredAt },
  }));
  const phaseIds = phases.map((p) => p.id);
  // A current status is vouched for only while its cluster was observed (src/history/observation.ts):
  // from then on it counts as unobserved, as the next tick will record it.
  const unobservedFrom = new Map<number, Date | null>();
  for (const p of phases) {
    const state = observationStateOf(
      {
        lastObservedAt: p.cluster.tickLastSeenAt,
        snapshotIntervalMs: p.cluster.snapshotIntervalMs,
        retiredAt: p.cluster.retiredAt,
      },
      range.to,
    );
    if (state.state !== 'OBSERVED') unobservedFrom.set(p.id, state.since ?? new Date(0));
  }
  const clusterIds = [...new Set(phases.map((p) => p.clusterId))];

  const [intervals, reachability, manifestIntervals, revisions, conditionIntervals] = await Promise.all([
    // Ended intervals overlapping the range, then current statuses begun before its end.
    Promise.all([
      reads.$queryRaw<
        {
          phaseId: number;
          status: string;
          from: Date;
          to: Date;
          stale: boolean;
          unobserved: boolean;
          detailId: number;
        }[]
      >`
        SELECT "phaseId", "status", "from", "to", "stale", "unobserved", "detailId" FROM "PhaseStatusInterval"
        WHERE "phaseId" = ANY(${phaseIds}::int[]) AND "from" < ${to}::timestamptz(3) AND "to" > ${from}::timestamptz(3)`,
      reads.$queryRaw<{ phaseId: number; status: string; from: Date; stale: boolean; detailId: number }[]>`
        SELECT "phaseId", "status", "from", "stale", "detailId" FROM "PhaseCurrentStatus"
        WHERE "phaseId" = ANY(${phaseIds}::int[]) AND "from" < ${to}::timestamptz(3)`,
    ]).then(([ended, current]) =>
      [...ended, ...current.flatMap((c) => openIntervals(c, unobservedFrom.get(c.phaseId) ?? null))].sort(
        (a, b) => a.phaseId - b.phaseId || a.from.getTime() - b.from.getTime(),
      ),
    ),
    reads.$queryRaw<{ clusterId: number; reachable: boolean; from: Date; to: Date | null }[]>`
      SELECT "clusterId", "reachable", "from", "to" FROM "ClusterReachability"
      WHERE "clusterId" = ANY(${clusterIds}::int[]) AND "from" < ${to}::timestamptz(3) AND ("to" IS NULL OR "to" > ${from}::timestamptz(3))
      ORDER BY "clusterId", "from"`,
    // One interval before the range too, so the first change in the range has something to diff against.
    reads.$queryRaw<{ phaseId: number; from: Date; entries: unknown }[]>`
      SELECT pm."phaseId", pm."from", m."entries" FROM "PhaseManifest" pm JOIN "Manifest" m ON m."id" = pm."manifestId"
      WHERE pm."phaseId" = ANY(${phaseIds}::int[]) AND pm."from" < ${to}::timestamptz(3) AND (pm."to" IS NULL OR pm."to" >= ${from}::timestamptz(3))
      ORDER BY pm."phaseId", pm."from"`,
    // Ended intervals and current statuses of the phases' resources, per resource in time order.
    readResourceRevisions(reads, phaseIds, range),
    // Conditions from checks: ended intervals overlapping the range, then current ones begun before its end.
    Promise.all([
      reads.$queryRaw<{ phaseId: number; type: string; status: string; from: Date; to: Date }[]>`
        SELECT "phaseId", "type", "status", "from", "to" FROM "PhaseConditionInterval"
        WHERE "phaseId" = ANY(${phaseIds}::int[]) AND "from" < ${to}::timestamptz(3) AND "to" > ${from}::timestamptz(3)`,
      reads.$queryRaw<{ phaseId: number; type: string; status: string; from: Date }[]>`
        SELECT "phaseId", "type", "status", "from" FROM "PhaseConditionCurrent"
        WHERE "phaseId" = ANY(${phaseIds}::int[]) AND "from" < ${to}::timestamptz(3)`,
    ]).then(([ended, current]) => [...ended, ...current.map((c) => ({ ...c, to: null }))]),
  ]);

  const causes = await readStatusCauses(reads, intervals, revisions);

  const byPhase = new Map<number, PhaseHistory>();
  for (const p of phases) {
    byPhase.set(p.id, {
      id: String(p.id),
      cluster: p.cluster.name,
      namespace: p.namespace,
      name: p.name,
      source: p.sourceKind,
      statusIntervals: [],
      manifestChanges: [],
    });
  }
  intervals.forEach((i, n) => {
    if (!isResourceStatus(i.status)) return;
    byPhase.get(i.phaseId)?.statusIntervals.push({
      status: i.status,
      from: i.from,
      to: i.to,
      stale: i.stale,
      unobserved: i.unobserved,
      cause: causes[n] ?? null,
    });
  });

  for (const c of conditionIntervals) {
    if (c.status !== 'True' && c.status !== 'False' && c.status !== 'Unknown') continue;
    const history = byPhase.get(c.phaseId);
    if (history) (history.conditionIntervals ??= []).push({ type: c.type, status: c.status, from: c.from, to: c.to });
  }

  const changes = new Map<number, Map<number, ManifestChange>>();
  const changeAt = (phaseId: number, at: Date): ManifestChange => {
    const perPhase = changes.get(phaseId) ?? new Map<number, ManifestChange>();
    changes.set(phaseId, perPhase);
    let change = perPhase.get(at.getTime());
    if (!change)
      perPhase.set(
        at.getTime(),
        (change = { at, inventoryChanged: false, added: [], removed: [], revisionsChanged: [] }),
      );
    return change;
  };
  for (let n = 1; n < manifestIntervals.length; n++) {
    const before = manifestIntervals[n - 1];
    const after = manifestIntervals[n];
    if (!before || !after || before.phaseId !== after.phaseId || after.from < range.from) continue;
    const was = new Set(entriesOf(before.entries));
    const now = new Set(entriesOf(after.entries));
    const change = changeAt(after.phaseId, after.from);
    // A new manifest version, whatever its entries: this is what the `manifests` history lists.
    change.inventoryChanged = true;
    change.added.push(...[...now].filter((k) => !was.has(k)));
    change.removed.push(...[...was].filter((k) => !now.has(k)));
  }
  for (let n = 1; n < revisions.length; n++) {
    const before = revisions[n - 1];
    const after = revisions[n];
    if (!before || !after || before.phaseId !== after.phaseId || before.resourceKey !== after.resourceKey) continue;
    if (
      after.from < range.from ||
      before.revisionId === after.revisionId ||
      after.revisionId === null ||
      before.revisionId === null
    )
      continue;
    changeAt(after.phaseId, after.from).revisionsChanged.push(after.resourceKey);
  }
  for (const [phaseId, perPhase] of changes) {
    const history = byPhase.get(phaseId);
    if (history) history.manifestChanges = [...perPhase.values()].sort((a, b) => a.at.getTime() - b.at.getTime());
  }

  const clusterNames = new Map(phases.map((p) => [p.clusterId, p.cluster.name]));
  const clusters = clusterIds.map((id) => ({
    name: clusterNames.get(id) as string,
    reachability: reachability
      .filter((r) => r.clusterId === id)
      .map((r) => ({ reachable: r.reachable, from: r.from, to: r.to })),
  }));
  return { range, clusters, phases: [...byPhase.values()] };
}

/** A current status as the report's intervals: open, or ended where its cluster's observation ended and unobserved after. */
function openIntervals<T extends { phaseId: number; status: string; from: Date; stale: boolean }>(
  current: T,
  unobservedFrom: Date | null,
): (T & { to: Date | null; unobserved: boolean })[] {
  if (unobservedFrom === null) return [{ ...current, to: null, unobserved: false }];
  if (unobservedFrom <= current.from) return [{ ...current, to: null, unobserved: true }];
  return [
    { ...current, to: unobservedFrom, unobserved: false },
    { ...current, from: unobservedFrom, to: null, unobserved: true },
  ];
}

/** Each resource's revision and status over `range` (ended intervals and current statuses), per phase and resource in time order. */
async function readResourceRevisions(
  reads: RawTx,
  phaseIds: number[],
  range: { from: Date; to: Date },
): Promise<
  { phaseId: number; resourceKey: string; revisionId: number | null; status: string; detailId: number; from: Date }[]
> {
  const resources = await reads.$queryRaw<
    { id: number; phaseId: number; key: string }[]
  >`SELECT "id", "phaseId", "key" FROM "Resource" WHERE "phaseId" = ANY(${phaseIds}::int[])`;
  const byId = new Map(resources.map((r) => [r.id, r]));
  const ids = resources.map((r) => r.id);
  type Row = { resourceId: number; revisionId: number | null; status: string; detailId: number; from: Date };
  const [ended, current] = await Promise.all([
    reads.$queryRaw<Row[]>`
      SELECT "resourceId", "revisionId", "status", "detailId", "from" FROM "ResourceStatusInterval"
      WHERE "resourceId" = ANY(${ids}::int[]) AND "from" < ${range.to}::timestamptz(3) AND "to" >= ${range.from}::timestamptz(3)`,
    reads.$queryRaw<Row[]>`
      SELECT "resourceId", "revisionId", "status", "detailId", "from" FROM "ResourceCurrentStatus"
      WHERE "resourceId" = ANY(${ids}::int[]) AND "from" < ${range.to}::timestamptz(3)`,
  ]);
  return [...ended, ...current]
    .map((r) => {
      const resource = byId.get(r.resourceId) as { phaseId: number; key: string };
      return {
        phaseId: resource.phaseId,
        resourceKey: resource.key,
        revisionId: r.revisionId,
        status: r.status,
        detailId: r.detailId,
        from: r.from,
      };
    })
    .sort(
      (a, b) =>
        a.phaseId - b.phaseId ||
        (a.resourceKey < b.resourceKey ? -1 : a.resourceKey > b.resourceKey ? 1 : a.from.getTime() - b.from.getTime()),
    );
}
