/**
 * Observes one cluster: finds its phases, reads every resource of every phase in one batched read,
 * and computes each resource's kstatus status and each phase's summary. Never throws: a cluster
 * that cannot be read is an `unreachable` observation, never a list of NotFound or Unknown.
 */
import { hashDocument } from '../history/canonical-hash.ts';
import { digestOfHex, hexOfDigest } from '../history/fingerprints.ts';
import { hashRedacted, redactionKey, redactObject, type RedactionOptions } from '../history/redact.ts';
import type {
  ClusterObservation,
  HashedDocument,
  ObservedManifest,
  ObservedPhase,
  ObservedResource,
} from '../history/types.ts';
import type { ObjectRef, Phase } from '../inventory/types.ts';
import type { HolderSource } from '../inventory/holder.ts';
import { refKey } from '../inventory/ref-key.ts';
import type { ClusterClient } from '../kube/cluster-client.ts';
import {
  discoverPhases,
  type DiscoveredPhase,
  type DiscoverPhasesOptions,
  type DiscoverPhasesResult,
} from '../kube/discover-phases.ts';
import { findAffectedPhases, type ChangedObjects } from '../inventory/affected-phases.ts';
import { CLUSTER_LEVEL_KINDS, RETRYABLE_KINDS, type KubeError, type KubeErrorKind } from '../kube/errors.ts';
import { readObjects, type ReadObjectsOptions, type ReadObjectsResult } from '../kube/read-objects.ts';
import { selectPhaseMembers } from '../kube/select-phase.ts';
import { readOwnerPhases } from '../kube/owner-phases.ts';
import type { OwnerKindSpec } from '../inventory/owner-phase.ts';
import { awaitJobEnd } from '../status/rules/job.ts';
import { withPhaseErrors } from '../status/phase-errors.ts';
import { indexOutcomes } from '../kube/ref-outcome.ts';
import { keyOf } from '../kube/ref-keys.ts';
import { toHashedDocument, type CachedObject } from '../kube/compact.ts';
import type { KubeObject } from '../kube/slim.ts';
import { computeStatus, type CustomHealthHook } from '../status/compute.ts';
import { summarizePhase } from '../status/phase-summary.ts';
import { dependsOnPodsOrTime } from '../status/pod-aware.ts';
import { notFoundStatus, presenceOf, unknownStatus } from '../status/result.ts';
import { ObservationMemos, type MemoContext, type ObjectPart, type ObjectVersion, type StatusMemo } from './memos.ts';
import type { FalseCondition } from '../history/condition-changes.ts';
import type { EntryDetail } from '../inventory/types.ts';
import { entryDetailAt } from '../inventory/build-phase.ts';
import { appliedOf } from '../history/applied.ts';

/** Options of {@link observeCluster}. */
export interface ObserveClusterOptions {
  /** The clock. @default () => new Date() */
  now?: () => Date;
  discover?: DiscoverPhasesOptions;
  read?: ReadObjectsOptions;
  /** A custom health check (Flux CEL / Argo CD Lua), e.g. `checker.evaluate`. */
  customHealth?: CustomHealthHook;
  redaction?: RedactionOptions;
  /**
   * Phases declared in configuration (lists of resources, or label selectors), by cluster name;
   * they are observed beside the phases discovered from inventory objects.
   */
  declared?: ReadonlyMap<string, readonly Phase[]>;
  /** Owner kinds (`phases.owners`): each object of one is a phase of it and what it owns, in every cluster. */
  owners?: readonly OwnerKindSpec[];
  /**
   * What changed since the last snapshot (a live snapshot after watch events): only the phases
   * these changes can affect are read and observed, and the observation is `live`. The whole
   * cluster is observed when a change cannot be placed (see {@link findAffectedPhases}).
   */
  changed?: ChangedObjects;
  /**
   * Conditions of checks with `affectsStatus` that are False now, by phase identity
   * (`sourceKind/namespace/name`): each makes its phase Failed (see summarizePhase's `failedBy`).
   */
  falseConditions?: ReadonlyMap<string, readonly FalseCondition[]>;
  /**
   * Holder sources whose verdict does not join their phases' statuses (`snapshot.holderVerdicts`
   * set to false): those phases read as their members alone; the holder's conditions are still
   * recorded. @default none
   */
  ignoreHolderVerdicts?: ReadonlySet<HolderSource>;
  /**
   * What observing remembers between ticks (statuses, revision and manifest hashes). A worker
   * passes one for all its snapshots; without it each observation starts afresh, which reads
   * from the API server every cached object whose status view was dropped.
   */
  memos?: ObservationMemos;
}

