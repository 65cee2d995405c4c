/**
 * What observing a cluster remembers between ticks, so an unchanged object costs a lookup instead
 * of a parse, a status computation, a redaction and a hash on every tick. One set per worker
 * process (created where the snapshot pipeline is wired), never module state: two workers in one
 * process, or a test, do not share them.
 *
 * - status memos, one per watch-cache record (the record is replaced when its object changes);
 * - revision digests of listed objects, by object version (a polling tick hashes only what changed);
 * - manifest hashes, on the parsed inventory (one per inventory object version).
 *
 * Revision digests are kept one per object (its latest version), not one per version seen: a
 * worker polling a busy fleet would otherwise hold every version of every object it listed until
 * the index filled up.
 */
import type { RedactionKey } from '../history/redact.ts';
import type { CachedObject } from '../kube/compact.ts';
import type { ObservedResource } from '../history/types.ts';
import type { computeStatus } from '../status/compute.ts';

type StatusOptions = Parameters<typeof computeStatus>[1];

/** What one resource's observation takes from its object (found objects only). */
export type ObjectPart = Pick<
  ObservedResource,
  | 'status'
  | 'message'
  | 'conditions'
  | 'presence'
  | 'reason'
  | 'customHealth'
  | 'generation'
  | 'observedGeneration'
  | 'revision'
>;

/** What a memoised status was computed under: a memo serves only an observation made under the same. */
export class MemoContext {
  /** Memos made under this context, by their content: see {@link ObservationMemos.memoize}. */
  readonly memos = new Map<string, StatusMemo>();
  constructor(
    readonly customHealth: StatusOptions['customHealth'],
    readonly withPods: boolean,
    readonly redaction: RedactionKey,
  ) {}
}

/**
 * The status computed from a watch-cache record, kept on the record. Memos are shared: most
 * objects of a kind are in the same state (Current, the same message, the same generations), and a
 * worker holds one per watched member.
 */
export class StatusMemo {
  constructor(
    readonly context: MemoContext,
    readonly status: ObservedResource['status'],
    readonly message: string,
    readonly conditions: ObservedResource['conditions'],
    readonly presence: ObservedResource['presence'],
    readonly reason: string | undefined,
    readonly generation: number | undefined,
    readonly observedGeneration: number | undefined,
  ) {}
}

/** The empty condition list of memoised statuses, shared (nothing modifies an observation's conditions). */
const NO_CONDITIONS: ObservedResource['conditions'] = Object.freeze([]) as unknown as ObservedResource['conditions'];

/** Options of {@link ObservationMemos}. */
export interface ObservationMemoLimits {
  /** Distinct status memos kept per context before its sharing index starts over (memos in use stay on their records). @default 20000 */
  sharedStatuses?: number;
  /** Listed objects' revision digests kept (one per object) before the index starts over. @default 200000 */
  listedRevisions?: number;
}

/**
 * A value remembered for one version of each object of each cluster, under one redaction. One entry
 * per object: a new version replaces the old one, so what is held follows the objects that exist
 * (those deleted stay until the index is full and starts over).
 */
class VersionMemo<V> {
  readonly #byCluster = new Map<string, Map<string, { version: string; redaction: string; value: V }>>();
  #size = 0;

  constructor(readonly limit: number) {}

  get(cluster: string, object: string, version: string, redaction: string): V | undefined {
    const entry = this.#byCluster.get(cluster)?.get(object);
    return entry !== undefined && entry.version === version && entry.redaction === redaction ? entry.value : undefined;
  }

  set(cluster: string, object: string, version: string, redaction: string, value: V): void {
    let objects = this.#byCluster.get(cluster);
    if (objects?.has(object) !== true && this.#size >= this.limit) {
      this.#byCluster.clear();
      this.#size = 0;
      objects = undefined;
    }
    if (objects === undefined) {
      objects = new Map();
      this.#byCluster.set(cluster, objects);
    }
    if (!objects.has(object)) this.#size += 1;
    objects.set(object, { version, redaction, value });
  }
}

/** Where a kept value carries the memo made from it (typed `unknown` where it is kept; only this module reads and writes it). */
export interface MemoSlot {
  memo: unknown;
}

