/**
 * Finds every phase in a cluster: cli-utils inventory ConfigMaps (by the inventory-id label),
 * kpt ResourceGroups, Flux Kustomizations and HelmReleases, and Argo CD Applications. Kinds the
 * cluster does not serve (no Flux, no Argo CD) are skipped silently; other failures are data.
 */
import { INVENTORY_ID_LABEL } from '../inventory/cli-utils.ts';
import { mergePhases, parseInventory } from '../inventory/parse-inventory.ts';
import type { InventoryError, Phase, PhaseParseResult, PhaseSource } from '../inventory/types.ts';
import { cacheKey, type CacheView, type ClusterClient } from './cluster-client.ts';
import { readView, type CachedObject } from './compact.ts';
import { collectionPath, isKubeError } from './discovery.ts';
import { listCollection } from './list-collection.ts';
import type { KindReadError } from './read-objects.ts';
import { slimObject, type KubeObject } from './slim.ts';
import type { WatchedKind } from './watch-cache.ts';

/** A phase found in a cluster, with the inventory object it came from. */
export interface DiscoveredPhase {
  readonly phase: Phase;
  /**
   * The raw inventory object, slimmed (no managedFields, no last-applied, never Secret data). For a
   * phase read from a watch cache it is parsed from the cache's record on each read: read it when
   * the object itself is needed (a new manifest to store), not to tell whether it changed.
   */
  readonly manifest: KubeObject;
  /** The inventory object's uid and resourceVersion, when it has both: its content, without reading it. */
  readonly manifestVersion?: string;
  /**
   * The parse of this inventory object version a worker keeps from tick to tick; absent for a
   * phase made anew on each read (merged from several objects, owner and declared phases).
   */
  readonly kept?: ParsedInventory;
}

/**
 * One inventory object version, parsed, as a worker keeps it from tick to tick (by watch-cache
 * record or by object version). It carries the slot where the snapshot keeps what it derived from
 * the version (`memo`: typed `unknown` here, read and written only by src/snapshot/memos.ts), as a
 * watch-cache record carries its status memo: a WeakMap beside the parses would cost an ephemeron
 * entry per inventory, more than the memo it finds.
 */
export class ParsedInventory {
  /** The phase, when the object is a valid inventory. */
  readonly phase: Phase | undefined;
  /** Why the object is not a valid inventory. */
  readonly error: InventoryError | undefined;
  memo: unknown = undefined;

  constructor(
    parsed: PhaseParseResult,
    /** The object's uid and resourceVersion (see {@link manifestVersionOf}). */
    readonly version: string | undefined,
  ) {
    this.phase = parsed.ok ? parsed.phase : undefined;
    this.error = parsed.ok ? undefined : parsed.error;
  }
}

/** The uid and resourceVersion of an inventory object, NUL-separated, when it has both. */
export function manifestVersionOf(manifest: KubeObject): string | undefined {
  const meta = (manifest.metadata ?? {}) as { uid?: unknown; resourceVersion?: unknown };
  // Joined, one flat string: it is kept with the parsed phase from tick to tick.
  return typeof meta.uid === 'string' && typeof meta.resourceVersion === 'string' && meta.resourceVersion !== ''
    ? [meta.uid, meta.resourceVersion].join('\u0000')
    : undefined;
}

/**
 * A phase parsed from a watch-cache record. A worker keeps the parsed phase from tick to tick (by
 * record), not the parsed object: that is read again only when a snapshot stores a new manifest.
 */
class CachedInventoryPhase implements DiscoveredPhase {
  readonly phase: Phase;
  readonly kept: ParsedInventory;
  readonly #record: CachedObject;

  constructor(kept: ParsedInventory & { phase: Phase }, record: CachedObject) {
    this.phase = kept.phase;
    this.kept = kept;
    this.#record = record;
  }

  get manifestVersion(): string | undefined {
    return this.kept.version;
  }

