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

export type GateReason = 'HELD' | 'NOT_HELD_LONG_ENOUGH' | 'DIFFERENT_STATUS' | 'STALE' | 'NO_STATUS';

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
}

/** What a gate reads. */
export interface GateDeps {
  phases: PhaseReader;
  history: HistoryReader;
}

/** What a gate asks: has the phase held `wanted` for `forMs` up to `now`? */
export interface GateAsk {
  /** The status to hold. */
  wanted: string;
  /** How long it must have held, in milliseconds. */
  forMs: number;
  /** @default new Date() (for {@link checkGate}) */
  now?: Date;
}

const MAX_BLOCKING = 20;

/** Evaluates the gate for `phase` at `ask.now`. */
export async function evaluateGate(deps: GateDeps, phase: PhaseRecord, { wanted, forMs, now = new Date() }: GateAsk): Promise<GateOutcome> {
  const current = phase.current;
  const base = { phase, status: current?.status ?? null, heldSince: null, remainingMs: null, lastGoodReadAt: phase.clusterLastGoodReadAt, staleReason: null, blockingResources: [] as ResourceRecord[] };
  const label = `${phase.cluster}/${phase.namespace}/${phase.name}`;
  if (current === null) {
    return { ...base, passed: false, reason: 'NO_STATUS', message: `${label} has no recorded status${phase.deletedAt ? ` (its inventory was deleted at ${phase.deletedAt.toISOString()})` : ''}` };
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
    const blocking = page.items.sort((a, b) => severityOf(a.status) - severityOf(b.status) || (a.key < b.key ? -1 : 1)).slice(0, MAX_BLOCKING);
    return { ...base, blockingResources: blocking, passed: false, reason: 'DIFFERENT_STATUS', message: `${label} is ${current.status}, not ${wanted}: ${current.message}` };
  }
  const [run] = await deps.phases.currentRunStarts([phase.id], { splitOnStale: true });
  const heldSince = run?.from ?? current.from;
  const remainingMs = Math.max(0, heldSince.getTime() + forMs - now.getTime());
  if (remainingMs === 0) {
    return { ...base, heldSince, remainingMs, passed: true, reason: 'HELD', message: `${label} has been ${wanted} since ${heldSince.toISOString()}` };
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
  const lastObserved = observation.state === 'OBSERVED' || observation.lastObservedAt === null ? 'ever' : `since ${observation.lastObservedAt.toISOString()}`;
  if (reason === 'RETIRED' && observation.state === 'RETIRED') return `cluster ${cluster} is retired (no longer configured since ${observation.retiredAt.toISOString()}) and not observed ${lastObserved}`;
  if (reason === 'UNOBSERVED') return `cluster ${cluster} is unobserved: no snapshot of it completed ${lastObserved === 'ever' ? 'ever' : lastObserved}`;
  return `cluster ${cluster} cannot be read`;
}

/** Resolves `ref` within `scope`, then evaluates the gate: the whole use case, for the API and the CLI. */
export async function checkGate(deps: GateDeps, scope: AccessScope, ref: PhaseRef, ask: GateAsk): Promise<{ ok: true; gate: GateOutcome } | Extract<ResolvedPhase, { ok: false }>> {
  const resolved = await resolvePhaseRef(deps.phases, scope, ref);
  if (!resolved.ok) return resolved;
  return { ok: true, gate: await evaluateGate(deps, resolved.phase, ask) };
}
