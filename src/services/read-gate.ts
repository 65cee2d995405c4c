/**
 * The promotion gate: has a phase held a status for the whole window ending now? Only fresh reads
 * count: a stale status (its cluster could not be read, has not been observed recently, or is
 * retired) proves nothing, so it never passes, and a stale stretch ends the run a gate measures.
 */
import type { StaleReason } from '../history/observation.ts';
import type { HistoryReader } from '../store/read-history.ts';
import type { PhaseReader } from '../store/read-phases.ts';
import type { AccessScope, PhaseRecord, ResourceRecord } from '../store/read-types.ts';
import { severityOf } from '../status/severity.ts';
import { RESOURCE_STATUSES } from '../status/types.ts';
import { resolvePhaseRef, type PhaseRef, type ResolvedPhase } from './read-phase-ref.ts';
import { phaseStaleness, type PhaseStaleness } from './read-staleness.ts';
import { HOLDER_SOURCES } from '../inventory/holder.ts';
import { isCheckRunFresh } from '../history/condition-changes.ts';
import type { ConditionRecord, ConditionStore } from '../store/condition-store.ts';

export type GateReason =
  | 'HELD'
  | 'NOT_HELD_LONG_ENOUGH'
  | 'DIFFERENT_STATUS'
  | 'STALE'
  | 'NO_STATUS'
  | 'CONDITION_NOT_HELD'
  | 'CONDITION_STALE'
  | 'CONDITION_MISSING';

/** A condition from a check the gate requires besides the status. */
export interface GateConditionAsk {
  type: string;
  /** True, False or Unknown. */
  status: string;
  /** How long it must have held, in milliseconds. */
  forMs: number;
}

/** How one required condition fared. */
export interface GateConditionOutcome {
  type: string;
  wanted: string;
  status: string | null;
  outcome: 'HELD' | 'NOT_HELD_LONG_ENOUGH' | 'DIFFERENT_STATUS' | 'STALE' | 'MISSING';
  heldSince: Date | null;
  remainingMs: number | null;
  message: string;
}

/** A gate's answer. */
export interface GateOutcome {
  passed: boolean;
  reason: GateReason;
  message: string;
  phase: PhaseRecord;
  status: string | null;
  heldSince: Date | null;
  /** Milliseconds still to hold; 0 when passed; null when the status is not held. */
  remainingMs: number | null;
  lastGoodReadAt: Date | null;
  /** Why the status is stale, when the reason is STALE. */
  staleReason: StaleReason | null;
  blockingResources: ResourceRecord[];
  /** Each required condition, in the order asked. */
  conditions: GateConditionOutcome[];
}

/** What a gate reads. */
export interface GateDeps {
  phases: PhaseReader;
  history: HistoryReader;
  conditions: Pick<ConditionStore, 'currentConditions'>;
}

/** What a gate asks: has the phase held `wanted` for `forMs` up to `now`? */
export interface GateAsk {
  /** The status to hold. */
  wanted: string;
  /** How long it must have held, in milliseconds. */
  forMs: number;
  /** Conditions from checks that must hold too, each for its own window. @default [] */
  conditions?: readonly GateConditionAsk[];
  /** @default new Date() (for {@link checkGate}) */
  now?: Date;
}

const MAX_BLOCKING = 20;

