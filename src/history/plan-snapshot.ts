/**
 * The write path's brain: compares one observation of a cluster with the intervals still open in
 * the store and says exactly what to write. Equal fingerprints write nothing; a difference closes
 * one interval and opens one; a visible difference (status, reason, message) also appends one
 * status change. An unreachable cluster changes its reachability only: its phases keep their last
 * statuses, marked stale since the last good read, and no resource interval is touched.
 */
import { createHash } from 'node:crypto';
import { appliedText, describeAppliedChange, sameApplied } from './applied.ts';
import { canonicalJson, hashStrings } from './canonical-hash.ts';
import {
  fingerprintObservedPhase,
  fingerprintStoredPhase,
  storedMatchesObserved,
  isVisibleChange,
  revisionDigest,
} from './fingerprints.ts';
import type {
  ChangeScope,
  ClusterObservation,
  ObservedManifest,
  ObservedPhase,
  ObservedPhaseStatus,
  ObservedResource,
  OpenPhaseInterval,
  OpenResourceInterval,
  PhaseIdentity,
  ReachabilityStatus,
  StoredClusterState,
  StoredPhase,
} from './types.ts';
import type { PhaseCondition } from '../status/phase-summary.ts';

/** A status change to append to the change log. */
export interface PlannedChange {
  scope: ChangeScope;
  phase?: PhaseIdentity;
  /** The stored phase's id, when it has one (the writer learns the others'). */
  phaseId?: number;
  resourceKey?: string;
  /** The stored resource's id, when it had an interval (the writer learns the others'). */
  resourceId?: number;
  fromStatus: string | null;
  toStatus: string | null;
  message: string;
  /**
   * The message is the change's own, not the message of the status it opened: a change of a
   * member's applier status (`applied: actuation Pending → Succeeded`), whose from and to are the
   * member's kstatus status, unchanged by it.
   */
  ownMessage?: true;
}

/** A phase status interval to open. */
export interface PhaseIntervalInput extends ObservedPhaseStatus {
  stale: boolean;
  staleSince?: Date;
  /**
   * When the run of this status began: kept from the status it replaces when that had the same
   * status (staleness aside), else the snapshot's time (absent).
   */
  since?: Date;
}

/** Everything to write about one phase. Phases with nothing to write are not in the plan. */
export interface PhaseWrite {
  identity: PhaseIdentity;
  /** Absent when the phase is new and must be created. */
  phaseId?: number;
  /** Create the phase, or set its inventory id and labels, clear `deletedAt`, move `lastSeenAt`. */
  upsert?: { inventoryId: string; labels: Record<string, string> };
  markDeleted?: boolean;
  closeManifestIntervalId?: number;
  openManifest?: ObservedManifest;
  /** Start of the open status interval to close. */
  closeStatusFrom?: Date;
  openStatus?: PhaseIntervalInput;
  /** Open resource intervals to close, by resource and start. */
  closeResources: ResourceIntervalRef[];
  /** Resources to open an interval for, with their stored id when they have one. */
  openResources: OpenedResource[];
}

/** An interval of a stored resource, by resource id and start. */
export interface ResourceIntervalRef {
  resourceId: number;
  from: Date;
  /** The resource's key (its change, if any, names it). */
  resourceKey: string;
}

/** A resource interval to open; `resourceId` is absent for a resource new to the phase. */
export interface OpenedResource {
  resourceId?: number;
  /**
   * The stored revision the resource had, when the observed revision is the same one (same hash):
   * the writer reuses it instead of storing the object again. Absent otherwise.
   */
  revisionId?: number;
  resource: ObservedResource;
}

/** What a snapshot writes, in one transaction. */
export interface SnapshotPlan {
  at: Date;
  outcome: 'ok' | 'unreachable';
  /** Hash of everything observed; an equal hash extends the current observation run. */
  stateHash: string;
  /**
   * Extend the cluster's current observation run, or end it and start a new one; `keep` for a
   * live observation (a live snapshot of some phases), which is no tick: the run and the tick
   * watermark stay, the run only marked as no longer matching its hash when the snapshot writes
   * something, so the next tick diffs the whole cluster.
   */
  tick: 'extend' | 'start' | 'keep';
  reachability?: { closeId?: number; open: { reachable: boolean; errorKind?: string; message: string } };
  cluster: { reachable: boolean; lastGoodReadAt?: Date };
  phases: PhaseWrite[];
  changes: PlannedChange[];
}