/**
 * Where each observed resource came from, beside the observation (which is plain data): the ref
 * it was read by and, when a watch cache answered, its record. Aligned with the observation's
 * phases and their resources, index for index. The snapshot reads revisions the store lost from
 * the cluster by `refs`, and after commit tells `records` that their revisions are stored.
 */
export interface ObservationSources {
  phases: { refs: readonly ObjectRef[]; records: (CachedObject | undefined)[] }[];
}

/** An observation and where its resources came from. */
export interface ObservedCluster {
  observation: ClusterObservation;
  sources: ObservationSources;
}

/** The manifest source of a declared phase: its declaration, as an object like any inventory. */
function declarationOf(phase: Phase): KubeObject {
  const spec = phase.selector
    ? { selector: phase.selector.selector, kinds: phase.selector.kinds, namespaces: phase.selector.namespaces }
    : { resources: phase.entries };
  return {
    apiVersion: 'phaselog.dev/v1',
    kind: phase.selector ? 'SelectorPhase' : 'ListPhase',
    metadata: { name: phase.name, ...(phase.namespace ? { namespace: phase.namespace } : {}), labels: phase.labels },
    spec,
  } as KubeObject;
}

/** Declared phases of this cluster, selector members listed now. */
async function resolveDeclared(
  cluster: ClusterClient,
  declared: readonly Phase[],
): Promise<{ phase: Phase; manifest: KubeObject }[]> {
  const out: { phase: Phase; manifest: KubeObject }[] = [];
  for (const phase of declared) {
    const resolved = phase.selector ? (await selectPhaseMembers(cluster, phase)).phase : phase;
    out.push({ phase: resolved, manifest: declarationOf(phase) });
  }
  return out;
}

/**
 * The discovered and declared phases to observe: all of them, or for a live snapshot only those
 * its changes affect (`live`). Declared selector phases are resolved only when observed.
 */
async function phasesToObserve(
  cluster: ClusterClient,
  discovered: readonly DiscoveredPhase[],
  declared: readonly Phase[],
  changed: ChangedObjects | undefined,
): Promise<{ phases: { phase: Phase; manifest: KubeObject }[]; live: boolean }> {
  const affected =
    changed === undefined ? undefined : findAffectedPhases([...discovered.map((d) => d.phase), ...declared], changed);
  if (affected === undefined || affected.whole)
    return { phases: [...discovered, ...(await resolveDeclared(cluster, declared))], live: false };
  const chosen = new Set(affected.indices);
  const declaredChosen = declared.filter((_, i) => chosen.has(discovered.length + i));
  return {
    phases: [...discovered.filter((_, i) => chosen.has(i)), ...(await resolveDeclared(cluster, declaredChosen))],
    live: true,
  };
}

const SOURCE_BY_KIND: Record<string, string> = {
  ConfigMap: 'cli-utils',
  ResourceGroup: 'resourcegroup',
  Kustomization: 'flux',
  HelmRelease: 'flux',
  Application: 'argocd',
};

/** Reads and evaluates every phase of `cluster`. */
export async function observeCluster(
  cluster: ClusterClient,
  options: ObserveClusterOptions = {},
): Promise<ClusterObservation> {
  return (await observeWithSources(cluster, options)).observation;
}

