/**
 * The applier's own status of a phase member: what the tool that applied it recorded beside its
 * identity in the inventory (EMCO's rsync-status, beside the cluster status). cli-utils ConfigMap
 * values and kpt ResourceGroup `status.resourceStatuses[]` carry `strategy` (Apply, Delete),
 * `actuation` (Pending, Succeeded, Skipped, Failed) and `reconcile` (Pending, Succeeded, Skipped,
 * Failed, Timeout) (cli-utils `pkg/apis/actuation/types.go`); an Argo CD Application's
 * `status.resources[].status` is the member's `sync` status (Synced, OutOfSync, Unknown). Values
 * are kept as the tool wrote them. Pure.
 */
import type { EntryDetail } from '../inventory/types.ts';

/** A member's applier status; only the fields its inventory recorded are present. Shared and frozen: never modified. */
export interface AppliedStatus {
  readonly strategy?: string;
  readonly actuation?: string;
  readonly reconcile?: string;
  readonly sync?: string;
}

/** The fields of an applier status, in the order they are shown and described. */
export const APPLIED_FIELDS = ['strategy', 'actuation', 'reconcile', 'sync'] as const;
export type AppliedField = (typeof APPLIED_FIELDS)[number];

/**
 * One applier status per distinct entry detail: parsed phases share one frozen detail per value
 * (src/inventory/build-phase.ts), so every tick finds the same status for the same detail.
 */
const byDetail = new WeakMap<EntryDetail, AppliedStatus | null>();

/** The applier status an entry detail records, or undefined when it records none. */
export function appliedOf(detail: EntryDetail | undefined): AppliedStatus | undefined {
  if (detail === undefined) return undefined;
  const known = byDetail.get(detail);
  if (known !== undefined) return known ?? undefined;
  const made = makeApplied({
    strategy: detail.strategy,
    actuation: detail.actuation,
    reconcile: detail.reconcile,
    sync: detail.syncStatus,
  });
  byDetail.set(detail, made ?? null);
  return made;
}

/**
 * An applier status read back from a stored status detail (JSON): its string fields, or null when
 * it has none (a member whose inventory records nothing, or a detail written before phaselog kept it).
 */
export function readApplied(value: unknown): AppliedStatus | null {
  const parsed: unknown = typeof value === 'string' ? safeParse(value) : value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const record = parsed as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return (
    makeApplied({
      strategy: text(record['strategy']),
      actuation: text(record['actuation']),
      reconcile: text(record['reconcile']),
      sync: text(record['sync']),
    }) ?? null
  );
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function makeApplied(fields: Record<AppliedField, string | undefined>): AppliedStatus | undefined {
  const status: { -readonly [K in AppliedField]?: string } = {};
  let any = false;
  for (const field of APPLIED_FIELDS) {
    const value = fields[field];
    if (value === undefined) continue;
    status[field] = value;
    any = true;
  }
  return any ? Object.freeze(status) : undefined;
}

/** True when `a` and `b` record the same applier status (both none included). */
export function sameApplied(a: AppliedStatus | null | undefined, b: AppliedStatus | null | undefined): boolean {
  if (a === b) return true;
  if (a == null || b == null) return a == null && b == null;
  return a.strategy === b.strategy && a.actuation === b.actuation && a.reconcile === b.reconcile && a.sync === b.sync;
}

/** {@link appliedText} of each status seen (statuses are shared and frozen). */
const texts = new WeakMap<AppliedStatus, string>();

/** The status as one line of text, each field length-prefixed (for hashing what an observation says). */
export function appliedText(a: AppliedStatus): string {
  // Every observed member's status is hashed on every tick, and members share a few statuses.
  const known = texts.get(a);
  if (known !== undefined) return known;
  let text = '';
  for (const field of APPLIED_FIELDS) {
    const value = a[field];
    text += value === undefined ? '-' : `${value.length}:${value}`;
  }
  texts.set(a, text);
  return text;
}

/**
 * The change-log message of a change of applier status: the fields that changed, each from → to
 * (`none` where the inventory recorded nothing), e.g. `applied: actuation Pending → Succeeded`.
 */
export function describeAppliedChange(
  from: AppliedStatus | null | undefined,
  to: AppliedStatus | null | undefined,
): string {
  const moves = APPLIED_FIELDS.filter((field) => from?.[field] !== to?.[field]).map(
    (field) => `${field} ${from?.[field] ?? 'none'} → ${to?.[field] ?? 'none'}`,
  );
  return `applied: ${moves.join(', ')}`;
}
