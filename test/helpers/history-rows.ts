/**
 * Seeds history rows straight into the store's tables (for read-side tests that need exact times):
 * status details content-addressed as the snapshot writer stores them, resources by id.
 */
import { messageDetail, phaseDetail, resourceDetail, type StatusDetailDoc } from '../../src/history/status-detail.ts';
import type { ObservedResource } from '../../src/history/types.ts';
import type { Db } from '../../src/store/prisma.ts';

async function detailId(db: Db, doc: StatusDetailDoc): Promise<number> {
  await db.$executeRaw`INSERT INTO "StatusDetail" ("hash", "body") VALUES (${doc.hash}, ${JSON.stringify(doc.body)}::jsonb) ON CONFLICT ("hash") DO NOTHING`;
  const rows = await db.$queryRaw<{ id: number }[]>`SELECT "id" FROM "StatusDetail" WHERE "hash" = ${doc.hash}`;
  return rows[0]?.id as number;
}

/** The id of resource `key` of a phase, created when new. */
export async function resourceId(db: Db, phaseId: number, key: string): Promise<number> {
  const row = await db.resource.upsert({
    where: { phaseId_key: { phaseId, key } },
    create: { phaseId, key },
    update: {},
    select: { id: true },
  });
  return row.id;
}

/** A phase status interval to seed. */
export interface PhaseIntervalSeed {
  phaseId: number;
  status: string;
  from: Date;
  to: Date | null;
  message?: string;
  summary?: Record<string, number>;
  conditions?: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[];
  worstResource?: string | null;
  stale?: boolean;
  staleSince?: Date | null;
}

/** Inserts a phase status interval (`to` null: the phase's current status). */
export async function insertPhaseInterval(db: Db, seed: PhaseIntervalSeed): Promise<void> {
  const { doc, conditionTimes } = phaseDetail({
    status: seed.status as never,
    message: seed.message ?? '',
    summary: (seed.summary ?? {}) as never,
    conditions: (seed.conditions ?? []) as never,
    ...(seed.worstResource ? { worstResource: seed.worstResource } : {}),
    stale: seed.stale ?? false,
  });
  const data = {
    phaseId: seed.phaseId,
    status: seed.status,
    detailId: await detailId(db, doc),
    conditionTimes: conditionTimes.map((t) => new Date(t ?? 0)),
    stale: seed.stale ?? false,
    staleSince: seed.staleSince ?? null,
    from: seed.from,
  };
  // The open interval is the phase's current status; ended ones are intervals.
  if (seed.to === null)
    await db.phaseCurrentStatus.create({
      data: { ...data, since: await runStart(db, seed.phaseId, seed.status, seed.from) },
    });
  else await db.phaseStatusInterval.create({ data: { ...data, to: seed.to } });
}

/** Where a run of `status` reaching `from` began: back over ended intervals of that status with no gap. */
async function runStart(db: Db, phaseId: number, status: string, from: Date): Promise<Date> {
  const ended = await db.phaseStatusInterval.findMany({
    where: { phaseId, from: { lt: from } },
    orderBy: { from: 'desc' },
  });
  let since = from;
  for (const interval of ended) {
    if (interval.to.getTime() !== since.getTime() || interval.status !== status) break;
    since = interval.from;
  }
  return since;
}

/** A resource status interval to seed. */
export interface ResourceIntervalSeed {
  phaseId: number;
  key: string;
  status: string;
  from: Date;
  to: Date | null;
  message?: string;
  reason?: string;
  presence?: string;
  revisionId?: number | null;
}

/** Inserts a resource status interval (creating the resource when new; `to` null: its current status). */
export async function insertResourceInterval(db: Db, seed: ResourceIntervalSeed): Promise<void> {
  const observed = {
    key: seed.key,
    status: seed.status,
    message: seed.message ?? '',
    conditions: [],
    presence: seed.presence ?? 'Present',
    ...(seed.reason ? { reason: seed.reason } : {}),
  } as unknown as ObservedResource;
  const data = {
    resourceId: await resourceId(db, seed.phaseId, seed.key),
    status: seed.status,
    detailId: await detailId(db, resourceDetail(observed)),
    revisionId: seed.revisionId ?? null,
    from: seed.from,
  };
  // The open interval is the resource's current status; ended ones are intervals.
  if (seed.to === null) await db.resourceCurrentStatus.create({ data });
  else await db.resourceStatusInterval.create({ data: { ...data, to: seed.to } });
}

/** A change-log row to seed. */
export interface StatusChangeSeed {
  clusterId: number;
  phaseId: number | null;
  scope: string;
  at: Date;
  fromStatus: string | null;
  toStatus: string | null;
  resourceKey?: string | null;
  /** For `scope: 'condition'`: the condition's type. */
  conditionType?: string | null;
  message?: string;
}

/** Appends a change-log row; returns its seq. */
export async function insertStatusChange(db: Db, seed: StatusChangeSeed): Promise<bigint> {
  const resource =
    seed.resourceKey && seed.phaseId !== null ? await resourceId(db, seed.phaseId, seed.resourceKey) : null;
  const row = await db.statusChange.create({
    data: {
      clusterId: seed.clusterId,
      phaseId: seed.phaseId,
      scope: seed.scope,
      at: seed.at,
      fromStatus: seed.fromStatus,
      toStatus: seed.toStatus,
      resourceId: resource,
      conditionType: seed.conditionType ?? null,
      detailId: await detailId(db, messageDetail(seed.message ?? '')),
    },
    select: { seq: true },
  });
  return row.seq;
}