/** {@link observeCluster}, with where each resource came from (what a snapshot needs after recording). */
export async function observeWithSources(
  cluster: ClusterClient,
  options: ObserveClusterOptions = {},
): Promise<ObservedCluster> {
  const now = options.now ?? (() => new Date());
  const discovered = await discoverPhases(cluster, options.discover);
  const discoveryFailure = findDiscoveryFailure(discovered);
  if (discoveryFailure !== undefined) return unreachable(cluster, now(), discoveryFailure);
  const owned =
    options.owners !== undefined && options.owners.length > 0
      ? await readOwnerPhases(
          cluster,
          options.owners,
          options.discover?.pageSize !== undefined ? { pageSize: options.discover.pageSize } : {},
        )
      : { phases: [], errors: [] };
  // Owner phases are found in the cluster like inventories; their manifest is the owner object.
  const found = [
    ...discovered.phases,
    ...owned.phases.map((o): DiscoveredPhase => ({ phase: o.phase, manifest: o.owner })),
  ];
  const { phases: all, live } = await phasesToObserve(
    cluster,
    found,
    options.declared?.get(cluster.name) ?? [],
    options.changed,
  );
  const refs = all.flatMap((d) => d.phase.entries);
  const read = await readObjects(cluster, refs, { includePods: true, ...options.read });
  if (read.clusterError !== undefined) return unreachable(cluster, now(), read.clusterError);
  const at = now();
  const statusOptions = {
    now: at,
    ...(read.pods.length > 0 ? { pods: read.pods } : {}),
    ...(options.customHealth ? { customHealth: options.customHealth } : {}),
  };
  const memos = options.memos ?? new ObservationMemos();
  const tick: TickContext = {
    clusterName: cluster.name,
    falseConditions: options.falseConditions,
    ignoreHolderVerdicts: options.ignoreHolderVerdicts,
    statusOptions,
    redaction: options.redaction,
    memos,
    memo: memos.contextOf(statusOptions, redactionKey(options.redaction)),
  };
  const outcomeOf = await withServerReads(cluster, refs, read, tick, options);
  const sources: ObservationSources = { phases: [] };
  const phases = all.map((source) => {
    const records: (CachedObject | undefined)[] = [];
    const resources = source.phase.entries.map((ref, index) => {
      const outcome = outcomeOf(ref);
      records.push(outcome.kind === 'found' ? outcome.record : undefined);
      return withApplied(observeResource(ref, outcome, tick), entryDetailAt(source.phase, index));
    });
    sources.phases.push({ refs: source.phase.entries, records });
    return observePhase(source, resources, at, tick);
  });
  const unobservedSources = [
    ...new Set([
      ...discovered.errors.map((e) => SOURCE_BY_KIND[e.kind] ?? e.kind),
      ...(owned.errors.length > 0 ? ['owner'] : []),
    ]),
  ];
  return {
    observation: {
      outcome: 'ok',
      cluster: cluster.name,
      labels: cluster.labels,
      at,
      phases,
      unobservedSources,
      ...(live ? { live: true } : {}),
    },
    sources,
  };
}

/** Every inventory kind failed for a cluster-level reason and nothing was found: the cluster is down. */
function findDiscoveryFailure(discovered: DiscoverPhasesResult): KubeError | undefined {
  if (discovered.phases.length > 0 || discovered.errors.length === 0) return undefined;
  const clusterLevel = discovered.errors.every((e) => CLUSTER_LEVEL_KINDS.includes(e.error.kind));
  return clusterLevel ? discovered.errors[0]?.error : undefined;
}

function unreachable(cluster: ClusterClient, at: Date, error: KubeError): ObservedCluster {
  return {
    observation: {
      outcome: 'unreachable',
      cluster: cluster.name,
      labels: cluster.labels,
      at,
      error: { kind: error.kind, message: error.message },
    },
    sources: { phases: [] },
  };
}

type Outcome = ReturnType<ReturnType<typeof indexOutcomes>>;

type StatusOptions = Parameters<typeof computeStatus>[1];

/**
 * `outcomeOf`, with the objects whose cached record can no longer answer this observation read
 * from the API server: records that dropped their view once a snapshot stored them, when the
 * status must be computed under other options than memoised (a custom health check or redaction
 * changed, pods appeared), and records whose revision must be redacted anew but dropped its body.
 * Rare: each such object is read once, then its new memo serves again.
 */
async function withServerReads(
  cluster: ClusterClient,
  refs: readonly ObjectRef[],
  read: ReadObjectsResult,
  tick: TickContext,
  options: ObserveClusterOptions,
): Promise<(ref: ObjectRef) => Outcome> {
  const outcomeOf = indexOutcomes(read);
  const key = tick.memo.redaction;
  // Every cached member passes here on every tick: the records are looked at, no outcome is made.
  const staleKeys = new Set<string>();
  for (const [memberKey, record] of read.records) {
    const stale =
      record.redaction !== key ? !record.hasBody : !record.hasView && tick.memos.memoOf(record)?.context !== tick.memo;
    if (stale) staleKeys.add(memberKey);
  }
  if (staleKeys.size === 0) return outcomeOf;
  const stale = refs.filter((ref) => staleKeys.has(keyOf(ref)));
  const freshOutcomeOf = indexOutcomes(await readObjects(cluster, stale, { ...options.read, fromServer: true }));
  return (ref) => (staleKeys.has(keyOf(ref)) ? freshOutcomeOf(ref) : outcomeOf(ref));
}

/** What every resource of one observation is observed under. */
interface TickContext {
  clusterName: string;
  falseConditions: ReadonlyMap<string, readonly FalseCondition[]> | undefined;
  ignoreHolderVerdicts: ReadonlySet<HolderSource> | undefined;
  statusOptions: StatusOptions;
  redaction: RedactionOptions | undefined;
  memos: ObservationMemos;
  /** The memo context of `statusOptions` and `redaction`. */
  memo: MemoContext;
}