/** Key of a phase identity, unique within a cluster. */
export function phaseKey(identity: PhaseIdentity): string {
  return `${identity.sourceKind}\u0000${identity.namespace}\u0000${identity.name}`;
}

/**
 * Plans the writes that record `observation` on top of `stored`; `stateHash` when the caller has
 * it already (a live observation's is never stored, so its caller need not compute it). Pure.
 */
export function planSnapshot(
  stored: StoredClusterState,
  observation: ClusterObservation,
  stateHash: string = hashObservation(observation),
): SnapshotPlan {
  const plan =
    observation.outcome === 'ok'
      ? planReadable(stored, observation, stateHash)
      : planUnreachable(stored, observation, stateHash);
  if (plan.tick === 'keep') return plan;
  const lastTick = stored.lastTick;
  return {
    ...plan,
    tick:
      lastTick !== null && lastTick.outcome === plan.outcome && lastTick.stateHash === stateHash ? 'extend' : 'start',
  };
}

/**
 * Hash of everything an observation says (per phase and resource fingerprints, manifests, failed
 * sources; for an outage, its error kind). Equal hashes mean a snapshot would change nothing.
 */
export function hashObservation(observation: ClusterObservation): string {
  if (observation.outcome === 'unreachable') return hashStrings(['unreachable', observation.error.kind]);
  // Phases in key order, each followed by its resources in key order: the same observation hashes
  // the same whatever order the API listed things in. One text, hashed at once: a sha256 update and
  // a JSON array per resource would cost more than everything else the hash does. Every variable
  // field is length-prefixed, so the text reads back one way only.
  // Revisions go in as their latin1 digest, as planning compares them: a watch cache keeps that
  // form, so a watch-mode tick makes no hex string per resource.
  let text = field([...observation.unobservedSources].sort().join(','));
  const phases = observation.phases
    .map((phase) => ({ key: phaseKey(phase.identity), phase }))
    .sort((a, b) => compareText(a.key, b.key));
  for (const { key, phase } of phases) {
    text += `P${field(key)}${field(phase.manifest.hash)}${field(phase.inventoryId)}${field(canonicalJson(phase.labels))}${field(fingerprintObservedPhase(phase.status))}`;
    for (const r of inKeyOrder(phase.resources)) {
      text += `R${field(r.key)}${field(r.status)}${optional(r.reason)}${field(r.message)}${field(r.presence)}${optional(r.generation)}${optional(r.observedGeneration)}${optional(r.revision === undefined ? undefined : revisionDigest(r.revision))}${optional(r.customHealth?.health)}${optional(r.applied === undefined ? undefined : appliedText(r.applied))}${r.unread === true ? 'u' : 'r'}`;
    }
  }
  return createHash('sha256').update(text).digest('hex');
}

/** A field of the observation's hashed text: its length, then itself. */
function field(value: string): string {
  return `${value.length}:${value}`;
}

/** An optional field: `-` when absent (a present one starts with a digit). */
function optional(value: string | number | undefined | null): string {
  return value === undefined || value === null ? '-' : field(String(value));
}

