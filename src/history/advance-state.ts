/**
 * The stored state of a cluster after a plan was written, computed from the state before it and
 * the plan instead of read back: what the store would load after the snapshot commits. A worker
 * keeps it for the cluster's next snapshot, so a snapshot that changes every resource does not
 * read every resource back first. Plans whose writes create ids this cannot know (new phases,
 * manifests, reachability intervals) or delete phases give no state: the next snapshot loads it.
 */
import type { PhaseWrite, SnapshotPlan } from './plan-snapshot.ts';
import { revisionDigest } from './fingerprints.ts';
import { createStatusIntern, createTextIntern, type InternStatus } from './intern.ts';
import { phaseDetail, withConditionTimes } from './status-detail.ts';
import type {
  ObservedResource,
  OpenPhaseInterval,
  OpenResourceInterval,
  ResourceIntervalStatus,
  StoredClusterState,
  StoredPhase,
} from './types.ts';
import type { PhaseCondition } from '../status/phase-summary.ts';

/** Ids the writer gave the rows a plan opened. */
export interface WrittenIds {
  /** Resource id by phase id + NUL + resource key, for every resource the plan opened an interval for. */
  resources: ReadonlyMap<string, number>;
  /** The revision id of each opened resource interval (null: none), by resource id. */
  revisions: ReadonlyMap<number, number | null>;
}

/**
 * `state` after `plan` was written with `written` ids, or undefined when the plan wrote something
 * whose id or shape is only known to the store. Pure; `state` is not modified (phases the plan did
 * not touch are shared with it).
 */
export function advanceClusterState(
  state: StoredClusterState,
  plan: SnapshotPlan,
  written: WrittenIds,
): StoredClusterState | undefined {
  if (plan.reachability !== undefined) return undefined;
  const writes = new Map<number, PhaseWrite>();
  for (const w of plan.phases) {
    if (
      w.phaseId === undefined ||
      w.markDeleted === true ||
      w.openManifest !== undefined ||
      w.closeManifestIntervalId !== undefined
    )
      return undefined;
    writes.set(w.phaseId, w);
  }
  let found = 0;
  // The kept state outlives the observation: values most resources share are kept once, and a
  // resource that comes to say what others of its phase say shares their status (a state advanced
  // snapshot after snapshot would otherwise hold one per snapshot that changed a resource).
  const status = createStatusIntern(createTextIntern(), keptStatuses(state.phases, writes));
  const phases = state.phases.map((phase) => {
    const write = writes.get(phase.id);
    if (write === undefined) return phase;
    found += 1;
    return advancePhase(phase, write, plan.at, written, status);
  });
  if (found !== writes.size || phases.includes(undefined)) return undefined;
  return {
    ...state,
    lastGoodReadAt: plan.cluster.lastGoodReadAt ?? state.lastGoodReadAt,
    lastTick: plan.tick === 'start' ? { outcome: plan.outcome, stateHash: plan.stateHash } : state.lastTick,
    phases: phases as StoredPhase[],
  };
}

/** The statuses the resources of the phases written hold now. */
function* keptStatuses(
  phases: readonly StoredPhase[],
  writes: ReadonlyMap<number, PhaseWrite>,
): Generator<ResourceIntervalStatus> {
  for (const phase of phases) if (writes.has(phase.id)) for (const r of phase.resources) yield r.recorded;
}

function advancePhase(
  phase: StoredPhase,
  write: PhaseWrite,
  at: Date,
  written: WrittenIds,
  status: InternStatus,
): StoredPhase | undefined {
  // A deleted phase coming back has its resources loaded again (the store skips a deleted phase's).
  if (phase.deleted) return undefined;
  const next: StoredPhase = { ...phase };
  if (write.upsert !== undefined) {
    next.inventoryId = write.upsert.inventoryId;
    next.labels = write.upsert.labels;
  }
  if (write.openStatus !== undefined) next.status = storedPhaseStatus(write.openStatus, at);
  else if (write.closeStatusFrom !== undefined) next.status = null;
  if (write.closeResources.length === 0 && write.openResources.length === 0) return next;
  const opened = new Map<string, OpenResourceInterval>();
  for (const o of write.openResources) {
    const resourceId = o.resourceId ?? written.resources.get(`${phase.id}\u0000${o.resource.key}`);
    const revisionId = resourceId === undefined ? undefined : written.revisions.get(resourceId);
    if (resourceId === undefined || revisionId === undefined) return undefined;
    opened.set(o.resource.key, storedResource(resourceId, o.resource, revisionId, at, status));
  }
  // A new interval takes its resource's place, so the resources stay in the order they were
  // observed in: the next plan then pairs them without a map (planSnapshot). New ones go last.
  const closed = new Set(write.closeResources.map((r) => r.resourceKey));
  const resources: OpenResourceInterval[] = [];
  for (const r of phase.resources) {
    const replacement = opened.get(r.resourceKey);
    if (replacement !== undefined) {
      resources.push(replacement);
      opened.delete(r.resourceKey);
    } else if (!closed.has(r.resourceKey)) resources.push(r);
  }
  for (const r of opened.values()) resources.push(r);
  // Kept from tick to tick: a copy of exactly its length (an array grown by push keeps room for
  // 16 more, ~130 bytes per phase of one resource).
  next.resources = resources.slice();
  return next;
}

/** A phase's status as the store reads it back (its detail without what phaseDetail leaves out, put back). */
function storedPhaseStatus(s: NonNullable<PhaseWrite['openStatus']>, at: Date): OpenPhaseInterval {
  const { doc, conditionTimes } = phaseDetail(s);
  // What is stored is JSON: members that are undefined are not there when read back.
  const body = JSON.parse(JSON.stringify(doc.body)) as {
    summary?: Record<string, number>;
    conditions?: PhaseCondition[];
  };
  return {
    from: at,
    since: s.since ?? at,
    status: s.status,
    message: s.message,
    summary: body.summary ?? {},
    conditions: withConditionTimes(body.conditions ?? [], conditionTimes, { reason: s.status, message: s.message }),
    worstResource: s.worstResource ?? null,
    stale: s.stale,
  };
}

/** A resource's open interval as the store reads it back from its current row and status detail. */
function storedResource(
  resourceId: number,
  r: ObservedResource,
  revisionId: number | null,
  at: Date,
  status: InternStatus,
): OpenResourceInterval {
  return {
    resourceId,
    from: at,
    resourceKey: r.key,
    recorded: status({
      status: r.status,
      reason: r.reason ?? null,
      message: r.message,
      presence: r.presence,
      customHealth: r.customHealth?.health ?? null,
      applied: r.applied ?? null,
    }),
    generation: r.generation ?? null,
    observedGeneration: r.observedGeneration ?? null,
    // The revision's own digest when it has one: a watch cache holds that string anyway.
    revisionDigest: revisionId === null || r.revision === undefined ? null : revisionDigest(r.revision),
    revisionId,
  };
}
