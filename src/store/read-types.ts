/**
 * Domain types of the read side: what the history store answers about phases, resources, intervals,
 * manifests (status changes are src/history/types.ts' StatusChange). Plain data; no Prisma types.
 */
import type { AppliedStatus } from '../history/applied.ts';
import type { ClusterObservationFacts } from '../history/observation.ts';

/** Which clusters and namespaces a caller may see. An empty list means "all". */
export interface AccessScope {
  clusters: readonly string[];
  namespaces: readonly string[];
}

/** Sees everything. */
export const FULL_ACCESS: AccessScope = { clusters: [], namespaces: [] };

/** A phase's status interval (the phase's aggregate status over [from, to)). */
export interface PhaseStatusRecord {
  phaseId: number;
  status: string;
  message: string;
  /** Members per status. */
  summary: Record<string, number>;
  conditions: unknown[];
  /** group/kind/namespace/name of the member most worth a look. */
  worstResource: string | null;
  /** The cluster could not be read (or was not observed): the status is the last one known. */
  stale: boolean;
  staleSince: Date | null;
  /** The cluster was not observed during the interval (see PhaseStatusInterval.unobserved). */
  unobserved: boolean;
  from: Date;
  to: Date | null;
}

/** What a phase interval's status detail says (message, member counts, worst member). */
export interface PhaseIntervalDetail {
  message: string;
  /** Members per status. */
  summary: Record<string, number>;
  worstResource: string | null;
}

/**
 * One interval of a phase's history page: what the API shows of it (no conditions), read without
 * the interval's condition times.
 */
export interface PhaseIntervalRecord {
  /** Its start in epoch milliseconds (unique within the phase). */
  id: string;
  status: string;
  stale: boolean;
  /** The cluster was not observed during the interval (see PhaseStatusInterval.unobserved). */
  unobserved: boolean;
  from: Date;
  to: Date | null;
  /** Undefined when the read was asked to leave the detail out. */
  detail: PhaseIntervalDetail | undefined;
}

/** A phase with its current (open) status interval, if any. */
export interface PhaseRecord {
  id: number;
  cluster: string;
  clusterReachable: boolean | null;
  clusterLastGoodReadAt: Date | null;
  /** What decides whether the cluster is observed now (src/history/observation.ts). */
  clusterObservation: ClusterObservationFacts;
  source: string;
  namespace: string;
  name: string;
  inventoryId: string;
  labels: Record<string, string>;
  firstSeenAt: Date;
  lastSeenAt: Date;
  deletedAt: Date | null;
  current: PhaseStatusRecord | null;
  /** When the run of the current status began (the phase's `since`), when the read included it. */
  since?: Date | null;
  /**
   * The current status of the current status's worst resource, with when its run began, when the
   * read included it (a page of phases reads it in the same statement); null when there is none.
   */
  worstResource?: ResourceRecord | null;
  /** A history page read in the same statement as the phase, when the lookup asked for one ({@link PhaseHistoryAsk}). */
  history?: PhaseHistoryPage;
}

/**
 * A page of a phase's history to read with the phase lookup itself (one statement for both), as
 * `HistoryReader.listPhaseIntervals` reads it.
 */
export interface PhaseHistoryAsk {
  /** Identifies the ask for the caller (which field, which arguments); handed back with the page. */
  key: string;
  range: { from: Date; to: Date };
  first: number;
  /** Start after the interval that starts here (the cursor). */
  after?: Date;
  /** With each interval's message, summary and worst resource. */
  detail: boolean;
}

/** The page a {@link PhaseHistoryAsk} asked, under the ask's key. */
export interface PhaseHistoryPage {
  key: string;
  page: Page<PhaseIntervalRecord>;
}

/** One resource's status interval. */
export interface ResourceRecord {
  phaseId: number;
  /** group/kind/namespace/name */
  key: string;
  status: string;
  reason: string | null;
  message: string;
  conditions: unknown[];
  presence: string;
  generation: number | null;
  observedGeneration: number | null;
  customHealth: Record<string, unknown> | null;
  /** What the tool that applied the member recorded in its inventory then (src/history/applied.ts); null when nothing. */
  applied: AppliedStatus | null;
  revisionId: number | null;
  from: Date;
  to: Date | null;
  /** When the run of this status began (earlier intervals of the same status with no gap count), when the read included it. */
  since?: Date;
  /** Set by the API where it reads a phase's resources: whose cluster they are in and the moment read (for `revision`). */
  view?: ResourceView;
}

/** How many members of a phase had one value of one applier status field (strategy, actuation, reconcile, sync). */
export interface AppliedCountRecord {
  phaseId: number;
  field: string;
  value: string;
  count: number;
}

/** Where and when a resource was read: what its stored revision is answered for. */
export interface ResourceView {
  cluster: string;
  at: Date;
  /** Read as of now (not at a past moment): live data such as resource trees applies. */
  live?: boolean;
}

/** One normalised inventory entry. */
export interface ManifestEntry {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  version?: string;
}

/** A manifest a phase had over [from, to). */
export interface ManifestVersionRecord {
  /** The PhaseManifest interval's id. */
  id: number;
  phaseId: number;
  hash: string;
  entries: ManifestEntry[];
  source: Record<string, unknown>;
  from: Date;
  to: Date | null;
  /** The manifest before this one, if any (for diffs). */
  previous: { hash: string; entries: ManifestEntry[]; from: Date } | null;
}

/** A page of items read with keyset pagination; `hasMore` says whether another page follows. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}
