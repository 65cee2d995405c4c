/**
 * Phase plans for the API and the CLI: which plans exist (phaselog.yaml's `plans:` and the
 * `phaselog.dev/plan` labels of inventories), each with its phases in order and its status now,
 * its status history, its status at a past moment, and the gate on it. Everything is derived from
 * the phases' recorded statuses when read (src/history/plans.ts).
 *
 * Access: a caller sees a plan only when it may see every one of its phases (for a phase not found,
 * the cluster and namespace its reference names; `cluster/name` names no namespace, so a token
 * restricted to namespaces never sees a plan with a missing step named that way). A plan summarises
 * all its phases: shown to a caller who may not see some of them, its step and message would tell
 * what those phases are doing, and with them left out it would claim progress it does not have.
 */
import type { DeclaredPlan } from '../declared-plans.ts';
import { mayAccess } from '../store/access-rule.ts';
import { observationStateOf, storedStaleReason } from '../history/observation.ts';
import {
  definePlans,
  planIntervalsOf,
  planStateOf,
  PLAN_LABEL,
  type LabelledPhase,
  type PlanDefinition,
  type PlanInterval,
  type PlanPhaseRef,
  type PlanSource,
  type PlanState,
  type StepInterval,
} from '../history/plans.ts';
import type { HistoryReader } from '../store/read-history.ts';
import type { PhaseFilter, PhaseReader } from '../store/read-phases.ts';
import { FULL_ACCESS, type AccessScope, type PhaseRecord } from '../store/read-types.ts';
import { phaseStaleness } from './read-staleness.ts';
import type { StaleReason } from '../history/observation.ts';

/** One step of a plan now: its reference and the phase it names, if one does. */
export interface PlanStepRecord {
  /** 1-based. */
  step: number;
  ref: PlanPhaseRef;
  /** Null when no phase has that name (yet), or the name is ambiguous. */
  phase: PhaseRecord | null;
  /** The phase's status now; null when it has none (the plan reads it as NotFound). */
  status: string | null;
  message: string;
  staleReason: StaleReason | null;
}

/** A plan now. */
export interface PlanRecord {
  name: string;
  source: PlanSource;
  warnings: string[];
  steps: PlanStepRecord[];
  state: PlanState;
}

/** A page of a plan's history. */
export interface PlanHistoryPage {
  items: PlanInterval[];
  hasMore: boolean;
}

/** A plan's history reads at most this many phase intervals: a longer window is refused, to be narrowed. */
export const MAX_PLAN_HISTORY_INTERVALS = 20_000;

/** A plan history window that spans more phase intervals than {@link MAX_PLAN_HISTORY_INTERVALS}. */
export class PlanHistoryTooLongError extends Error {
  override readonly name = 'PlanHistoryTooLongError';
}

export interface PlanReader {
  /** Every plan the caller may see, by name. */
  listPlans(scope: AccessScope, now?: Date): Promise<PlanRecord[]>;
  /** One plan; null when there is none the caller may see. */
  getPlan(scope: AccessScope, name: string, now?: Date): Promise<PlanRecord | null>;
  /** The plan's status intervals over [from, to) (to omitted: now, the last one open), oldest first, at most `first`. */
  history(plan: PlanRecord, range: { from: Date; to?: Date }, first: number, now?: Date): Promise<PlanHistoryPage>;
  /** The plan's status at `at`; null when `at` is in the future. */
  statusAt(plan: PlanRecord, at: Date, now?: Date): Promise<PlanState | null>;
}

/** What a plan reader reads. */
export interface PlanReaderDeps {
  phases: PhaseReader;
  history: Pick<HistoryReader, 'listPhaseIntervals'>;
  /** phaselog.yaml's `plans:`. */
  declared: readonly DeclaredPlan[];
}

const LABEL_PAGE = 1000;