/** `resources` sorted by key: as given when they are already (the usual case), else a sorted copy. */
function inKeyOrder(resources: readonly ObservedResource[]): readonly ObservedResource[] {
  for (let i = 1; i < resources.length; i += 1) {
    if (compareText((resources[i - 1] as ObservedResource).key, (resources[i] as ObservedResource).key) > 0)
      return [...resources].sort((a, b) => compareText(a.key, b.key));
  }
  return resources;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The plan for an observation whose hash equals the current run's: extend that run and move the
 * cluster's last good read, both on the cluster's row. No interval is read or written, so an
 * unchanged tick writes one row.
 */
export function planUnchangedTick(observation: ClusterObservation, stateHash: string): SnapshotPlan {
  return {
    at: observation.at,
    outcome: observation.outcome,
    stateHash,
    tick: 'extend',
    cluster: observation.outcome === 'ok' ? { reachable: true, lastGoodReadAt: observation.at } : { reachable: false },
    phases: [],
    changes: [],
  };
}

function planUnreachable(
  stored: StoredClusterState,
  observation: Extract<ClusterObservation, { outcome: 'unreachable' }>,
  stateHash: string,
): SnapshotPlan {
  const plan = basePlan(observation.at, 'unreachable', stateHash);
  plan.cluster = { reachable: false };
  if (stored.reachability === null || stored.reachability.reachable) {
    plan.reachability = {
      open: { reachable: false, errorKind: observation.error.kind, message: observation.error.message },
    };
    if (stored.reachability !== null) plan.reachability.closeId = stored.reachability.id;
    plan.changes.push(
      reachabilityChange(stored.reachability === null ? null : 'Reachable', 'Unreachable', observation.error.message),
    );
  }
  for (const phase of stored.phases) {
    if (phase.deleted || phase.status === null || phase.status.stale) continue;
    const openStatus: PhaseIntervalInput = { ...statusOf(phase.status), stale: true, since: phase.status.since };
    if (stored.lastGoodReadAt !== null) openStatus.staleSince = stored.lastGoodReadAt;
    plan.phases.push({ ...emptyWrite(phase.identity, phase.id), closeStatusFrom: phase.status.from, openStatus });
  }
  return plan;
}

function planReadable(
  stored: StoredClusterState,
  observation: Extract<ClusterObservation, { outcome: 'ok' }>,
  stateHash: string,
): SnapshotPlan {
  const plan = basePlan(observation.at, 'ok', stateHash);
  if (observation.live) plan.tick = 'keep';
  plan.cluster = { reachable: true, lastGoodReadAt: observation.at };
  if (stored.reachability === null || !stored.reachability.reachable) {
    plan.reachability = { open: { reachable: true, message: '' } };
    if (stored.reachability !== null) plan.reachability.closeId = stored.reachability.id;
    plan.changes.push(reachabilityChange(stored.reachability === null ? null : 'Unreachable', 'Reachable', ''));
  }
  const storedByKey = new Map(stored.phases.map((p) => [phaseKey(p.identity), p]));
  const seen = new Set<string>();
  for (const phase of observation.phases) {
    const key = phaseKey(phase.identity);
    seen.add(key);
    const write = planObservedPhase(storedByKey.get(key), phase, plan.changes, stored.lastGoodReadAt);
    if (write !== undefined) plan.phases.push(write);
  }
  // Phases a live observation left out were not looked at: they are not gone.
  if (observation.live) return plan;
  const unobserved = new Set(observation.unobservedSources);
  for (const phase of stored.phases) {
    if (phase.deleted || seen.has(phaseKey(phase.identity)) || unobserved.has(phase.identity.sourceKind)) continue;
    plan.phases.push(planDeletedPhase(phase, plan.changes));
  }
  return plan;
}

/** A plan with nothing to write yet; {@link planSnapshot} says whether it extends the current run. */
function basePlan(at: Date, outcome: 'ok' | 'unreachable', stateHash: string): SnapshotPlan {
  return { at, outcome, stateHash, tick: 'start', cluster: { reachable: outcome === 'ok' }, phases: [], changes: [] };
}

function emptyWrite(identity: PhaseIdentity, phaseId: number | undefined): PhaseWrite {
  const write: PhaseWrite = { identity, closeResources: [], openResources: [] };
  if (phaseId !== undefined) write.phaseId = phaseId;
  return write;
}

function planObservedPhase(
  stored: StoredPhase | undefined,
  phase: ObservedPhase,
  changes: PlannedChange[],
  lastGoodReadAt: Date | null,
): PhaseWrite | undefined {
  const live = stored !== undefined && !stored.deleted ? stored : undefined;
  const write = emptyWrite(phase.identity, stored?.id);
  const ident = { inventoryId: phase.inventoryId, labels: phase.labels };
  if (live === undefined) write.upsert = ident;

  if (live?.manifest?.hash !== phase.manifest.hash) {
    if (live?.manifest) write.closeManifestIntervalId = live.manifest.intervalId;
    write.openManifest = phase.manifest;
  }

  const storedStatus = live?.status ?? null;
  const partlyUnread = phase.resources.some((r) => r.unread === true);
  if (partlyUnread && storedStatus !== null) {
    // Some members could not be read: the phase keeps its last status, marked stale, until they can.
    if (!storedStatus.stale) {
      write.closeStatusFrom = storedStatus.from;
      write.openStatus = {
        ...statusOf(storedStatus),
        stale: true,
        since: storedStatus.since,
        ...(lastGoodReadAt !== null ? { staleSince: lastGoodReadAt } : {}),
      };
    }
  } else if (storedStatus === null || fingerprintStoredPhase(storedStatus) !== fingerprintObservedPhase(phase.status)) {
    if (storedStatus !== null) write.closeStatusFrom = storedStatus.from;
    write.openStatus = {
      ...phase.status,
      conditions: carryTransitionTimes(storedStatus?.conditions ?? [], phase.status.conditions),
      stale: false,
    };
    if (storedStatus !== null && storedStatus.status === phase.status.status)
      write.openStatus.since = storedStatus.since;
    if (storedStatus === null || isVisibleChange(storedStatus, phase.status)) {
      changes.push({
        scope: 'phase',
        phase: phase.identity,
        ...idOf(stored),
        fromStatus: storedStatus?.status ?? null,
        toStatus: phase.status.status,
        message: phase.status.message,
      });
    }
  }

  // Every resource of a cluster passes here on every tick: plain loops and fixed-shape objects.
  const planning: PhasePlanning = { write, changes, phase: phase.identity, phaseId: stored?.id };
  const storedResources = live?.resources ?? [];
  if (inSameOrder(storedResources, phase.resources)) {
    // The usual tick: the same resources as stored, listed in the same order; no map needed.
    for (let i = 0; i < storedResources.length; i += 1)
      planStoredResource(planning, storedResources[i] as OpenResourceInterval, phase.resources[i] as ObservedResource);
    return finishPhaseWrite(write, live, phase, ident);
  }
  const openByKey = new Map<string, OpenResourceInterval>();
  for (const r of storedResources) openByKey.set(r.resourceKey, r);
  for (const resource of phase.resources) {
    const open = openByKey.get(resource.key);
    if (open === undefined) {
      write.openResources.push({ resource });
      changes.push(
        resourceChange(planning, { key: resource.key, from: null, to: resource.status, message: resource.message }),
      );
      continue;
    }
    openByKey.delete(resource.key);
    planStoredResource(planning, open, resource);
  }
  for (const gone of openByKey.values()) {
    write.closeResources.push({ resourceId: gone.resourceId, from: gone.from, resourceKey: gone.resourceKey });
    changes.push(
      resourceChange(planning, {
        key: gone.resourceKey,
        id: gone.resourceId,
        from: gone.recorded.status,
        to: null,
        message: 'removed from the inventory',
      }),
    );
  }

  return finishPhaseWrite(write, live, phase, ident);
}

/** True when `stored` and `observed` name the same resources in the same order. */
function inSameOrder(stored: readonly OpenResourceInterval[], observed: readonly ObservedResource[]): boolean {
  if (stored.length !== observed.length) return false;
  for (let i = 0; i < stored.length; i += 1)
    if ((stored[i] as OpenResourceInterval).resourceKey !== (observed[i] as ObservedResource).key) return false;
  return true;
}

/** The phase being planned: its write, the plan's changes, and who they are about. */
interface PhasePlanning {
  write: PhaseWrite;
  changes: PlannedChange[];
  phase: PhaseIdentity;
  /** The stored phase's id, when it is stored. */
  phaseId: number | undefined;
}

/**
 * Plans observed `resource` against its open interval `open`: nothing when it extends it, else its
 * end, the next one and (when visible) a change; a change of its applier status is a change of its
 * own, after the status change if there is one, so each change-log row says one thing.
 */
function planStoredResource(planning: PhasePlanning, open: OpenResourceInterval, resource: ObservedResource): void {
  if (resource.unread === true || storedMatchesObserved(open, resource)) return;
  planning.write.closeResources.push({ resourceId: open.resourceId, from: open.from, resourceKey: open.resourceKey });
  planning.write.openResources.push(openedFrom(open, resource));
  if (isVisibleChange(open.recorded, resource)) {
    planning.changes.push(
      resourceChange(planning, {
        key: resource.key,
        id: open.resourceId,
        from: open.recorded.status,
        to: resource.status,
        message: resource.message,
      }),
    );
  }
  // An interval that recorded no applier status (its inventory recorded none, or it was written
  // before phaselog kept one) takes one without a change row: after an upgrade, the first tick
  // would otherwise log "none → Succeeded" for every member of every inventory.
  if (open.recorded.applied != null && !sameApplied(open.recorded.applied, resource.applied)) {
    planning.changes.push({
      ...resourceChange(planning, {
        key: resource.key,
        id: open.resourceId,
        from: resource.status,
        to: resource.status,
        message: describeAppliedChange(open.recorded.applied, resource.applied),
      }),
      ownMessage: true,
    });
  }
}

/** `write` with its identity upsert when it writes anything or the phase's inventory id or labels moved; undefined when it writes nothing. */
function finishPhaseWrite(
  write: PhaseWrite,
  live: StoredPhase | undefined,
  phase: ObservedPhase,
  ident: NonNullable<PhaseWrite['upsert']>,
): PhaseWrite | undefined {
  const changed =
    write.openManifest !== undefined ||
    write.openStatus !== undefined ||
    write.closeResources.length > 0 ||
    write.openResources.length > 0;
  if (live !== undefined && changed) write.upsert = ident;
  if (live !== undefined && !changed && !sameIdentityDetails(live, phase)) write.upsert = ident;
  return write.upsert !== undefined || changed ? write : undefined;
}

/** A resource's change in the phase being planned; ids absent (undefined) where the store has none yet. */
function resourceChange(
  { phase, phaseId }: PhasePlanning,
  change: { key: string; id?: number; from: string | null; to: string | null; message: string },
): PlannedChange {
  return {
    scope: 'resource',
    phase,
    phaseId,
    resourceKey: change.key,
    resourceId: change.id,
    fromStatus: change.from,
    toStatus: change.to,
    message: change.message,
  };
}

/** The stored phase's id for a change, when it is stored. */
function idOf(stored: StoredPhase | undefined): { phaseId?: number } {
  return stored === undefined ? {} : { phaseId: stored.id };
}

/** A stored resource's next interval; its revision id is kept when the revision did not change. */
function openedFrom(open: OpenResourceInterval, resource: ObservedResource): OpenedResource {
  const opened: OpenedResource = { resourceId: open.resourceId, resource };
  const sameRevision =
    open.revisionDigest !== null &&
    resource.revision !== undefined &&
    revisionDigest(resource.revision) === open.revisionDigest;
  if (sameRevision && typeof open.revisionId === 'number') opened.revisionId = open.revisionId;
  return opened;
}

function sameIdentityDetails(stored: StoredPhase, phase: ObservedPhase): boolean {
  return stored.inventoryId === phase.inventoryId && canonicalJson(stored.labels) === canonicalJson(phase.labels);
}

function planDeletedPhase(phase: StoredPhase, changes: PlannedChange[]): PhaseWrite {
  const write = emptyWrite(phase.identity, phase.id);
  write.markDeleted = true;
  if (phase.manifest !== null) write.closeManifestIntervalId = phase.manifest.intervalId;
  if (phase.status !== null) write.closeStatusFrom = phase.status.from;
  write.closeResources = phase.resources.map((r) => ({
    resourceId: r.resourceId,
    from: r.from,
    resourceKey: r.resourceKey,
  }));
  changes.push({
    scope: 'phase',
    phase: phase.identity,
    phaseId: phase.id,
    fromStatus: phase.status?.status ?? null,
    toStatus: null,
    message: 'inventory deleted',
  });
  return write;
}

function statusOf(open: OpenPhaseInterval): ObservedPhaseStatus {
  const status: ObservedPhaseStatus = {
    status: open.status as ObservedPhaseStatus['status'],
    message: open.message,
    summary: open.summary as ObservedPhaseStatus['summary'],
    conditions: open.conditions,
  };
  if (open.worstResource !== null) status.worstResource = open.worstResource;
  return status;
}

/**
 * The cluster-scope change a tick appends when it ends a span no snapshot observed the cluster
 * (from `gapFrom`, see src/history/observation.ts): from Unobserved to what the tick read.
 */
export function unobservedSpanChange(gapFrom: Date, outcome: SnapshotPlan['outcome']): PlannedChange {
  return reachabilityChange(
    'Unobserved',
    outcome === 'ok' ? 'Reachable' : 'Unreachable',
    `not observed from ${gapFrom.toISOString()} until this snapshot`,
  );
}

function reachabilityChange(from: ReachabilityStatus | null, to: ReachabilityStatus, message: string): PlannedChange {
  return { scope: 'cluster', fromStatus: from, toStatus: to, message };
}

/** A condition whose status did not change keeps the time it last changed. */
function carryTransitionTimes(previous: readonly PhaseCondition[], next: readonly PhaseCondition[]): PhaseCondition[] {
  return next.map((condition) => {
    const before = previous.find((p) => p.type === condition.type);
    return before !== undefined && before.status === condition.status
      ? { ...condition, lastTransitionTime: before.lastTransitionTime }
      : condition;
  });
}