/** The hash and entry count of a manifest, made under a redaction. */
export class ManifestMemo {
  constructor(
    readonly redaction: string,
    readonly hash: string,
    readonly entries: number,
  ) {}
}

/** A listed object by cluster, object and version (uid and resourceVersion). */
export interface ObjectVersion {
  cluster: string;
  /** What tells the object apart in its cluster, e.g. its uid. */
  object: string;
  version: string;
  /** The redaction the value was made under (see {@link MemoContext.redaction}). */
  redaction: string;
}

/** The memos of one worker. */
export class ObservationMemos {
  /** The few contexts observations are made under (checks, pods read or not, redaction). */
  readonly #contexts: MemoContext[] = [];
  /**
   * Revision digests of listed objects (sha256 as 32 latin1 characters, see
   * HashedDocument.digest): the same version is the same content. The digest, not the hex hash:
   * a kept state holds the same string for each resource, so the two share it.
   */
  readonly #listedDigests: VersionMemo<string>;
  readonly #sharedStatuses: number;

  constructor(limits: ObservationMemoLimits = {}) {
    this.#sharedStatuses = limits.sharedStatuses ?? 20_000;
    this.#listedDigests = new VersionMemo(limits.listedRevisions ?? 200_000);
  }

  /** The context of observations made under `statusOptions` and the redaction named `redaction`. */
  contextOf(statusOptions: StatusOptions, redaction: RedactionKey): MemoContext {
    const withPods = statusOptions.pods !== undefined;
    const known = this.#contexts.find(
      (c) => c.customHealth === statusOptions.customHealth && c.withPods === withPods && c.redaction === redaction,
    );
    if (known !== undefined) return known;
    const context = new MemoContext(statusOptions.customHealth, withPods, redaction);
    // Contexts of checks replaced by a reload are dropped with their index.
    if (this.#contexts.length >= 8) this.#contexts.shift();
    this.#contexts.push(context);
    return context;
  }

  /** The status memo kept on `record`, if any. */
  memoOf(record: CachedObject): StatusMemo | undefined {
    return record.memo instanceof StatusMemo ? record.memo : undefined;
  }

  /** Keeps the status `part` on `record`, sharing an equal memo made under `context`. */
  remember(record: CachedObject, context: MemoContext, part: ObjectPart): void {
    record.memo = this.#memoize(context, part);
  }

  #memoize(context: MemoContext, part: ObjectPart): StatusMemo {
    const key = JSON.stringify([
      part.status,
      part.message,
      part.conditions,
      part.presence,
      part.reason ?? null,
      part.generation ?? null,
      part.observedGeneration ?? null,
    ]);
    const known = context.memos.get(key);
    if (known !== undefined) return known;
    const conditions = part.conditions.length === 0 ? NO_CONDITIONS : part.conditions;
    const memo = new StatusMemo(
      context,
      part.status,
      part.message,
      conditions,
      part.presence,
      part.reason,
      part.generation,
      part.observedGeneration,
    );
    if (context.memos.size >= this.#sharedStatuses) context.memos.clear();
    context.memos.set(key, memo);
    return memo;
  }

  /** The revision digest remembered for a listed object's version, if any. */
  listedDigest(at: ObjectVersion): string | undefined {
    return this.#listedDigests.get(at.cluster, at.object, at.version, at.redaction);
  }

  rememberListedDigest(at: ObjectVersion, digest: string): void {
    this.#listedDigests.set(at.cluster, at.object, at.version, at.redaction, digest);
  }

  /**
   * The manifest hash remembered on `parsed`, the parse a worker keeps of one inventory object
   * version (src/kube/discover-phases.ts), under `redaction`, if any. Kept on the parse, the hash
   * goes when the version does.
   */
  manifestHash(parsed: MemoSlot, redaction: string): ManifestMemo | undefined {
    const memo = parsed.memo;
    return memo instanceof ManifestMemo && memo.redaction === redaction ? memo : undefined;
  }

  rememberManifestHash(parsed: MemoSlot, redaction: string, memo: { hash: string; entries: number }): void {
    parsed.memo = new ManifestMemo(redaction, memo.hash, memo.entries);
  }
}
