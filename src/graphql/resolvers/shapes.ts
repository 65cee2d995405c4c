/** Shaping domain records into the SDL's shapes (no I/O). */
import { TOKEN_SCOPES } from '../../auth/tokens.ts';
import type { ChangeScope, ResolversParentTypes, Status, TokenScope } from '../../generated/graphql.ts';
import type { ApiTokenRecord } from '../../store/api-token-store.ts';
import type { GateOutcome } from '../../services/read-gate.ts';
import type { PhaseCondition } from '../../status/phase-summary.ts';
import { isResourceStatus, type CustomHealthDetail } from '../../status/types.ts';
import type { StatusChange } from '../../history/types.ts';
import type { ManifestVersionRecord } from '../../store/read-types.ts';
import type { DeliveryRecord } from '../../store/notification-store.ts';
import { isCheckRunFresh, type CheckKind } from '../../history/condition-changes.ts';
import type { PhaseConditionParent } from './parents.ts';

/**
 * A stored status as the SDL's Status enum. The store keeps statuses as text; one that is not a
 * kstatus status is a bug upstream, reported here rather than as GraphQL's enum serialisation error.
 */
export function toStatus(value: string): Status {
  if (!isResourceStatus(value)) throw new Error(`stored status ${JSON.stringify(value)} is not a kstatus status`);
  return value;
}

const CHANGE_SCOPES: readonly string[] = ['cluster', 'phase', 'resource', 'condition'] satisfies ChangeScope[];

function toChangeScope(value: string): ChangeScope {
  if (!CHANGE_SCOPES.includes(value))
    throw new Error(`stored change scope ${JSON.stringify(value)} is not cluster, phase, resource or condition`);
  return value as ChangeScope;
}

/** An ApiToken as the SDL shows it: stored scopes narrowed to the TokenScope enum. */
export function toApiToken(record: ApiTokenRecord): ResolversParentTypes['ApiToken'] {
  const scopes = record.scopes.map((scope) => {
    if (!(TOKEN_SCOPES as readonly string[]).includes(scope))
      throw new Error(`stored token scope ${JSON.stringify(scope)} is not read or admin`);
    return scope as TokenScope;
  });
  return { ...record, scopes };
}

/** StatusCounts from a stored summary (counts keyed by status). */
export function toCounts(summary: Record<string, number>): ResolversParentTypes['StatusCounts'] {
  const get = (status: Status) => summary[status] ?? 0;
  const counts = {
    current: get('Current'),
    inProgress: get('InProgress'),
    failed: get('Failed'),
    terminating: get('Terminating'),
    notFound: get('NotFound'),
    unknown: get('Unknown'),
  };
  return { ...counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
}

/** A phase's applier status counts as the SDL shows them: one list per field; null when there are none. */
export function toAppliedSummary(
  rows: readonly { field: string; value: string; count: number }[],
): ResolversParentTypes['AppliedSummary'] | null {
  if (rows.length === 0) return null;
  const of = (field: string) =>
    rows
      .filter((r) => r.field === field)
      .map((r) => ({ value: r.value, count: r.count }))
      .sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  return { strategy: of('strategy'), actuation: of('actuation'), reconcile: of('reconcile'), sync: of('sync') };
}

/** A StatusChange as the SDL shows it (no cluster id; the phase's source kind as `source`). */
export function toStatusChange(change: StatusChange): ResolversParentTypes['StatusChange'] {
  const { phase } = change;
  return {
    seq: change.seq.toString(),
    at: change.at,
    cluster: change.cluster,
    scope: toChangeScope(change.scope),
    phaseId: change.phaseId === null ? null : String(change.phaseId),
    phase: phase === null ? null : { source: phase.sourceKind, namespace: phase.namespace, name: phase.name },
    resourceKey: change.resourceKey,
    conditionType: change.conditionType ?? null,
    fromStatus: change.fromStatus,
    toStatus: change.toStatus,
    message: change.message,
  };
}

/** A notification delivery as the API shows it (its id is the receivers' idempotency key). */
export function toNotificationDelivery(d: DeliveryRecord): ResolversParentTypes['NotificationDelivery'] {
  return {
    id: `${d.route}:${d.seq}`,
    route: d.route,
    seq: d.seq.toString(),
    kind: d.kind,
    status: d.status,
    reason: d.reason,
    cluster: d.cluster,
    phase: d.phase === null ? null : { source: d.phase.sourceKind, namespace: d.phase.namespace, name: d.phase.name },
    at: d.at,
    attempts: d.attempts,
    lastError: d.lastError,
    deliveredAt: d.deliveredAt,
    updatedAt: d.updatedAt,
  };
}

/** A phase's derived conditions as stored (the JSON summarizePhase wrote), then those from checks. */
export function toConditions(
  stored: unknown[],
  checks: readonly CheckConditionView[] = [],
  now = new Date(),
): PhaseConditionParent[] {
  const derived = (stored as PhaseCondition[]).map((c): PhaseConditionParent => ({
    ...c,
    source: 'derived',
    stale: false,
    lastCheckedAt: null,
  }));
  return [
    ...derived,
    ...checks.map((c): PhaseConditionParent => ({
      type: c.type,
      source: c.source,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: c.from,
      // A condition read as of a past moment (statusAt) has no run to judge: it is as recorded.
      stale: c.lastRunAt === undefined ? false : !isCheckRunFresh(c.lastRunAt, c.intervalMs ?? 0, now),
      lastCheckedAt: c.lastRunAt ?? null,
    })),
  ];
}

/** A condition from a check as the stores read it: current (with its last run) or as of a moment. */
export interface CheckConditionView {
  type: string;
  source: CheckKind;
  status: string;
  reason: string;
  message: string;
  from: Date;
  lastRunAt?: Date | null;
  intervalMs?: number | null;
}

/** A resource's custom health as stored: the JSON of the health check's CustomHealthDetail. */
export function toCustomHealth(stored: Record<string, unknown> | null): CustomHealthDetail | null {
  return stored as CustomHealthDetail | null;
}

export function toManifest(record: ManifestVersionRecord): ResolversParentTypes['Manifest'] {
  return {
    hash: record.hash,
    entries: record.entries,
    entryCount: record.entries.length,
    source: record.source,
    from: record.from,
    to: record.to,
  };
}

export function toGateResult(outcome: GateOutcome): ResolversParentTypes['GateResult'] {
  return {
    ...outcome,
    status: outcome.status === null ? null : toStatus(outcome.status),
    remaining: outcome.remainingMs,
    conditions: outcome.conditions.map((c) => ({ ...c, remaining: c.remainingMs })),
  };
}
