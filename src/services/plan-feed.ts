/**
 * A plan's status changes, live, derived from its phases' status changes: the change feed's phase
 * changes (replay from `after`, then live, no gap and no duplicate) are applied to the plan's steps
 * in seq order, and an event is emitted whenever the derived status or step changes, carrying the
 * seq of the phase change that caused it, so a subscriber resumes with `after` as for
 * phaseStatusChanged.
 */
import { planStateOf, type PlanState, type PlanStepState } from '../history/plans.ts';
import type { StatusChange } from '../history/types.ts';
import type { HistoryReader } from '../store/read-history.ts';
import { FULL_ACCESS, type AccessScope } from '../store/read-types.ts';
import type { ChangeFeed } from './read-change-feed.ts';
import type { PlanRecord, PlanStepRecord } from './read-plans.ts';

/** One change of a plan's derived status or step. */
export interface PlanStatusChangeEvent {
  seq: bigint;
  at: Date;
  plan: string;
  from: PlanState;
  to: PlanState;
}

/** What a plan subscription reads. */
export interface PlanFeedDeps {
  changes: ChangeFeed;
  history: Pick<HistoryReader, 'listStatusChanges' | 'phaseStatusAt' | 'latestStatusChangeSeq'>;
}

/** Whether a phase change is about a plan step (by identity, so a phase that appears later is followed too). */
function stepOf(steps: readonly PlanStepRecord[], change: StatusChange): number {
  if (change.scope !== 'phase' || change.phase === null) return -1;
  const phase = change.phase;
  return steps.findIndex((s) =>
    s.phase !== null
      ? s.phase.id === change.phaseId
      : s.ref.cluster === change.cluster &&
        s.ref.name === phase.name &&
        (s.ref.namespace === null || s.ref.namespace === phase.namespace),
  );
}

function apply(states: PlanStepState[], index: number, change: StatusChange): void {
  const state = states[index] as PlanStepState;
  states[index] = {
    ...state,
    status: change.toStatus,
    message: change.toStatus === null ? 'no recorded status' : change.message,
  };
}

const same = (a: PlanState, b: PlanState) => a.status === b.status && a.step === b.step;

/**
 * The plan's state as of change `afterSeq`: its phases' statuses just before that change's moment,
 * then the phase changes of that moment up to `afterSeq` applied in order (a snapshot writes all of
 * a moment's changes at once, so "at the moment" alone would include changes after `afterSeq`).
 */
async function statesAfter(deps: PlanFeedDeps, plan: PlanRecord, afterSeq: bigint): Promise<PlanStepState[]> {
  const states = plan.steps.map((s): PlanStepState => ({
    ref: s.ref.text,
    status: s.status,
    message: s.message,
    staleReason: null,
  }));
  const [anchor] = (await deps.history.listStatusChanges(FULL_ACCESS, {}, 1, afterSeq - 1n)).items;
  if (anchor === undefined) return states;
  const before = new Date(anchor.at.getTime() - 1);
  await Promise.all(
    plan.steps.map(async (s, i) => {
      if (s.phase === null) {
        states[i] = { ...(states[i] as PlanStepState), status: null, message: 'no recorded status' };
        return;
      }
      const interval = await deps.history.phaseStatusAt(s.phase.id, before);
      states[i] = {
        ...(states[i] as PlanStepState),
        status: interval?.status ?? null,
        message: interval?.message ?? 'no recorded status',
      };
    }),
  );
  let cursor: bigint | undefined;
  for (;;) {
    const page = await deps.history.listStatusChanges(
      FULL_ACCESS,
      { scopes: ['phase'], from: anchor.at, to: new Date(anchor.at.getTime() + 1) },
      500,
      cursor,
    );
    for (const change of page.items) {
      if (change.seq > afterSeq) return states;
      cursor = change.seq;
      const index = stepOf(plan.steps, change);
      if (index >= 0) apply(states, index, change);
    }
    if (!page.hasMore) return states;
  }
}

/**
 * The plan's status changes after `afterSeq`, for a caller who may see the plan. Without `afterSeq`,
 * from the newest phase change in the log: the state is rebuilt as of that seq and the feed resumes
 * after it, so no change falls between the state and the stream.
 */
export async function* subscribePlan(
  deps: PlanFeedDeps,
  scope: AccessScope,
  plan: PlanRecord,
  afterSeq: bigint | undefined,
): AsyncGenerator<PlanStatusChangeEvent> {
  const from = afterSeq ?? (await deps.history.latestStatusChangeSeq(FULL_ACCESS, { scopes: ['phase'] })) ?? undefined;
  const states =
    from === undefined
      ? plan.steps.map((s): PlanStepState => ({
          ref: s.ref.text,
          status: s.status,
          message: s.message,
          staleReason: null,
        }))
      : await statesAfter(deps, plan, from);
  let current = planStateOf(states);
  const feed = deps.changes.subscribe(scope, { scopes: ['phase'] }, from);
  try {
    for await (const change of feed) {
      const index = stepOf(plan.steps, change);
      if (index < 0) continue;
      apply(states, index, change);
      const next = planStateOf(states);
      if (same(current, next)) continue;
      yield { seq: change.seq, at: change.at, plan: plan.name, from: current, to: next };
      current = next;
    }
  } finally {
    await feed.return?.(undefined);
  }
}
