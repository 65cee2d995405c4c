/**
 * Phase plans (airshipctl's PhasePlan): an ordered list of phases deployed one after another, whose
 * status is the plan's progress. A plan is Current when all its phases are; otherwise it is at the
 * first phase in order that is not, with that phase's status and message. Derived at read time
 * from the phases' recorded statuses, so a plan has no history of its own to store. Pure.
 */
import type { StaleReason } from './observation.ts';

/** The label that puts an inventory's phase into a plan (its value: the plan's name). */
export const PLAN_LABEL = 'phaselog.dev/plan';
/** The label giving the phase's place in its plan: an integer, smaller first. */
export const PLAN_ORDER_LABEL = 'phaselog.dev/plan-order';
/** The most phases one plan has; label plans past it keep their first ones and say so. */
export const MAX_PLAN_PHASES = 50;

/** Whether `name` can name a plan: what a label value may be, so label and config plans share names. */
export function isPlanName(name: string): boolean {
  return /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/.test(name);
}

/** One phase of a plan, as named: `cluster/namespace/name`, or `cluster/name` (any namespace). */
export interface PlanPhaseRef {
  /** As written (for labels: cluster/namespace/name of the phase). */
  text: string;
  cluster: string;
  /** Null for `cluster/name`: the phase of that name in any namespace of the cluster. */
  namespace: string | null;
  name: string;
  /** Label plans know their phases' ids. */
  phaseId?: number;
}

/** Parses a plan's phase reference; undefined when it is not `cluster/namespace/name` or `cluster/name`. */
export function parsePlanPhaseRef(text: string): PlanPhaseRef | undefined {
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '' || p.trim() !== p)) return undefined;
  const [cluster, a, b] = parts as [string, string, string | undefined];
  return b === undefined ? { text, cluster, namespace: null, name: a } : { text, cluster, namespace: a, name: b };
}

/** Where a plan was declared. */
export type PlanSource = 'config' | 'labels';

/** A plan's definition: its phases in order and what was odd about declaring it. */
export interface PlanDefinition {
  name: string;
  source: PlanSource;
  refs: PlanPhaseRef[];
  /** Conflicts resolved on the way (duplicate orders, labels naming a configured plan, ...). */
  warnings: string[];
}

/** A phase as label plans see it. */
export interface LabelledPhase {
  id: number;
  cluster: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
}

/**
 * Plans from phaselog.yaml and from labels, by name. Precedence: a plan phaselog.yaml declares is
 * that declaration alone; labels naming the same plan are ignored, with a warning on the plan.
 * Label plans order their phases by `phaselog.dev/plan-order` (an integer, smaller first); phases
 * with the same order, or none (or one that is not an integer, which comes last), are ordered by
 * cluster/namespace/name, with a warning.
 */