export function createPlanReader(deps: PlanReaderDeps): PlanReader {
  async function labelledPhases(filter: PhaseFilter): Promise<LabelledPhase[]> {
    const out: LabelledPhase[] = [];
    let after: Parameters<PhaseReader['listPhases']>[1]['after'];
    for (;;) {
      const page = await deps.phases.listPhases(FULL_ACCESS, {
        filter,
        order: 'NAME',
        first: LABEL_PAGE,
        ...(after ? { after } : {}),
      });
      out.push(...page.items);
      const last = page.items[page.items.length - 1];
      if (!page.hasMore || last === undefined) return out;
      after = { severity: 0, cluster: last.cluster, namespace: last.namespace, name: last.name, id: last.id };
    }
  }

  async function resolveRef(
    ref: PlanPhaseRef,
    byId: Map<number, PhaseRecord>,
  ): Promise<{ phase: PhaseRecord | null; candidates: PhaseRecord[]; problem?: string }> {
    if (ref.phaseId !== undefined) {
      const phase = byId.get(ref.phaseId) ?? null;
      return { phase, candidates: phase ? [phase] : [] };
    }
    const found =
      ref.namespace !== null
        ? await deps.phases.findPhases(FULL_ACCESS, { cluster: ref.cluster, namespace: ref.namespace, name: ref.name })
        : (
            await deps.phases.listPhases(FULL_ACCESS, {
              filter: { cluster: ref.cluster, search: ref.name },
              order: 'NAME',
              first: 100,
            })
          ).items.filter((p) => p.name === ref.name);
    const live = found.filter((p) => p.deletedAt === null);
    const candidates = live.length > 0 ? live : found;
    if (candidates.length <= 1) return { phase: candidates[0] ?? null, candidates };
    return {
      phase: null,
      candidates,
      problem: `${ref.text} names ${candidates.length} phases (${candidates.map((p) => `${p.namespace}/${p.name} from ${p.source}`).join(', ')}): name it by cluster/namespace/name`,
    };
  }

  async function build(definition: PlanDefinition, scope: AccessScope, now: Date): Promise<PlanRecord | null> {
    const ids = definition.refs.flatMap((r) => (r.phaseId === undefined ? [] : [r.phaseId]));
    const byId = new Map((await deps.phases.getPhasesByIds(FULL_ACCESS, ids)).map((p) => [p.id, p]));
    const resolved = await Promise.all(definition.refs.map((ref) => resolveRef(ref, byId)));
    const visible = resolved.every(({ candidates }, i) => {
      const ref = definition.refs[i] as PlanPhaseRef;
      if (candidates.length === 0) return mayAccess(scope, { cluster: ref.cluster, namespace: ref.namespace });
      return candidates.every((p) => mayAccess(scope, { cluster: p.cluster, namespace: p.namespace }));
    });
    if (!visible) return null;
    const steps = resolved.map(({ phase, problem }, i): PlanStepRecord => {
      const ref = definition.refs[i] as PlanPhaseRef;
      const base = { step: i + 1, ref, phase };
      if (problem !== undefined)
        return { ...base, phase: null, status: 'Unknown', message: problem, staleReason: null };
      if (phase === null) return { ...base, status: null, message: 'no such phase (yet)', staleReason: null };
      if (phase.current === null)
        return {
          ...base,
          status: null,
          message: phase.deletedAt
            ? `its inventory was deleted at ${phase.deletedAt.toISOString()}`
            : 'no recorded status',
          staleReason: null,
        };
      return {
        ...base,
        status: phase.current.status,
        message: phase.current.message,
        staleReason: phaseStaleness(phase, now).reason,
      };
    });
    const state = planStateOf(
      steps.map((s) => ({ ref: s.ref.text, status: s.status, message: s.message, staleReason: s.staleReason })),
    );
    return { name: definition.name, source: definition.source, warnings: definition.warnings, steps, state };
  }

  /** A step's phase intervals over the window, with the open one of a cluster not observed now marked stale from where that began. */
  async function stepIntervals(
    step: PlanStepRecord,
    range: { from: Date; to: Date },
    now: Date,
    budget: { left: number },
  ): Promise<StepInterval[]> {
    const phase = step.phase;
    if (phase === null)
      return step.status === 'Unknown'
        ? [{ status: 'Unknown', message: step.message, staleReason: null, from: new Date(0), to: null }]
        : [];
    const out: StepInterval[] = [];
    let after: { from: Date; id: string } | undefined;
    for (;;) {
      const page = await deps.history.listPhaseIntervals(phase.id, {
        range,
        first: 100,
        detail: true,
        ...(after ? { after } : {}),
      });
      budget.left -= page.items.length;
      if (budget.left < 0)
        throw new PlanHistoryTooLongError(
          `the window spans more than ${MAX_PLAN_HISTORY_INTERVALS} phase intervals of the plan: narrow it`,
        );
      for (const i of page.items)
        out.push({
          status: i.status,
          message: i.detail?.message ?? '',
          staleReason: storedStaleReason(i),
          from: i.from,
          to: i.to,
        });
      const last = page.items[page.items.length - 1];
      if (!page.hasMore || last === undefined) break;
      after = { from: last.from, id: last.id };
    }
    const observation = observationStateOf(phase.clusterObservation, now);
    const open = out[out.length - 1];
    if (observation.state !== 'OBSERVED' && open !== undefined && open.to === null) {
      // As Phase.history: an unobserved span is never shown as the status read last.
      const since = observation.since;
      if (since === null || since <= open.from) out[out.length - 1] = { ...open, staleReason: observation.state };
      else
        out.splice(out.length - 1, 1, { ...open, to: since }, { ...open, from: since, staleReason: observation.state });
    }
    return out;
  }

  async function history(
    plan: PlanRecord,
    range: { from: Date; to?: Date },
    first: number,
    now: Date,
  ): Promise<PlanHistoryPage> {
    const to = range.to ?? now;
    const window = { from: range.from, to };
    const budget = { left: MAX_PLAN_HISTORY_INTERVALS };
    const steps = await Promise.all(
      plan.steps.map(async (s) => ({ ref: s.ref.text, intervals: await stepIntervals(s, window, now, budget) })),
    );
    const items = planIntervalsOf(steps, { ...window, open: range.to === undefined });
    return { items: items.slice(0, first), hasMore: items.length > first };
  }

  return {
    async listPlans(scope, now = new Date()) {
      const definitions = definePlans(deps.declared, await labelledPhases({ hasLabel: PLAN_LABEL }));
      return (await Promise.all(definitions.map((d) => build(d, scope, now)))).filter(
        (p): p is PlanRecord => p !== null,
      );
    },
    async getPlan(scope, name, now = new Date()) {
      const declared = deps.declared.filter((p) => p.name === name);
      const definition = definePlans(declared, await labelledPhases({ labels: { [PLAN_LABEL]: name } })).find(
        (d) => d.name === name,
      );
      return definition === undefined ? null : build(definition, scope, now);
    },
    history: (plan, range, first, now = new Date()) => history(plan, range, first, now),
    async statusAt(plan, at, now = new Date()) {
      if (at.getTime() > now.getTime()) return null;
      // The same computation as history, over the one millisecond at `at`: the two always agree.
      const page = await history(plan, { from: at, to: new Date(at.getTime() + 1) }, 1, now);
      const found = page.items[0];
      if (found === undefined) return null;
      const { from: _from, to: _to, ...state } = found;
      return state;
    },
  };
}

