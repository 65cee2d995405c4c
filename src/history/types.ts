/**
 * The history core's vocabulary: what one observation of a cluster saw, the intervals still open in
 * the store, and the plan that turns the one into writes against the other. Pure data.
 */
import type { HolderReading } from '../inventory/holder.ts';
import type { PhaseCondition } from '../status/phase-summary.ts';
import type { CustomHealthDetail, Presence, ResourceStatus, StatusCondition } from '../status/types.ts';
import type { AppliedStatus } from './applied.ts';

/**
 * Who a status change is about. `condition`: a phase's condition from a check (phaselog.yaml
 * `checks`), whose statuses are True/False/Unknown.
 */
export type ChangeScope = 'cluster' | 'phase' | 'resource' | 'condition';

/**
 * Reachability written as a cluster-scope status change; `Unobserved` for the span no snapshot
 * observed the cluster, written by the tick that ends it (src/history/observation.ts).
 */
export type ReachabilityStatus = 'Reachable' | 'Unreachable' | 'Unobserved';

/** A phase's identity within its cluster (unique in the store). */
export interface PhaseIdentity {
  /** cli-utils | resourcegroup | flux | argocd | selector | config | owner */
  sourceKind: string;
  namespace: string;
  name: string;
}

/** A redacted, content-addressed JSON document (a manifest or an object revision). */
export interface HashedDocument {
  /** sha256 of the canonical JSON, hex. */
  readonly hash: string;
  /**
   * The document. Absent when its source no longer holds it: a watch cache drops a revision's
   * body once a snapshot has stored it, so the store has it by `hash`.
   */
  readonly body?: Record<string, unknown>;
  /**
   * The same sha256 as 32 latin1 characters, when the document keeps it that way (watch-cache
   * records, src/kube/compact.ts): one flat string that a worker's kept state can share instead
   * of holding a 64-character hex copy. Absent: derive it from `hash`.
   */
  readonly digest?: string;
}

/** A phase's inventory as observed, redacted and hashed. */
export interface ObservedManifest {
  hash: string;
  source: Record<string, unknown>;
  /** Normalised, sorted entries. */
  entries: { group: string; kind: string; namespace: string; name: string; version?: string }[];
}

/** One resource's status as observed. */
export interface ObservedResource {
  /** group/kind/namespace/name */
  key: string;
  status: ResourceStatus;
  reason?: string;
  message: string;
  conditions: StatusCondition[];
  presence: Presence;
  generation?: number;
  observedGeneration?: number;
  customHealth?: CustomHealthDetail;
  /** What the tool that applied it recorded in the inventory (src/history/applied.ts), when it recorded anything. */
  applied?: AppliedStatus;
  /** The object's redacted metadata and spec, when it was read. */
  revision?: HashedDocument;
  /**
   * Set when the resource could not be read this tick for a transient reason (its kind's LIST
   * timed out, was throttled, failed on the server): its stored interval stays as it is, as
   * during a cluster outage, instead of flapping to Unknown and back.
   */
  unread?: boolean;
}

/** A phase's aggregate status as observed. */
export interface ObservedPhaseStatus {
  status: ResourceStatus;
  message: string;
  /** Members per status. */
  summary: Record<ResourceStatus, number>;
  conditions: PhaseCondition[];
  /** Key of the member most worth a look, if any is not Current. */
  worstResource?: string;
}

/** One phase as observed. */
export interface ObservedPhase {
  identity: PhaseIdentity;
  inventoryId: string;
  labels: Record<string, string>;
  manifest: ObservedManifest;
  status: ObservedPhaseStatus;
  resources: ObservedResource[];
  /** What the object holding the inventory says, recorded as the phase's `<source>/<Type>` conditions. */
  holder?: HolderReading;
}

/** Why a cluster could not be read. */
export interface ClusterReadFailure {
  /** A KubeErrorKind: UNREACHABLE, TIMEOUT, UNAUTHORIZED, ... */
  kind: string;
  message: string;
}

