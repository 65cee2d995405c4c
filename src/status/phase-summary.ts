/**
 * A deployment phase's summary: counts per status, the resource most worth looking at, the phase's
 * own status (kstatus' aggregate) and Kubernetes-style `Ready`/`Reconciling`/`Stalled` conditions.
 */
import { aggregateStatus } from './aggregate.ts';
import { severityOf } from './severity.ts';
import { isResourceStatus, RESOURCE_STATUSES } from './types.ts';
import type { ResourceStatus } from './types.ts';

/**
 * The identity fields a summary prints; inventory's `ObjectRef` fits. Declared here because the
 * status core imports nothing from the rest of src/.
 */
export interface MemberRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** One inventory member's status; a StatusResult spread with its ref fits (`{ ref, ...result }`). */
export interface PhaseMember {
  ref: MemberRef;
  status: ResourceStatus;
  message: string;
  reason?: string;
}

/** A phase condition: kstatus' condition shape plus the time its status last changed (RFC 3339). */
export interface PhaseCondition {
  type: 'Ready' | 'Reconciling' | 'Stalled';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/** Options of {@link summarizePhase}. */
export interface SummarizePhaseOptions {
  /** When this summary is made; becomes `lastTransitionTime` of conditions that changed. */
  now: Date | number;
  /** The phase's conditions from the previous summary, to keep their transition times. @default [] */
  previousConditions?: readonly PhaseCondition[];
  /** The status the phase waits for: `Current` to apply, `NotFound` to delete. @default 'Current' */
  desired?: ResourceStatus;
  /**
   * Verdicts from outside the resources (conditions of checks with `affectsStatus`, False now),
   * e.g. `health is False: HTTP 503`: any makes the phase Failed, its message leading. @default []
   */
  failedBy?: readonly string[];
  /**
   * What the object holding the inventory says (a Flux Kustomization's Ready, an Argo CD
   * Application's health, the applier's actuation, an owner's readiness): the phase's status is the
   * worse of it and the members' aggregate, its message first when it is the cause. Only with
   * `desired` Current. @default none
   */
  holder?: { status: ResourceStatus; message: string };
}

/** The member most worth a user's attention, with its position in the inventory. */
export interface ImportantMember extends PhaseMember {
  index: number;
}

/** What {@link summarizePhase} returns. */
export interface PhaseSummary {
  /** kstatus' aggregate: Failed > Unknown > (all desired ? desired : InProgress). */
  status: ResourceStatus;
  /** Members per status; all six keys are always present, zero included. */
  counts: Record<ResourceStatus, number>;
  total: number;
  /** The highest-priority member not in the desired status; absent when every member is. */
  mostImportant?: ImportantMember;
  /** One line for humans, e.g. `1 of 3 resources not Current: Deployment shop/web is Failed: ...`. */
  message: string;
  /** `Ready`, `Reconciling`, `Stalled`, in that order. */
  conditions: PhaseCondition[];
}

function emptyCounts(): Record<ResourceStatus, number> {
  const counts = {} as Record<ResourceStatus, number>;
  for (const status of RESOURCE_STATUSES) counts[status] = 0;
  return counts;
}

/** `Deployment shop/web` or `Namespace shop` for cluster-scoped objects. */
export function describeRef(ref: MemberRef): string {
  return ref.namespace === '' ? `${ref.kind} ${ref.name}` : `${ref.kind} ${ref.namespace}/${ref.name}`;
}

/** RFC 3339 with second precision, as Kubernetes writes `lastTransitionTime`. */
function formatTime(now: Date | number): string {
  const date = now instanceof Date ? now : new Date(now);
  const ms = date.getTime();
  return Number.isNaN(ms) ? '1970-01-01T00:00:00Z' : `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/**
 * How bad a phase status is, for "the worse of" the members' aggregate and the holder's verdict:
 * Failed, then Unknown (the aggregate's own order), then NotFound (an Argo CD Application whose
 * resources are Missing), Terminating and InProgress, then Current.
 */
const BADNESS: Record<ResourceStatus, number> = {
  Failed: 5,
  Unknown: 4,
  NotFound: 3,
  Terminating: 2,
  InProgress: 1,
  Current: 0,
};

function isWorse(a: ResourceStatus, b: ResourceStatus): boolean {
  return BADNESS[a] > BADNESS[b];
}

/** The first member (inventory order breaks ties) with the most important non-desired status. */
function findMostImportant(members: readonly PhaseMember[], desired: ResourceStatus): ImportantMember | undefined {
  let best: ImportantMember | undefined;
  members.forEach((member, index) => {
    const status = isResourceStatus(member.status) ? member.status : 'Unknown';
    if (status === desired) return;
    if (best === undefined || severityOf(status) < severityOf(best.status)) {
      best = { ...member, status, index };
    }
  });
  return best;
}

function summarizeMessage(total: number, notDesired: number, desired: ResourceStatus, top?: ImportantMember): string {
  if (total === 0) return 'Phase has no resources';
  if (top === undefined) return `All ${total} resources are ${desired}`;
  const detail = top.message === '' ? '' : `: ${top.message}`;
  return `${notDesired} of ${total} resources not ${desired}: ${describeRef(top.ref)} is ${top.status}${detail}`;
}

type ConditionStatus = PhaseCondition['status'];

/** Condition statuses for an aggregate: Ready is normal-true, Reconciling and Stalled abnormal-true. */
function conditionStatuses(
  aggregate: ResourceStatus,
  desired: ResourceStatus,
): [ConditionStatus, ConditionStatus, ConditionStatus] {
  if (aggregate === desired) return ['True', 'False', 'False'];
  if (aggregate === 'Unknown') return ['Unknown', 'Unknown', 'Unknown'];
  if (aggregate === 'Failed') return ['False', 'False', 'True'];
  return ['False', 'True', 'False'];
}

/** The condition with its `lastTransitionTime`: kept from `previous` while its status is unchanged, else `now`. */
function withTransitionTime(
  condition: Omit<PhaseCondition, 'lastTransitionTime'>,
  previous: readonly PhaseCondition[],
  now: string,
): PhaseCondition {
  const before = previous.find((c) => c.type === condition.type);
  const lastTransitionTime =
    before !== undefined && before.status === condition.status ? before.lastTransitionTime : now;
  return { ...condition, lastTransitionTime };
}

/**
 * Summarises a phase from its members' statuses (in inventory order).
 *
 * The phase status is kstatus' aggregate with `desired` (default Current), so a missing resource
 * (NotFound) shows as InProgress there, and an unreadable one as Unknown; `counts` and
 * `mostImportant` keep NotFound and Unknown apart. Conditions: `Ready` is True when the aggregate
 * is the desired status, `Reconciling` True when it is InProgress, `Stalled` True when it is Failed;
 * all three are Unknown when the aggregate is Unknown. Each condition's reason is the aggregate
 * status and its message the summary message. `lastTransitionTime` is kept from
 * `previousConditions` when that condition's status did not change, else it is `now`.
 */
export function summarizePhase(members: readonly PhaseMember[], options: SummarizePhaseOptions): PhaseSummary {
  const desired = options.desired ?? 'Current';
  // A status outside the six (bad input from an untyped caller) counts as Unknown rather than vanishing.
  const statuses = members.map((m) => (isResourceStatus(m.status) ? m.status : 'Unknown'));
  const counts = emptyCounts();
  for (const status of statuses) counts[status]++;
  const failedBy = options.failedBy ?? [];
  const aggregate = aggregateStatus(statuses, desired);
  const holder = desired === 'Current' ? options.holder : undefined;
  const holderDecides = holder !== undefined && isWorse(holder.status, aggregate);
  const status = failedBy.length > 0 ? 'Failed' : holderDecides ? holder.status : aggregate;
  const mostImportant = findMostImportant(members, desired);
  const resourcesMessage = summarizeMessage(members.length, members.length - counts[desired], desired, mostImportant);
  const causes = [...failedBy, ...(holderDecides ? [holder.message] : [])];
  const message = causes.length > 0 ? `${causes.join('; ')} (resources: ${resourcesMessage})` : resourcesMessage;
  const now = formatTime(options.now);
  const previous = options.previousConditions ?? [];
  const [ready, reconciling, stalled] = conditionStatuses(status, desired);
  const conditions = [
    withTransitionTime({ type: 'Ready', status: ready, reason: status, message }, previous, now),
    withTransitionTime({ type: 'Reconciling', status: reconciling, reason: status, message }, previous, now),
    withTransitionTime({ type: 'Stalled', status: stalled, reason: status, message }, previous, now),
  ];
  const summary: PhaseSummary = { status, counts, total: members.length, message, conditions };
  if (mostImportant !== undefined) summary.mostImportant = mostImportant;
  return summary;
}