/** Evaluates the gate for `phase` at `ask.now`. */
export async function evaluateGate(deps: GateDeps, phase: PhaseRecord, ask: GateAsk): Promise<GateOutcome> {
  const now = ask.now ?? new Date();
  const outcome = await evaluateStatus(deps, phase, { ...ask, now });
  const asked = ask.conditions ?? [];
  if (asked.length === 0) return outcome;
  const stored = (await deps.conditions.currentConditions([phase.id])).get(phase.id) ?? [];
  const conditions = asked.map((c) => evaluateCondition(stored, c, now));
  // The status' own failure comes first: it says more about the phase than a condition does.
  if (!outcome.passed) return { ...outcome, conditions };
  const label = `${phase.cluster}/${phase.namespace}/${phase.name}`;
  const failing = conditions.filter((c) => c.outcome !== 'HELD');
  if (failing.length === 0) {
    const heldSince = [outcome.heldSince, ...conditions.map((c) => c.heldSince)].reduce<Date | null>(
      (a, b) => (a === null || (b !== null && b > a) ? b : a),
      null,
    );
    return {
      ...outcome,
      heldSince,
      conditions,
      message: `${outcome.message}; ${conditions.map((c) => `${c.type}=${c.wanted}`).join(', ')} held`,
    };
  }
  const reason: GateReason = failing.some((c) => c.outcome === 'MISSING')
    ? 'CONDITION_MISSING'
    : failing.some((c) => c.outcome === 'STALE')
      ? 'CONDITION_STALE'
      : 'CONDITION_NOT_HELD';
  const remaining = failing.every((c) => c.remainingMs !== null)
    ? Math.max(...failing.map((c) => c.remainingMs as number))
    : null;
  return {
    ...outcome,
    passed: false,
    reason,
    remainingMs: remaining,
    conditions,
    message: `${label}: ${failing.map((c) => c.message).join('; ')}`,
  };
}

/**
 * The condition a gate asks for: the one of that type, else the inventory holder's of that type
 * (`Synced` finds `argocd/Synced` or `flux/Synced`, `Ready` finds `flux/Ready`), so one gate line
 * works for phases of any holder. The derived Ready/Reconciling/Stalled are the status itself.
 */
function findAsked(stored: readonly ConditionRecord[], type: string): ConditionRecord | undefined {
  return (
    stored.find((c) => c.type === type) ??
    stored.find((c) => (HOLDER_SOURCES as readonly string[]).includes(c.source) && c.type === `${c.source}/${type}`)
  );
}

/** How one required condition fares at `now`: held long enough on fresh check runs, or why not. */
function evaluateCondition(stored: readonly ConditionRecord[], ask: GateConditionAsk, now: Date): GateConditionOutcome {
  const base = { type: ask.type, wanted: ask.status, heldSince: null, remainingMs: null };
  const found = findAsked(stored, ask.type);
  if (found === undefined)
    return {
      ...base,
      status: null,
      outcome: 'MISSING',
      message: `condition ${ask.type} is not recorded for this phase`,
    };
  const said = `${found.reason}${found.message === '' ? '' : `: ${found.message}`}`;
  if (!isCheckRunFresh(found.lastRunAt, found.intervalMs ?? 0, now)) {
    const last = found.lastRunAt === null ? 'never' : `last at ${found.lastRunAt.toISOString()}`;
    return {
      ...base,
      status: found.status,
      outcome: 'STALE',
      message: `condition ${found.type} is stale: its check ran ${last}, which proves nothing about now`,
    };
  }
  if (found.status !== ask.status)
    return {
      ...base,
      status: found.status,
      outcome: 'DIFFERENT_STATUS',
      message: `condition ${found.type} is ${found.status}, not ${ask.status} (${said})`,
    };
  const remainingMs = Math.max(0, found.from.getTime() + ask.forMs - now.getTime());
  if (remainingMs === 0)
    return {
      ...base,
      status: found.status,
      outcome: 'HELD',
      heldSince: found.from,
      remainingMs,
      message: `condition ${found.type} has been ${ask.status} since ${found.from.toISOString()}`,
    };
  return {
    ...base,
    status: found.status,
    outcome: 'NOT_HELD_LONG_ENOUGH',
    heldSince: found.from,
    remainingMs,
    message: `condition ${found.type} has been ${ask.status} only since ${found.from.toISOString()}; ${Math.ceil(remainingMs / 1000)}s to go`,
  };
}