/** What one read of a cluster saw. `labels` are the cluster's configured labels, stored with it. */
export type ClusterObservation =
  | {
      outcome: 'ok';
      cluster: string;
      labels?: Record<string, string>;
      at: Date;
      phases: ObservedPhase[];
      /** Phase sources whose inventories could not be listed: their phases keep their state (never "deleted"). */
      unobservedSources: string[];
      /**
       * Only some phases were observed (a live snapshot of the phases a change affects): phases
       * left out are as they were, never "deleted", and the cluster's tick watermark stays.
       */
      live?: true;
    }
  | { outcome: 'unreachable'; cluster: string; labels?: Record<string, string>; at: Date; error: ClusterReadFailure };

/**
 * What a resource interval records of its resource's status besides the generations and revision.
 * Most resources of a cluster record one of a few such values: a kept state holds each once
 * (src/history/intern.ts), shared by its intervals, so nothing may modify one.
 */
export interface ResourceIntervalStatus {
  status: string;
  reason: string | null;
  message: string;
  presence: string;
  customHealth: string | null;
  /** The applier's status of the member (shared, frozen), null when its inventory records none. */
  applied: AppliedStatus | null;
}

/** A resource interval still open in the store, known by its resource and start. */
export interface OpenResourceInterval {
  resourceId: number;
  from: Date;
  resourceKey: string;
  /** One object for five fields: a worker keeps an interval per resource, and each field of it costs a slot. */
  recorded: ResourceIntervalStatus;
  generation: number | null;
  observedGeneration: number | null;
  /**
   * sha256 of the stored revision as 32 latin1 characters ({@link HashedDocument.digest}), not the
   * hex `hash`: a worker keeps one per resource between snapshots, and this is half the heap (the
   * watch cache's own string when the revision came from one).
   */
  revisionDigest: string | null;
  /** Id of the stored revision (`revisionDigest`), when the store loaded it: an unchanged revision is not stored again. */
  revisionId?: number | null;
}

/** A phase status interval still open in the store, known by its phase and start. */
export interface OpenPhaseInterval {
  from: Date;
  /** When the run of this status began (earlier intervals of the same status, stale or not, with no gap). */
  since: Date;
  status: string;
  message: string;
  summary: Record<string, number>;
  conditions: PhaseCondition[];
  worstResource: string | null;
  stale: boolean;
}

/** What the store holds about one phase of the cluster. */
export interface StoredPhase {
  id: number;
  identity: PhaseIdentity;
  inventoryId: string;
  labels: Record<string, string>;
  deleted: boolean;
  manifest: { intervalId: number; hash: string } | null;
  status: OpenPhaseInterval | null;
  resources: OpenResourceInterval[];
}

/** What the store holds about one cluster before a snapshot. */
export interface StoredClusterState {
  clusterId: number;
  lastGoodReadAt: Date | null;
  reachability: { id: number; reachable: boolean; errorKind: string | null } | null;
  /** The cluster's current observation run, if any. */
  lastTick: { outcome: string; stateHash: string } | null;
  phases: StoredPhase[];
}

/**
 * A status change written to the change log, `seq` being its place in the log. One shape from the
 * log to the API: what a snapshot's append returns, what the publisher sends (the Redis event is
 * its encoding, src/pubsub/change-event.ts), what the change feed delivers and what the change-log
 * reader returns. A change still to be written is a PlannedChange (src/history/plan-snapshot.ts).
 */
export interface StatusChange {
  seq: bigint;
  at: Date;
  cluster: string;
  clusterId: number;
  phaseId: number | null;
  phase: PhaseIdentity | null;
  scope: ChangeScope;
  resourceKey: string | null;
  /** The condition's type, for condition-scope changes (absent or null otherwise). */
  conditionType?: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  message: string;
}
