/**
 * Shapes of what phaselog's GraphQL API answers, as its two clients read them: the CLI (src/cli)
 * and the web UI (web/). Types only, so the browser bundle can share them. Each describes the
 * fields both clients select; a client that selects more extends it.
 */

/** A phase and its current status, as lists and pages show it. */
export interface PhaseAnswer {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  source: string;
  labels: Record<string, string>;
  status: string | null;
  message: string;
  since: string | null;
  stale: boolean;
  staleReason: string | null;
  lastGoodReadAt: string | null;
}

/** An entry of a phase's change log (`Phase.changes`): its own status change, a resource's, or a condition's. */
export interface ChangeLogEntry {
  seq: string;
  at: string;
  scope: string;
  /** `group/Kind/namespace/name` of the resource; null for the phase's own changes. */
  resourceKey: string | null;
  /** The condition's type, for condition changes (conditions from checks); their statuses are True/False/Unknown. */
  conditionType?: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  message: string;
}

/** A cluster as `clusters` lists it. */
export interface ClusterSummary {
  name: string;
  labels: Record<string, string>;
  state: string;
  reachable: boolean | null;
  lastGoodReadAt: string | null;
  lastObservedAt: string | null;
  /** The worker reading it now (asked for by `-o wide` and the data formats). */
  owner?: { worker: string; host: string | null; since: string } | null;
}

/** One side of a member change (`ObjectChange.before` / `after`). */
export interface ObjectRevisionRef {
  hash: string | null;
  at: string;
}

/** A member added, removed or revised in a manifest version (`ManifestVersion.changes`). */
export interface ObjectChangeAnswer {
  key: string;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  change: 'ADDED' | 'REMOVED' | 'CHANGED';
  before: ObjectRevisionRef | null;
  after: ObjectRevisionRef | null;
  /** Unified diff with `--- before (...)` / `+++ after (...)` headers; '' when alike; null when not stored or withheld. */
  diff: string | null;
  /** The token may not read the member's namespace. */
  withheld: boolean;
}

/** Resources per status, as `summary { current inProgress failed terminating notFound unknown total }` answers them. */
export interface StatusCounts {
  current: number;
  inProgress: number;
  failed: number;
  terminating: number;
  notFound: number;
  unknown: number;
  total: number;
}