function observeResource(ref: ObjectRef, outcome: Outcome, tick: TickContext): ObservedResource {
  let part: ObjectPart;
  if (outcome.kind === 'found') {
    part =
      outcome.record !== undefined
        ? partOfRecord(ref, outcome.record, () => outcome.object, tick)
        : partOfObject(outcome.object, tick.statusOptions, revisionOfListed(outcome.object, tick));
  } else {
    const result = outcome.kind === 'missing' ? notFoundStatus() : unknownStatus(outcome.reason, outcome.message);
    part = {
      status: result.status,
      message: result.message,
      conditions: result.conditions,
      presence: presenceOf(result),
    };
    if (result.reason !== undefined) part.reason = result.reason;
  }
  const observed: ObservedResource = { key: keyOf(ref), ...part };
  if (outcome.kind === 'unknown' && RETRYABLE_KINDS.includes(outcome.reason as KubeErrorKind)) observed.unread = true;
  return observed;
}

/** The resource with what the tool that applied it recorded in its inventory, when it recorded anything. */
function withApplied(observed: ObservedResource, detail: EntryDetail | undefined): ObservedResource {
  const applied = appliedOf(detail);
  if (applied !== undefined) observed.applied = applied;
  return observed;
}

function partOfRecord(ref: ObjectRef, record: CachedObject, view: () => KubeObject, tick: TickContext): ObjectPart {
  const revision = toHashedDocument(record, tick.redaction);
  const memo = tick.memos.memoOf(record);
  if (memo !== undefined && memo.context === tick.memo) return partOfMemo(memo, revision);
  // The view is what status rules read of the object; the revision was computed from the whole object.
  const part = partOfObject(view(), tick.statusOptions, revision);
  // Custom checks (CEL, Lua) are evaluated on every tick: phaselog cannot tell that a script is pure.
  if (!dependsOnPodsOrTime(ref.group, ref.kind) && part.customHealth === undefined)
    tick.memos.remember(record, tick.memo, part);
  return part;
}

function partOfMemo(memo: StatusMemo, revision: HashedDocument): ObjectPart {
  const part: ObjectPart = {
    status: memo.status,
    message: memo.message,
    conditions: memo.conditions,
    presence: memo.presence,
    revision,
  };
  if (memo.reason !== undefined) part.reason = memo.reason;
  if (memo.generation !== undefined) part.generation = memo.generation;
  if (memo.observedGeneration !== undefined) part.observedGeneration = memo.observedGeneration;
  return part;
}

/**
 * The revision of a listed object. Its digest is remembered by cluster, object version (uid,
 * resourceVersion) and redaction: the same version is the same content, so a polling tick hashes
 * only objects that changed (redacting and hashing is most of a tick's work per object). The body
 * is redacted from the object in hand, only when a snapshot reads it.
 */
function revisionOfListed(object: KubeObject, tick: TickContext): HashedDocument {
  const redaction = tick.redaction;
  const meta = (object.metadata ?? {}) as { uid?: unknown; resourceVersion?: unknown };
  if (typeof meta.uid !== 'string' || typeof meta.resourceVersion !== 'string' || meta.resourceVersion === '')
    return hashRedacted(object, redaction);
  const at: ObjectVersion = {
    cluster: tick.clusterName,
    object: meta.uid,
    version: meta.resourceVersion,
    redaction: tick.memo.redaction,
  };
  const known = tick.memos.listedDigest(at);
  if (known !== undefined) return new ListedRevision(known, object, redaction);
  const { hash, body } = hashRedacted(object, redaction);
  const digest = digestOfHex(hash);
  tick.memos.rememberListedDigest(at, digest);
  return { hash, body, digest };
}

/** A listed object's revision whose digest was remembered: the hex hash and the body are made when read. */
class ListedRevision implements HashedDocument {
  readonly digest: string;
  readonly #object: KubeObject;
  readonly #redaction: RedactionOptions | undefined;
  #body: Record<string, unknown> | undefined;

  constructor(digest: string, object: KubeObject, redaction: RedactionOptions | undefined) {
    this.digest = digest;
    this.#object = object;
    this.#redaction = redaction;
  }

  get hash(): string {
    return hexOfDigest(this.digest);
  }