  get manifest(): KubeObject {
    return readView(this.#record);
  }
}

/** An inventory object that is not a valid phase. */
export interface InvalidInventory {
  source: PhaseSource;
  namespace: string;
  name: string;
  error: InventoryError;
}

/** What {@link discoverPhases} found. */
export interface DiscoverPhasesResult {
  phases: DiscoveredPhase[];
  invalid: InvalidInventory[];
  errors: KindReadError[];
}

/** Which sources to look for; all on by default. */
export interface PhaseSourceToggles {
  cliUtils?: boolean;
  resourceGroup?: boolean;
  flux?: boolean;
  argocd?: boolean;
}

/**
 * The watch caches that let discovery read inventory objects from memory (src/snapshot/live.ts
 * starts them): one per source kind, whole objects (an inventory is in `data`, `spec` or `status`),
 * ConfigMaps only with the inventory-id label.
 */
export const INVENTORY_WATCHES: readonly WatchedKind[] = [
  { group: '', kind: 'ConfigMap', labelSelector: INVENTORY_ID_LABEL, whole: true },
  { group: 'kpt.dev', kind: 'ResourceGroup', whole: true },
  { group: 'kustomize.toolkit.fluxcd.io', kind: 'Kustomization', whole: true },
  { group: 'helm.toolkit.fluxcd.io', kind: 'HelmRelease', whole: true },
  { group: 'argoproj.io', kind: 'Application', whole: true },
];

/** Options of {@link discoverPhases}. */
export interface DiscoverPhasesOptions {
  /** Namespaces to look in; all namespaces (one cluster-wide LIST per kind) when omitted or empty. */
  namespaces?: string[];
  sources?: PhaseSourceToggles;
  pageSize?: number;
}

interface SourceKind {
  toggle: keyof PhaseSourceToggles;
  group: string;
  kind: string;
  labelSelector?: string;
}

const SOURCE_KINDS: SourceKind[] = [
  { toggle: 'cliUtils', group: '', kind: 'ConfigMap', labelSelector: INVENTORY_ID_LABEL },
  { toggle: 'resourceGroup', group: 'kpt.dev', kind: 'ResourceGroup' },
  { toggle: 'flux', group: 'kustomize.toolkit.fluxcd.io', kind: 'Kustomization' },
  { toggle: 'flux', group: 'helm.toolkit.fluxcd.io', kind: 'HelmRelease' },
  { toggle: 'argocd', group: 'argoproj.io', kind: 'Application' },
];

/**
 * Lists every inventory object of the enabled sources and parses it; a kind with a synced
 * whole-object watch cache (see {@link INVENTORY_WATCHES}) is read from the cache instead. Never
 * throws.
 */
export async function discoverPhases(
  cluster: ClusterClient,
  options: DiscoverPhasesOptions = {},
): Promise<DiscoverPhasesResult> {
  const result: DiscoverPhasesResult = { phases: [], invalid: [], errors: [] };
  const kinds = SOURCE_KINDS.filter((k) => options.sources?.[k.toggle] !== false);
  const namespaces =
    options.namespaces !== undefined && options.namespaces.length > 0 ? options.namespaces : [undefined];
  const found: DiscoveredPhase[] = [];
  await Promise.all(
    kinds.map(async (source) => {
      const resolved = await cluster.discovery.resolve(source.group, source.kind);
      if (isKubeError(resolved)) {
        if (resolved.kind !== 'KIND_NOT_FOUND')
          result.errors.push({ group: source.group, kind: source.kind, error: resolved, refs: [] });
        return;
      }
      const apiVersion = resolved.group === '' ? resolved.version : `${resolved.group}/${resolved.version}`;
      for (const namespace of namespaces) {
        const cache = inventoryCache(cluster, source, namespace);
        if (cache !== undefined) {
          for (const [key, record] of cache.records()) {
            if (namespace === undefined || key.startsWith(`${namespace}/`))
              collectRecord(record, found, result.invalid);
          }
          // The records keep their own parsed phases (parsedRecords): the last LIST's are not needed.
          listedGenerations.get(cluster)?.delete(listKey(source, namespace));
          continue;
        }
        const batch: KubeObject[] = [];
        const outcome = await listCollection(
          cluster.transport,
          collectionPath(resolved, namespace),
          {
            apiVersion,
            kind: resolved.kind,
            ...(source.labelSelector !== undefined ? { labelSelector: source.labelSelector } : {}),
            ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
          },
          (item) => batch.push(slimObject(item)),
          () => batch.splice(0),
        );
        if (!outcome.ok) {
          const failure: KindReadError = { group: source.group, kind: source.kind, error: outcome.error, refs: [] };
          if (namespace !== undefined) failure.namespace = namespace;
          result.errors.push(failure);
          continue;
        }
        collectListed(cluster, listKey(source, namespace), batch, found, result.invalid);
      }
    }),
  );
  result.phases = mergeDiscovered(found);
  return result;
}

/** A synced cache holding every inventory object of `source` in `namespace` (or cluster-wide), whole. */
function inventoryCache(
  cluster: ClusterClient,
  source: SourceKind,
  namespace: string | undefined,
): CacheView | undefined {
  const usable = (cache: CacheView | undefined): CacheView | undefined =>
    cache?.synced === true && cache.whole ? cache : undefined;
  const keys = [cacheKey(source.group, source.kind, namespace), cacheKey(source.group, source.kind)];
  if (source.labelSelector !== undefined)
    keys.unshift(
      cacheKey(source.group, source.kind, namespace, source.labelSelector),
      cacheKey(source.group, source.kind, undefined, source.labelSelector),
    );
  for (const key of keys) {
    const cache = usable(cluster.caches.get(key));
    if (cache !== undefined) return cache;
  }
  return undefined;
}

/**
 * Inventories parsed from watch-cache records: a record is replaced when its object changes, so an
 * unchanged inventory is parsed once, and its phase keeps the same ref objects from tick to tick.
 */
const parsedRecords = new WeakMap<CachedObject, ParsedInventory>();

function collectRecord(record: CachedObject, found: DiscoveredPhase[], invalid: InvalidInventory[]): void {
  let kept = parsedRecords.get(record);
  if (kept === undefined) {
    const manifest = readView(record);
    kept = new ParsedInventory(parseInventory(manifest), manifestVersionOf(manifest));
    parsedRecords.set(record, kept);
  }
  if (isValid(kept)) found.push(new CachedInventoryPhase(kept, record));
  else addInvalid(readView(record), kept.error as InventoryError, invalid);
}

function isValid(kept: ParsedInventory): kept is ParsedInventory & { phase: Phase } {
  return kept.phase !== undefined;
}

/**
 * Parsed inventories of each cluster's latest LIST of each source kind and namespace, by object
 * version (uid, resourceVersion): an inventory that has not changed is not parsed again on the next
 * tick. Each successful LIST replaces its generation, so only inventories that still exist are
 * kept; a kind read from a synced watch cache drops its generation, and a cluster whose client is
 * gone (closed, no longer configured) drops all of its own.
 */
const listedGenerations = new WeakMap<ClusterClient, Map<string, Map<string, ParsedInventory>>>();

function listKey(source: SourceKind, namespace: string | undefined): string {
  return `${source.group}\u0000${source.kind}\u0000${namespace ?? ''}`;
}

function collectListed(
  cluster: ClusterClient,
  key: string,
  manifests: readonly KubeObject[],
  found: DiscoveredPhase[],
  invalid: InvalidInventory[],
): void {
  let generations = listedGenerations.get(cluster);
  if (generations === undefined) {
    generations = new Map();
    listedGenerations.set(cluster, generations);
  }
  const previous = generations.get(key);
  const next = new Map<string, ParsedInventory>();
  for (const manifest of manifests) {
    const version = manifestVersionOf(manifest);
    let kept = version === undefined ? undefined : (next.get(version) ?? previous?.get(version));
    kept ??= new ParsedInventory(parseInventory(manifest), version);
    // Keyed by the kept parse's own version string, not this LIST's equal copy: one per version.
    if (kept.version !== undefined) next.set(kept.version, kept);
    if (isValid(kept))
      found.push({ phase: kept.phase, manifest, ...(version !== undefined ? { manifestVersion: version, kept } : {}) });
    else addInvalid(manifest, kept.error as InventoryError, invalid);
  }
  generations.set(key, next);
}

function addInvalid(manifest: KubeObject, error: InventoryError, invalid: InvalidInventory[]): void {
  const meta = (manifest.metadata ?? {}) as { namespace?: unknown; name?: unknown };
  invalid.push({
    source: sourceOf(manifest),
    namespace: typeof meta.namespace === 'string' ? meta.namespace : '',
    name: typeof meta.name === 'string' ? meta.name : '',
    error,
  });
}

function sourceOf(manifest: KubeObject): PhaseSource {
  const apiVersion = typeof manifest.apiVersion === 'string' ? manifest.apiVersion : '';
  if (apiVersion.startsWith('kpt.dev/')) return 'resourcegroup';
  if (apiVersion.includes('fluxcd.io/')) return 'flux';
  if (apiVersion.startsWith('argoproj.io/')) return 'argocd';
  return 'cli-utils';
}

/** cli-utils ConfigMaps sharing an inventory-id are one phase; keep the first manifest. */
function mergeDiscovered(found: DiscoveredPhase[]): DiscoveredPhase[] {
  const sorted = [...found].sort((a, b) => phaseKey(a.phase).localeCompare(phaseKey(b.phase)));
  const merged = mergePhases(sorted.map((d) => d.phase));
  const first = new Map<string, DiscoveredPhase>();
  for (const d of sorted) if (!first.has(phaseKey(d.phase))) first.set(phaseKey(d.phase), d);
  return merged.map((phase) => {
    const d = first.get(phaseKey(phase));
    if (d === undefined) return { phase, manifest: {} };
    if (d.phase === phase) return d;
    // Merged from several objects: the first one's manifest and version, read when read.
    return {
      phase,
      get manifest() {
        return d.manifest;
      },
      ...(d.manifestVersion !== undefined ? { manifestVersion: d.manifestVersion } : {}),
    };
  });
}

function phaseKey(phase: Phase): string {
  return `${phase.source}\u0000${phase.id}`;
}