/** The gate on the phase's status alone. */
async function evaluateStatus(
  deps: GateDeps,
  phase: PhaseRecord,
  { wanted, forMs, now }: GateAsk & { now: Date },
): Promise<GateOutcome> {
  const current = phase.current;
  const base = {
    phase,
    status: current?.status ?? null,
    heldSince: null,
    remainingMs: null,
    lastGoodReadAt: phase.clusterLastGoodReadAt,
    staleReason: null,
    blockingResources: [] as ResourceRecord[],
    conditions: [] as GateConditionOutcome[],
  };
  const label = `${phase.cluster}/${phase.namespace}/${phase.name}`;
  if (current === null) {
    return {
      ...base,
      passed: false,
      reason: 'NO_STATUS',
      message: `${label} has no recorded status${phase.deletedAt ? ` (its inventory was deleted at ${phase.deletedAt.toISOString()})` : ''}`,
    };
  }
  const staleness = phaseStaleness(phase, now);
  if (staleness.reason !== null) {
    const lastGood = current.staleSince ?? phase.clusterLastGoodReadAt;
    return {
      ...base,
      lastGoodReadAt: lastGood,
      staleReason: staleness.reason,
      passed: false,
      reason: 'STALE',
      message: `${whyStale(phase.cluster, staleness)}; ${label} was last seen ${current.status}${lastGood ? ` at ${lastGood.toISOString()}` : ''}, which proves nothing about now`,
    };
  }
  if (current.status !== wanted) {
    const others = RESOURCE_STATUSES.filter((s) => s !== wanted);
    const page = await deps.history.listResources(phase.id, { filter: { status: others }, first: 100 });
    const blocking = page.items
      .sort((a, b) => severityOf(a.status) - severityOf(b.status) || (a.key < b.key ? -1 : 1))
      .slice(0, MAX_BLOCKING);
    return {
      ...base,
      blockingResources: blocking,
      passed: false,
      reason: 'DIFFERENT_STATUS',
      message: `${label} is ${current.status}, not ${wanted}: ${current.message}`,
    };
  }
  const [run] = await deps.phases.currentRunStarts([phase.id], { splitOnStale: true });
  const heldSince = run?.from ?? current.from;
  const remainingMs = Math.max(0, heldSince.getTime() + forMs - now.getTime());
  if (remainingMs === 0) {
    return {
      ...base,
      heldSince,
      remainingMs,
      passed: true,
      reason: 'HELD',
      message: `${label} has been ${wanted} since ${heldSince.toISOString()}`,
    };
  }
  return {
    ...base,
    heldSince,
    remainingMs,
    passed: false,
    reason: 'NOT_HELD_LONG_ENOUGH',
    message: `${label} has been ${wanted} only since ${heldSince.toISOString()}; ${Math.ceil(remainingMs / 1000)}s to go`,
  };
}

/** Why a stale phase's cluster proves nothing now, for the gate's message. */
function whyStale(cluster: string, { reason, observation }: PhaseStaleness): string {
  const lastObserved =
    observation.state === 'OBSERVED' || observation.lastObservedAt === null
      ? 'ever'
      : `since ${observation.lastObservedAt.toISOString()}`;
  if (reason === 'RETIRED' && observation.state === 'RETIRED')
    return `cluster ${cluster} is retired (no longer configured since ${observation.retiredAt.toISOString()}) and not observed ${lastObserved}`;
  if (reason === 'UNOBSERVED')
    return `cluster ${cluster} is unobserved: no snapshot of it completed ${lastObserved === 'ever' ? 'ever' : lastObserved}`;
  return `cluster ${cluster} cannot be read`;
}

/** Resolves `ref` within `scope`, then evaluates the gate: the whole use case, for the API and the CLI. */
export async function checkGate(
  deps: GateDeps,
  scope: AccessScope,
  ref: PhaseRef,
  ask: GateAsk,
): Promise<{ ok: true; gate: GateOutcome } | Extract<ResolvedPhase, { ok: false }>> {
  const resolved = await resolvePhaseRef(deps.phases, scope, ref);
  if (!resolved.ok) return resolved;
  return { ok: true, gate: await evaluateGate(deps, resolved.phase, ask) };
}
