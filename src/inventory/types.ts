import type { HolderReading } from './holder.ts';

/**
 * Identity of an object listed in an inventory: cli-utils' ObjMetadata (group, kind, namespace,
 * name). `group` is '' for the core group and `namespace` is '' for cluster-scoped objects.
 */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  /** API version, when the inventory records it (Flux `v`, Argo `version`). */
  version?: string;
}

/** Where a phase's inventory comes from. */
export type PhaseSource = 'cli-utils' | 'resourcegroup' | 'flux' | 'argocd' | 'selector' | 'config' | 'owner';

/** Why part (or all) of an inventory could not be read. Matched on `code`, never on `message`. */
export type InventoryErrorCode =
  | 'MALFORMED_ID'
  | 'MALFORMED_ENTRY'
  | 'MALFORMED_STATUS_VALUE'
  | 'MALFORMED_INVENTORY'
  | 'MALFORMED_SELECTOR'
  | 'UNSUPPORTED_OBJECT'
  /** A selector phase's kind could not be listed, so its members are not all known. */
  | 'SELECTOR_READ_FAILED'
  /** An owner phase's objects own each other in a loop (see src/inventory/owner-phase.ts). */
  | 'OWNER_REFERENCE_CYCLE'
  /** An owner phase's object names an owner uid that does not exist. */
  | 'DANGLING_OWNER_REFERENCE'
  /** An owner phase's owned kind could not be listed, so its members are not all known. */
  | 'OWNED_READ_FAILED'
  /** An owner of another kind has the same namespace and name as this owner phase's, and is not recorded. */
  | 'OWNER_NAME_TAKEN';

/** One problem found while parsing an inventory; `entry` names the offending entry when there is one. */
export interface InventoryError {
  code: InventoryErrorCode;
  message: string;
  /** The raw entry as written in the inventory (an ObjMetadata string, or `resources[3]`). */
  entry?: string;
}

/** What the applying tool recorded about one entry, beyond its identity. All fields optional. */
export interface EntryDetail {
  /** cli-utils / kpt actuation data (`strategy`, `actuation`, `reconcile`). */
  strategy?: string;
  actuation?: string;
  reconcile?: string;
  /** Argo CD sync status of the resource (`Synced`, `OutOfSync`, ...). */
  syncStatus?: string;
  /** Argo CD marks hook resources; they are not part of the steady-state set. */
  hook?: boolean;
}

/** A Kubernetes label selector (`matchLabels` + `matchExpressions`). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** One `matchExpressions` requirement. */
export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** A group + kind pair, the unit a selector phase lists. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** For selector phases: which objects belong to the phase, resolved against the cluster. */
export interface PhaseSelector {
  selector: LabelSelector;
  kinds: GroupKind[];
  /** Namespaces to look in; empty means all namespaces. */
  namespaces: string[];
}

/**
 * A phase: a set of resources applied together, normalised from whichever inventory recorded it.
 * `entries` are de-duplicated and sorted by {@link refKey} order so two reads of the same
 * inventory compare equal.
 */
export interface Phase {
  source: PhaseSource;
  /** Stable identity of the phase within its cluster and source (see each parser for how). */
  id: string;
  /** Human name of the phase. */
  name: string;
  /** Namespace of the inventory object ('' for config phases without one). */
  namespace: string;
  labels: Record<string, string>;
  entries: ObjectRef[];
  /**
   * Per-entry data the tool recorded, keyed by {@link refKey}. A parsed phase builds it on each
   * read (phases are kept from tick to tick, and only tools and tests read it).
   */
  details: Record<string, EntryDetail>;
  /** Replaced, never added to: phases without errors share one frozen empty list. */
  errors: readonly InventoryError[];
  /** The inventory object itself, when the phase was read from one. */
  inventoryRef?: ObjectRef;
  /** Set for selector phases only; their entries come from the cluster. */
  selector?: PhaseSelector;
  /** Set for owner phases only: the owner's kind and the kinds whose objects can join it. */
  owner?: { kind: GroupKind; ownedKinds: GroupKind[] };
  /**
   * What the object holding the inventory says of the deployment (a Kustomization's Ready, an
   * Application's health, the applier's actuation, an owner's readiness): see src/inventory/holder.ts.
   * Absent for sources without a holder status (selector, config phases, inventories that record no actuation).
   */
  holder?: HolderReading;
}

/** The result of parsing an inventory object: a phase, or one clear error for the object as a whole. */
export type PhaseParseResult = { ok: true; phase: Phase } | { ok: false; error: InventoryError };