/** A plan gate's answer: has the plan been Current, on fresh reads, for the whole window ending now? */
export interface PlanGateOutcome {
  passed: boolean;
  /** As a phase gate's: HELD, NOT_HELD_LONG_ENOUGH, DIFFERENT_STATUS, STALE or NO_STATUS. */
  reason: 'HELD' | 'NOT_HELD_LONG_ENOUGH' | 'DIFFERENT_STATUS' | 'STALE' | 'NO_STATUS';
  message: string;
  plan: PlanRecord;
  heldSince: Date | null;
  remainingMs: number | null;
  staleReason: StaleReason | null;
}

/**
 * The gate on a plan: Current means every phase Current, so the plan has been Current on fresh
 * reads since the latest of its phases' fresh Current runs began (a stale stretch ends a phase's
 * run, as for a phase gate). A stale phase (its cluster unreadable, unobserved or retired) proves
 * nothing about now, so the gate fails; a step with no phase never passes.
 */
export async function evaluatePlanGate(
  phases: Pick<PhaseReader, 'currentRunStarts'>,
  plan: PlanRecord,
  forMs: number,
  now: Date = new Date(),
): Promise<PlanGateOutcome> {
  const base = { plan, heldSince: null, remainingMs: null, staleReason: plan.state.staleReason };
  const { state } = plan;
  if (state.staleReason !== null) {
    const stale = plan.steps.find((s) => s.staleReason !== null);
    return {
      ...base,
      passed: false,
      reason: 'STALE',
      message: `plan ${plan.name}: ${stale?.ref.text ?? 'a phase'} is stale (${state.staleReason}): its last status proves nothing about now`,
    };
  }
  if (state.status !== 'Current') {
    const missing = plan.steps.find((s) => s.step === state.step && s.phase === null && s.status === null);
    return {
      ...base,
      passed: false,
      reason: missing ? 'NO_STATUS' : 'DIFFERENT_STATUS',
      message: `plan ${plan.name} is ${state.status}, not Current: ${state.message}`,
    };
  }
  const ids = plan.steps.map((s) => (s.phase as PhaseRecord).id);
  const runs = new Map((await phases.currentRunStarts(ids, { splitOnStale: true })).map((r) => [r.phaseId, r.from]));
  const heldSince = new Date(
    Math.max(
      ...plan.steps.map((s) =>
        (runs.get((s.phase as PhaseRecord).id) ?? (s.phase as PhaseRecord).current?.from ?? now).getTime(),
      ),
    ),
  );
  const remainingMs = Math.max(0, heldSince.getTime() + forMs - now.getTime());
  if (remainingMs === 0)
    return {
      ...base,
      heldSince,
      remainingMs,
      passed: true,
      reason: 'HELD',
      message: `plan ${plan.name} has been Current (all ${state.stepCount} phases) since ${heldSince.toISOString()}`,
    };
  return {
    ...base,
    heldSince,
    remainingMs,
    passed: false,
    reason: 'NOT_HELD_LONG_ENOUGH',
    message: `plan ${plan.name} has been Current only since ${heldSince.toISOString()}; ${Math.ceil(remainingMs / 1000)}s to go`,
  };
}