export function definePlans(
  declared: readonly { name: string; phases: readonly string[] }[],
  labelled: readonly LabelledPhase[],
): PlanDefinition[] {
  const plans = new Map<string, PlanDefinition>();
  for (const plan of declared) {
    const refs = plan.phases.map(parsePlanPhaseRef).filter((r): r is PlanPhaseRef => r !== undefined);
    plans.set(plan.name, { name: plan.name, source: 'config', refs, warnings: [] });
  }
  const byLabel = new Map<string, { phase: LabelledPhase; order: number | null }[]>();
  for (const phase of labelled) {
    const name = phase.labels[PLAN_LABEL];
    if (name === undefined) continue;
    const text = phase.labels[PLAN_ORDER_LABEL];
    const order = text !== undefined && /^-?\d{1,9}$/.test(text) ? Number(text) : null;
    byLabel.set(name, [...(byLabel.get(name) ?? []), { phase, order }]);
  }
  for (const [name, members] of byLabel) {
    const label = (p: LabelledPhase) => `${p.cluster}/${p.namespace}/${p.name}`;
    const configured = plans.get(name);
    if (configured !== undefined) {
      configured.warnings.push(
        `labels ${PLAN_LABEL}=${name} on ${members
          .map((m) => label(m.phase))
          .sort()
          .join(', ')} are ignored: phaselog.yaml declares this plan`,
      );
      continue;
    }
    if (!isPlanName(name)) continue;
    const warnings: string[] = [];
    const unordered = members.filter((m) => m.order === null).map((m) => label(m.phase));
    if (unordered.length > 0)
      warnings.push(
        `${unordered.sort().join(', ')} ${unordered.length === 1 ? 'has' : 'have'} no integer ${PLAN_ORDER_LABEL}: placed last, by name`,
      );
    const sorted = [...members].sort(
      (a, b) =>
        (a.order ?? Infinity) - (b.order ?? Infinity) ||
        (label(a.phase) < label(b.phase) ? -1 : label(a.phase) > label(b.phase) ? 1 : a.phase.id - b.phase.id),
    );
    const counts = new Map<number, string[]>();
    for (const m of sorted) if (m.order !== null) counts.set(m.order, [...(counts.get(m.order) ?? []), label(m.phase)]);
    for (const [order, names] of counts)
      if (names.length > 1) warnings.push(`${PLAN_ORDER_LABEL}=${order} is on ${names.join(', ')}: ordered by name`);
    if (sorted.length > MAX_PLAN_PHASES)
      warnings.push(
        `${sorted.length} phases carry ${PLAN_LABEL}=${name}; a plan has at most ${MAX_PLAN_PHASES}: the first ${MAX_PLAN_PHASES} are kept`,
      );
    const refs = sorted.slice(0, MAX_PLAN_PHASES).map(({ phase }) => ({
      text: label(phase),
      cluster: phase.cluster,
      namespace: phase.namespace,
      name: phase.name,
      phaseId: phase.id,
    }));
    plans.set(name, { name, source: 'labels', refs, warnings });
  }
  return [...plans.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One step's status at some moment: null when the phase has none (not found, not yet seen, deleted). */
export interface PlanStepState {
  ref: string;
  status: string | null;
  message: string;
  staleReason: StaleReason | null;
}

/** A plan's derived status. */
export interface PlanState {
  status: string;
  /** The step (1-based) the plan is at: its first phase not Current; null when Current. */
  step: number | null;
  stepCount: number;
  message: string;
  /**
   * Why the status cannot be trusted as current: the first stale phase among those that decide it
   * (the steps up to the one it is at; every step when it is Current). Null when fresh.
   */
  staleReason: StaleReason | null;
}

/** The plan's status from its steps' statuses, in order. */
export function planStateOf(steps: readonly PlanStepState[]): PlanState {
  const stepCount = steps.length;
  const at = steps.findIndex((s) => s.status !== 'Current');
  const deciding = at === -1 ? steps : steps.slice(0, at + 1);
  const staleReason = deciding.find((s) => s.staleReason !== null)?.staleReason ?? null;
  if (at === -1)
    return { status: 'Current', step: null, stepCount, message: `all ${stepCount} phases Current`, staleReason };
  const step = steps[at] as PlanStepState;
  const status = step.status ?? 'NotFound';
  const said = step.message === '' ? '' : `: ${step.message}`;
  return {
    status,
    step: at + 1,
    stepCount,
    message: `at step ${at + 1} of ${stepCount}: ${step.ref} ${status}${said}`,
    staleReason,
  };
}

/** One interval of a step's phase, as history gives it. */
export interface StepInterval {
  status: string;
  message: string;
  staleReason: StaleReason | null;
  from: Date;
  /** Null while open. */
  to: Date | null;
}

/** A plan's status over [from, to). */
export interface PlanInterval extends PlanState {
  from: Date;
  /** Null while open (the window ends now). */
  to: Date | null;
}

/** What a step reads as at `t`: its interval containing `t`, or no status. */
function stepAt(ref: string, intervals: readonly StepInterval[], t: number): PlanStepState {
  const found = intervals.find((i) => i.from.getTime() <= t && (i.to === null || t < i.to.getTime()));
  return found === undefined
    ? { ref, status: null, message: 'no recorded status', staleReason: null }
    : { ref, status: found.status, message: found.message, staleReason: found.staleReason };
}

/**
 * The plan's status intervals over [window.from, window.to), oldest first, from its steps' phase
 * intervals: every boundary of every phase's intervals inside the window cuts it, the plan's status
 * is computed on each piece, and neighbours with the same status, step and staleness are one
 * interval (with the message of its first piece). Intervals are cut to the window; the last one
 * is open (`to` null) when `window.open` (the window ends now). The span before any of its phases
 * had a status is left out; a later span where one has none reads as that step NotFound.
 */
export function planIntervalsOf(
  steps: readonly { ref: string; intervals: readonly StepInterval[] }[],
  window: { from: Date; to: Date; open: boolean },
): PlanInterval[] {
  const from = window.from.getTime();
  const to = window.to.getTime();
  if (to <= from) return [];
  const cuts = new Set<number>([from]);
  for (const { intervals } of steps) {
    for (const i of intervals) {
      for (const t of [i.from.getTime(), i.to?.getTime()]) if (t !== undefined && t > from && t < to) cuts.add(t);
    }
  }
  const starts = [...cuts].sort((a, b) => a - b);
  const out: PlanInterval[] = [];
  for (const start of starts) {
    const states = steps.map((s) => stepAt(s.ref, s.intervals, start));
    // Before any of its phases had a status the plan was not there yet: history starts with the first.
    if (out.length === 0 && states.every((s) => s.status === null)) continue;
    const state = planStateOf(states);
    const last = out[out.length - 1];
    if (
      last !== undefined &&
      last.status === state.status &&
      last.step === state.step &&
      last.staleReason === state.staleReason
    )
      continue;
    if (last !== undefined) last.to = new Date(start);
    out.push({ ...state, from: new Date(start), to: null });
  }
  const tail = out[out.length - 1];
  if (tail !== undefined) tail.to = window.open ? null : new Date(to);
  return out;
}
