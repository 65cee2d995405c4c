/**
 * Phase conditions from checks (http, cel, webhook in phaselog.yaml `checks`), Kubernetes-style:
 * a status True/False/Unknown with a reason and a message, and when the status last changed
 * (lastTransitionTime). Pure: a run's results against the stored conditions give the writes.
 */

/** A condition's status, as Kubernetes' metav1.Condition spells it. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export const CONDITION_STATUSES: readonly ConditionStatus[] = ['True', 'False', 'Unknown'];

/**
 * Which kind of check produced a condition: a check of phaselog.yaml (http, cel, webhook), or the
 * object holding the phase's inventory (flux, argocd, kpt, owner: src/inventory/holder.ts), whose
 * conditions are recorded with each snapshot like a check's run.
 */
export type CheckKind = 'http' | 'cel' | 'webhook' | 'flux' | 'argocd' | 'kpt' | 'owner';

/** What one check run found for one phase. */
export interface ConditionResult {
  phaseId: number;
  /** The condition type: the check's name (or a webhook's own type). */
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** A phase's stored current condition. */
export interface StoredCondition extends ConditionResult {
  source: CheckKind;
  /** lastTransitionTime. */
  from: Date;
}

/** The writes a run's results make against the stored conditions. */
export interface ConditionPlan {
  /** New conditions (no stored one) and status changes: the current row takes the result, `from` = the run's time. */
  opened: ConditionResult[];
  /** Stored conditions whose status changed: their interval ends at the run's time. */
  closed: StoredCondition[];
  /** Same status, new reason or message: the current row is updated, its `from` stays. */
  updated: ConditionResult[];
  /** The change-log rows: one per new condition and per status change. */
  changes: {
    phaseId: number;
    type: string;
    fromStatus: ConditionStatus | null;
    toStatus: ConditionStatus;
    message: string;
  }[];
  /** When the closed intervals end: the run's time, or the last run before a gap in the check's runs. Absent: the run's time. */
  closedAt?: Date;
}

/** Options of {@link planConditionChanges}. */
export interface PlanConditionOptions {
  /**
   * The check's last run before this one, when that was longer ago than the check's bound (its
   * workers were down, the check was off): what held in between was not observed, so every
   * interval the run touches ends then, and the run's results open new ones even with the same
   * status (no change is logged for those). A gate then measures from the run that resumed.
   */
  resumedAfter?: Date;
}

const keyOf = (c: { phaseId: number; type: string }): string => `${c.phaseId}\u0000${c.type}`;

/**
 * Plans the writes of one run: only what changed is written, so a run that finds every condition as
 * it was writes nothing here. Results for one (phase, type) given twice: the last wins.
 */
export function planConditionChanges(
  stored: readonly StoredCondition[],
  results: readonly ConditionResult[],
  options: PlanConditionOptions = {},
): ConditionPlan {
  const byKey = new Map(stored.map((c) => [keyOf(c), c]));
  const latest = new Map(results.map((r) => [keyOf(r), r]));
  const plan: ConditionPlan = { opened: [], closed: [], updated: [], changes: [] };
  if (options.resumedAfter !== undefined) {
    plan.closedAt = options.resumedAfter;
    for (const result of latest.values()) {
      const before = byKey.get(keyOf(result));
      // An interval that began at the last run itself would be empty: it is only replaced.
      if (before !== undefined && before.from < options.resumedAfter) plan.closed.push(before);
      plan.opened.push(result);
      if (before?.status !== result.status)
        plan.changes.push({
          phaseId: result.phaseId,
          type: result.type,
          fromStatus: before?.status ?? null,
          toStatus: result.status,
          message: describe(result),
        });
    }
    return plan;
  }
  for (const result of latest.values()) {
    const before = byKey.get(keyOf(result));
    if (before === undefined) {
      plan.opened.push(result);
      plan.changes.push({
        phaseId: result.phaseId,
        type: result.type,
        fromStatus: null,
        toStatus: result.status,
        message: describe(result),
      });
    } else if (before.status !== result.status) {
      plan.closed.push(before);
      plan.opened.push(result);
      plan.changes.push({
        phaseId: result.phaseId,
        type: result.type,
        fromStatus: before.status,
        toStatus: result.status,
        message: describe(result),
      });
    } else if (before.reason !== result.reason || before.message !== result.message) {
      plan.updated.push(result);
    }
  }
  return plan;
}

/** The change's message: the reason, then the condition's message. */
function describe(result: ConditionResult): string {
  return result.message === '' ? result.reason : `${result.reason}: ${result.message}`;
}

/**
 * Whether a check run confirming a condition is recent enough for it to count as observed now:
 * within three of its intervals, and at least one interval plus 10 s (the cluster bound's rule).
 */
export function isCheckRunFresh(lastRunAt: Date | null, intervalMs: number, now: Date): boolean {
  if (lastRunAt === null) return false;
  const bound = Math.max(3 * intervalMs, intervalMs + 10_000);
  return now.getTime() - lastRunAt.getTime() <= bound;
}

/** A condition of a check with `affectsStatus` that is False now, as a snapshot folds it into its phase's status. */
export interface FalseCondition {
  type: string;
  reason: string;
  message: string;
}