  get body(): Record<string, unknown> {
    return (this.#body ??= redactObject(this.#object, this.#redaction));
  }
}

function partOfObject(
  object: KubeObject,
  statusOptions: StatusOptions,
  revision: ObservedResource['revision'],
): ObjectPart {
  const result = computeStatus(object, statusOptions);
  const part: ObjectPart = {
    status: result.status,
    message: result.message,
    conditions: result.conditions,
    presence: presenceOf(result),
  };
  if (result.reason !== undefined) part.reason = result.reason;
  if (result.customHealth !== undefined) part.customHealth = result.customHealth;
  const generation = readInt((object.metadata as Record<string, unknown> | undefined)?.generation);
  const observedGeneration = readInt((object.status as Record<string, unknown> | undefined)?.observedGeneration);
  if (generation !== undefined) part.generation = generation;
  if (observedGeneration !== undefined) part.observedGeneration = observedGeneration;
  if (revision !== undefined) part.revision = revision;
  return part;
}

function observePhase(
  source: DiscoveredPhase,
  observed: ObservedResource[],
  at: Date,
  tick: TickContext,
): ObservedPhase {
  const phase = source.phase;
  // An owner phase is about its tasks' end: its running Jobs are InProgress (resources are per phase).
  const resources = phase.owner === undefined ? observed : observed.map(awaitJobEnd);
  const verdict =
    phase.holder?.verdict !== undefined && tick.ignoreHolderVerdicts?.has(phase.holder.source) !== true
      ? phase.holder.verdict
      : undefined;
  const summarized = summarizePhase(
    phase.entries.map((ref, index) => {
      const r = resources[index] as ObservedResource;
      return { ref, status: r.status, message: r.message, ...(r.reason !== undefined ? { reason: r.reason } : {}) };
    }),
    {
      now: at,
      failedBy: (tick.falseConditions?.get(`${phase.source}/${phase.namespace}/${phase.name}`) ?? []).map(
        (c) => `${c.type} is False${c.message === '' ? '' : `: ${c.message}`}`,
      ),
      ...(verdict !== undefined ? { holder: verdict } : {}),
    },
  );
  const summary = phase.owner === undefined ? summarized : withPhaseErrors(summarized, phase.errors);
  const result: ObservedPhase = {
    identity: { sourceKind: phase.source, namespace: phase.namespace, name: phase.name },
    inventoryId: phase.id,
    labels: phase.labels,
    manifest: observeManifest(source, tick),
    status: {
      status: summary.status,
      message: summary.message,
      summary: summary.counts,
      conditions: summary.conditions,
    },
    resources,
  };
  if (summary.mostImportant !== undefined) result.status.worstResource = refKey(summary.mostImportant.ref);
  if (phase.holder !== undefined) result.holder = phase.holder;
  return result;
}

/** An observed manifest whose hash is known: its source and entries are made when read. */
class KnownManifest implements ObservedManifest {
  readonly hash: string;
  readonly #from: DiscoveredPhase;
  readonly #redaction: RedactionOptions | undefined;

  constructor(hash: string, from: DiscoveredPhase, redaction: RedactionOptions | undefined) {
    this.hash = hash;
    this.#from = from;
    this.#redaction = redaction;
  }

  get source(): Record<string, unknown> {
    return redactObject(this.#from.manifest, this.#redaction);
  }

  get entries(): ObservedManifest['entries'] {
    return manifestEntries(this.#from.phase);
  }
}

function manifestEntries(phase: Phase): ObservedManifest['entries'] {
  return phase.entries.map((e) => ({
    group: e.group,
    kind: e.kind,
    namespace: e.namespace,
    name: e.name,
    ...(e.version !== undefined ? { version: e.version } : {}),
  }));
}

/**
 * The manifest of a discovered or declared phase. Its hash is remembered on the parsed inventory,
 * with its redaction: a worker parses each inventory object version (uid, resourceVersion) once and
 * keeps that parse while the version lasts, so an unchanged inventory is not redacted and hashed
 * again on every tick. Only the hash is remembered; the source and entries are made from the objects in
 * hand when a snapshot stores a new manifest. Declared phases have no version and are always
 * computed.
 */
function observeManifest(from: DiscoveredPhase, tick: TickContext): ObservedManifest {
  const phase = from.phase;
  const redaction = tick.redaction;
  // Selector and owner phases' members change without their declaration or owner changing.
  const kept = phase.selector === undefined && phase.owner === undefined ? from.kept : undefined;
  const memo = kept === undefined ? undefined : tick.memos.manifestHash(kept, tick.memo.redaction);
  if (memo !== undefined && memo.entries === phase.entries.length) return new KnownManifest(memo.hash, from, redaction);
  const entries = manifestEntries(phase);
  const source = redactObject(from.manifest, redaction);
  const observed = { hash: hashDocument({ source, entries }), source, entries };
  if (kept !== undefined)
    tick.memos.rememberManifestHash(kept, tick.memo.redaction, { hash: observed.hash, entries: entries.length });
  return observed;
}

function readInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}
