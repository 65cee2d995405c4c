/**
 * What caused each status of a phase, for the audit report: the phase interval's detail names its
 * worst member resource, and that resource's interval at the same moment says its own status and
 * message. Two statements whatever the number of intervals (the phases' details, then the worst
 * resources' details).
 */
import type { StatusCause } from '../reports/index.ts';
import { isResourceStatus } from '../status/types.ts';
import type { RawTx } from './sql-transaction.ts';
import { readJson } from './read-json.ts';

/** A phase status interval as read for the report, with the detail that names its worst resource. */
export interface PhaseIntervalRow {
  phaseId: number;
  status: string;
  from: Date;
  detailId: number;
}

/** A resource status interval of one of the phases, per phase and resource in time order. */
export interface ResourceIntervalRow {
  phaseId: number;
  resourceKey: string;
  status: string;
  detailId: number;
  from: Date;
}

type DetailBody = Record<string, unknown>;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The cause of each interval of `intervals` that is not Current (same order; `null` where the
 * detail names no worst resource). The worst resource's message is its interval's message (its
 * reason when it has none); when its interval is not among `resources`, the phase's message, which
 * names the resource too, stands in.
 */
export async function readStatusCauses(
  sql: RawTx,
  intervals: readonly PhaseIntervalRow[],
  resources: readonly ResourceIntervalRow[],
): Promise<(StatusCause | null)[]> {
  const phaseDetails = await readDetails(
    sql,
    intervals.filter((i) => i.status !== 'Current').map((i) => i.detailId),
  );
  const byResource = new Map<string, ResourceIntervalRow[]>();
  for (const r of resources) {
    const key = `${r.phaseId}\u0000${r.resourceKey}`;
    byResource.set(key, [...(byResource.get(key) ?? []), r]);
  }
  const found = intervals.map((interval) => {
    if (interval.status === 'Current') return null;
    const body = phaseDetails.get(interval.detailId);
    const worst = text(body?.['worstResource']);
    if (worst === '') return null;
    // The resource's interval under way when the phase's began: one snapshot writes both.
    const resource =
      (byResource.get(`${interval.phaseId}\u0000${worst}`) ?? []).findLast((r) => r.from <= interval.from) ?? null;
    return { worst, phaseMessage: text(body?.['message']), resource };
  });
  const resourceDetails = await readDetails(
    sql,
    found.flatMap((f) => (f?.resource ? [f.resource.detailId] : [])),
  );
  return found.map((f) => {
    if (f === null) return null;
    if (f.resource === null) return { resource: f.worst, status: null, message: f.phaseMessage };
    const body = resourceDetails.get(f.resource.detailId);
    return {
      resource: f.worst,
      status: isResourceStatus(f.resource.status) ? f.resource.status : null,
      message: text(body?.['message']) || text(body?.['reason']),
    };
  });
}

async function readDetails(sql: RawTx, ids: readonly number[]): Promise<Map<number, DetailBody>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await sql.$queryRaw<
    { id: number; body: unknown }[]
  >`SELECT "id", "body" FROM "StatusDetail" WHERE "id" = ANY(${unique}::int[])`;
  return new Map(rows.map((row) => [row.id, readJson<DetailBody>(row.body, {})]));
}
