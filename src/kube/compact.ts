/**
 * What a watch cache keeps of an object, instead of the parsed object (issue #6: Flux's reader ran
 * out of memory holding whole objects). Only what is needed later is kept:
 *
 * - a status view: the fields kstatus and phaselog's pod-aware rule read (apiVersion, kind, a few
 *   metadata fields, the spec fields of the built-in rules, status). Every path a status rule
 *   reads gives the same value in the view as in the object, so statuses are identical
 *   (test/unit/kube/compact.test.ts checks this over the kstatus conformance fixtures). Kinds a
 *   custom health check (CEL, Lua) covers, and inventory objects, keep the whole slimmed object.
 * - the object revision: the sha256 of the redacted metadata+spec (src/history/redact.ts), kept
 *   for good, and that canonical JSON deflated with a dictionary of Kubernetes vocabulary, kept
 *   until a snapshot has stored it (then the store has it; see {@link CachedObject}).
 * - the view is deflated together with the revision (they share names, labels and vocabulary:
 *   half the bytes of the two apart), except where it is read on every tick: custom health checks,
 *   and the kinds whose status depends on time or pods (Pods, StatefulSets, ReplicaSets). Other
 *   kinds' statuses are computed once per object version (the status layer memoises them on the
 *   record), so their view is inflated once when the object changes, and dropped with the
 *   revision.
 * - the resourceVersion, to tell a relist's MODIFIED objects from unchanged ones.
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { canonicalJson } from '../history/canonical-hash.ts';
import { hexOfDigest } from '../history/fingerprints.ts';
import { flatString } from '../history/intern.ts';
import { redactionKey, redactObject, type RedactionKey, type RedactionOptions } from '../history/redact.ts';
import type { HashedDocument } from '../history/types.ts';
import { dependsOnPodsOrTime } from '../status/pod-aware.ts';
import { findRule } from '../status/rules/index.ts';
import type { KubeObject } from './slim.ts';

/**
 * One cached object. Its hash is kept for good; its body (the revision, and the view when packed)
 * until a snapshot has stored the revision ({@link CachedRevision.stored}): after that the store
 * holds the revision and the snapshot keeps the status it computed in `memo`, so a worker holds
 * the hash and the status instead of the object. A body needed again (the store lost the revision,
 * or the status must be computed under other options) is read from the API server: see
 * src/snapshot/observe.ts and src/snapshot/revision-bodies.ts.
 */
export class CachedObject {
  /**
   * The object's resourceVersion, only ever compared with another record's: a number when it is a
   * small decimal (as etcd's are), which costs nothing beside the record, else the string.
   */
  readonly resourceVersion: string | number;
  /** {@link redactionKey} of the options the revision was redacted with. */
  readonly redaction: RedactionKey;
  /**
   * JSON of what status rules read (or of the whole slimmed object), when kept in the clear: a
   * string costs a third of the same data as parsed objects. Empty when the view is packed with the
   * revision. Read it with {@link readView}.
   */
  readonly view: string;
  /** The view is the whole object (inventory parsing reads it too): it is never dropped. */
  readonly whole: boolean;
  /**
   * The sha256 of the redacted object's canonical JSON (as `hashRedacted` hashes it), as 32 latin1
   * characters: one flat string, which the history store's kept state shares.
   */
  readonly digest: string;
  /**
   * What the snapshot computed from this record and under what (set and read only by
   * src/snapshot/memos.ts; opaque here). A record is replaced when its object changes, so an
   * unchanged object's status is computed once. On the record rather than in a WeakMap beside it:
   * an ephemeron entry and its wrapper would cost more than the memo it finds, once per watched
   * object (BENCHMARKS.md, worker-rss).
   */
  memo: unknown = undefined;
  /**
   * Deflated (raw, with {@link DICTIONARY}): the view's JSON and a NUL when `view` is empty, then
   * the revision's canonical JSON. A latin1 string carries far less per-object overhead than a
   * Buffer. Empty once dropped.
   */
  #packed: string;

  constructor(fields: {
    resourceVersion: string | number;
    redaction: RedactionKey;
    view: string;
    whole: boolean;
    digest: string;
    packed: string;
  }) {
    this.resourceVersion = fields.resourceVersion;
    this.redaction = fields.redaction;
    this.view = fields.view;
    this.whole = fields.whole;
    this.digest = fields.digest;
    this.#packed = fields.packed;
  }

  /** False once a packed view was dropped. */
  get hasView(): boolean {
    return this.view !== '' || this.#packed !== '';
  }

  /** Characters held: the view, the digest and the body. */
  get size(): number {
    return this.view.length + this.digest.length + this.#packed.length;
  }

  /** False once the revision's body was dropped. */
  get hasBody(): boolean {
    return this.#packed !== '';
  }

  /** The packed text: the view's JSON and a NUL when packed, then the revision's canonical JSON. */
  unpack(): string {
    if (this.#packed === '')
      throw new Error(
        'the cached object no longer holds its body (a snapshot stored it); read the object from the API server',
      );
    return inflateRawSync(Buffer.from(this.#packed, 'latin1'), ZLIB).toString('utf8');
  }

  /** Forgets the body (the revision, and the view when packed), unless the view is packed and whole. */
  dropBody(): void {
    if (this.view !== '' || !this.whole) this.#packed = '';
  }
}

/** Options of {@link compactObject}. */
export interface CompactOptions {
  /** Keep the whole (slimmed) object as the view: a custom health check or inventory parsing reads it. @default false */
  whole?: boolean;
  /**
   * Keep the view in the clear, for views read on every tick: custom health checks run every tick,
   * and some kinds' status depends on the time or on pods. @default `whole`, or one of those kinds
   */
  clear?: boolean;
  redaction?: RedactionOptions;
  /**
   * Keep the status view only, no revision: for objects watched for resource trees and never
   * recorded (ReplicaSets and Pods that are not phase members), whose revision no snapshot would
   * ever store and drop. The digest is then the view's. @default false
   */
  viewOnly?: boolean;
}

/** Metadata fields status rules read: deletion and generations. */
const VIEW_METADATA = ['name', 'namespace', 'generation', 'deletionTimestamp'] as const;
/**
 * Of the kinds a resource tree shows below a member (ReplicaSets, Pods), also what trees link
 * owners and dependents by (see src/status/children.ts); other kinds' views stay as small as before.
 */
const TREE_METADATA = ['uid', 'ownerReferences'] as const;
/** Of an ownerReference, what a resource tree matches an owner by. */
const OWNER_REFERENCE_FIELDS = ['kind', 'name', 'uid'] as const;
/** Of a Pod's metadata, also the scheduling window's start and the labels pod-aware rules select by. */
const POD_METADATA = [...VIEW_METADATA, 'creationTimestamp', 'labels', ...TREE_METADATA] as const;
const REPLICASET_METADATA = [...VIEW_METADATA, ...TREE_METADATA] as const;
/** Spec fields the built-in rules read (src/status/rules, selector.ts); values are kept whole. */
const VIEW_SPEC = [
  'replicas',
  'selector',
  'progressDeadlineSeconds',
  'parallelism',
  'completions',
  'suspend',
  'type',
  'clusterIP',
  'updateStrategy',
] as const;
/** Of a Pod's container statuses, the Pod rule reads `name` and `state.waiting.reason`. */
const CONTAINER_STATUS_FIELDS = ['name', 'state'] as const;
/** What the Pod rule and the generic checks read of a Pod's status. */
const POD_STATUS_FIELDS = ['phase', 'conditions', 'containerStatuses', 'observedGeneration'] as const;
/** What kstatus reads of the status of a kind without a built-in rule. */
const GENERIC_STATUS_FIELDS = ['conditions', 'observedGeneration'] as const;
/** What kstatus reads of a condition (conditions.ts); timestamps are never read. */
const CONDITION_FIELDS = ['type', 'status', 'reason', 'message'] as const;
/**
 * The condition types a Pod's status is computed from (the standard ones, and the Pod rule's). A
 * Pod's view is kept in the clear and Pods are a large part of a worker's cache, so its
 * other conditions (Initialized, ContainersReady, ...) are left out, when every condition is well
 * formed: a malformed one's error names its index in the list.
 */
const POD_CONDITION_TYPES: ReadonlySet<string> = new Set(['Ready', 'PodScheduled', 'Reconciling', 'Stalled']);

function isWellFormedCondition(c: unknown): boolean {
  return (
    isRecord(c) &&
    CONDITION_FIELDS.every((field) => c[field] === undefined || c[field] === null || typeof c[field] === 'string') &&
    typeof c.type === 'string'
  );
}

/**
 * Kubernetes vocabulary in the shape canonical JSON gives it (keys sorted), used as the deflate
 * dictionary: small documents compress poorly alone because each must spell its keys once.
 * Changing it makes stored deflated strings unreadable, but they live in memory only.
 */
const DICTIONARY = Buffer.from(
  [
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"config.k8s.io/owning-inventory":"',
    '"},"creationTimestamp":"20',
    'T00:00:00Z","labels":{"app":"',
    '","app.kubernetes.io/instance":"',
    '","app.kubernetes.io/managed-by":"Helm',
    '","app.kubernetes.io/managed-by":"kustomize","app.kubernetes.io/name":"',
    '","app.kubernetes.io/part-of":"',
    '","app.kubernetes.io/version":"',
    '","helm.sh/chart":"',
    '"},"name":"',
    '","namespace":"',
    '","ownerReferences":[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"ReplicaSet","name":"',
    '","uid":"',
    '"}]},"spec":{"affinity":{},"containers":[{"args":["',
    '"],"command":["',
    '"],"env":[{"name":"',
    '","value":"',
    '"},{"name":"',
    '","valueFrom":{"configMapKeyRef":{"key":"',
    '","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"',
    '","valueFrom":{"secretKeyRef":{"key":"',
    '"}}}],"image":"',
    '","imagePullPolicy":"IfNotPresent","livenessProbe":{"failureThreshold":3,"httpGet":{"path":"/healthz","port":"http","scheme":"HTTP"},"initialDelaySeconds":',
    ',"periodSeconds":10,"successThreshold":1,"timeoutSeconds":1},"name":"main","ports":[{"containerPort":8080,"name":"http","protocol":"TCP"}],',
    '"readinessProbe":{"failureThreshold":3,"httpGet":{"path":"/readyz","port":"http","scheme":"HTTP"},"periodSeconds":10,"successThreshold":1,"timeoutSeconds":1},',
    '"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"runAsNonRoot":true},',
    '"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","volumeMounts":[{"mountPath":"',
    '","name":"',
    '","readOnly":true}]}],',
    '"dnsPolicy":"ClusterFirst","enableServiceLinks":true,"nodeName":"',
    '","preemptionPolicy":"PreemptLowerPriority","priority":0,"restartPolicy":"Always","schedulerName":"default-scheduler",',
    '"serviceAccount":"default","serviceAccountName":"default","terminationGracePeriodSeconds":30,"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},',
    '{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}],"volumes":[{"configMap":{"defaultMode":420,"name":"',
    '"},"name":"',
    '{"name":"kube-api-access-","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}]}}]}',
    '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deployment.kubernetes.io/revision":"',
    '"},"spec":{"progressDeadlineSeconds":600,"replicas":',
    ',"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"',
    '"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"labels":{"app":"',
    '{"apiVersion":"v1","kind":"Service","metadata":{"spec":{"clusterIP":"10.96.',
    '","clusterIPs":["10.96.',
    '"],"internalTrafficPolicy":"Cluster","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack",',
    '"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":"http"},{"name":"metrics","port":9090,"protocol":"TCP","targetPort":9090}],"selector":{"app":"',
    '"},"sessionAffinity":"None","type":"ClusterIP"}}',
    '{"apiVersion":"apps/v1","kind":"StatefulSet"{"apiVersion":"batch/v1","kind":"Job"{"apiVersion":"v1","kind":"Pod","data":{"',
  ].join(''),
);

/**
 * Small zlib state (a window that holds the dictionary and a typical object; a low memLevel): the
 * default state allocated and freed per call fragments the C heap and shows as resident memory.
 */
const ZLIB = { dictionary: DICTIONARY, windowBits: 13, memLevel: 5 };

/** True for kinds whose status is computed on every tick (it depends on the time or on pods): their view stays in the clear. */
function readEveryTick(object: KubeObject): boolean {
  const apiVersion = String(object.apiVersion);
  const slash = apiVersion.indexOf('/');
  return dependsOnPodsOrTime(slash < 0 ? '' : apiVersion.slice(0, slash), String(object.kind));
}

/** The compact record of `object` (already slimmed, with apiVersion and kind set). */
export function compactObject(object: KubeObject, options: CompactOptions = {}): CachedObject {
  const view = JSON.stringify(options.whole === true ? object : statusView(object));
  if (options.viewOnly === true) {
    return new CachedObject({
      resourceVersion: readResourceVersion(object),
      redaction: redactionKey(options.redaction),
      view: flatString(view),
      whole: options.whole === true,
      digest: createHash('sha256').update(view).digest().toString('latin1'),
      packed: '',
    });
  }
  const clear = options.clear ?? (options.whole === true || readEveryTick(object));
  const text = canonicalJson(redactObject(object, options.redaction));
  return new CachedObject({
    resourceVersion: readResourceVersion(object),
    redaction: redactionKey(options.redaction),
    // Kept for as long as the object is cached: JSON.stringify may give it as a tree of parts.
    view: clear ? flatString(view) : '',
    whole: options.whole === true,
    digest: createHash('sha256').update(text).digest().toString('latin1'),
    packed: deflateRawSync(clear ? text : `${view}\u0000${text}`, ZLIB).toString('latin1'),
  });
}

/** The status view of a cached object, parsed; throws when it was packed and dropped ({@link CachedObject.hasView}). */
export function readView(record: CachedObject): KubeObject {
  if (record.view !== '') return JSON.parse(record.view) as KubeObject;
  const text = record.unpack();
  // JSON text never holds a raw NUL (JSON.stringify escapes control characters).
  return JSON.parse(text.slice(0, text.indexOf('\u0000'))) as KubeObject;
}

/** The redacted object a record's revision holds; throws when it was dropped ({@link CachedObject.hasBody}). */
export function inflateRevision(record: CachedObject): Record<string, unknown> {
  const text = record.unpack();
  return JSON.parse(record.view === '' ? text.slice(text.indexOf('\u0000') + 1) : text) as Record<string, unknown>;
}

/**
 * The revision of a cached record as the history core takes it, made per observation (a worker
 * keeps the record, not this): the hex hash is made on each read rather than kept beside the
 * digest, and the body inflated on each read and never kept (kept, it would be the whole parsed
 * object again). Once the record dropped its body ({@link releaseStoredBody}) the revision has none:
 * the store holds it by hash.
 */
class CachedRevision implements HashedDocument {
  readonly #record: CachedObject;

  constructor(record: CachedObject) {
    this.#record = record;
  }

  get hash(): string {
    return hexOfDigest(this.#record.digest);
  }

  get digest(): string {
    return this.#record.digest;
  }

  get body(): Record<string, unknown> | undefined {
    return this.#record.hasBody ? inflateRevision(this.#record) : undefined;
  }
}

/**
 * The revision of a cached record as the history core takes it. When the cache redacted with other
 * options than `redaction`, the body is redacted again and hashed anew (correct when the cache
 * dropped no annotation that `redaction` keeps; caches drop none unless told); the record must
 * hold its body then.
 */
export function toHashedDocument(record: CachedObject, redaction?: RedactionOptions): HashedDocument {
  if (record.redaction !== redactionKey(redaction)) {
    const body = redactObject(inflateRevision(record), redaction);
    return { hash: createHash('sha256').update(canonicalJson(body)).digest('hex'), body };
  }
  return new CachedRevision(record);
}

/**
 * Tells a record that a committed snapshot stored its revision: it drops its body unless it still
 * needs it (a view packed with the body goes only once the status computed from it is memoised on
 * the record).
 */
export function releaseStoredBody(record: CachedObject): void {
  if (record.view !== '' || record.memo !== undefined) record.dropBody();
}

/**
 * The fields of `object` that status rules read; the input is not modified. A field of the wrong
 * type is kept as it is, so a rule reports the same malformed-object error as for the whole object.
 */
export function statusView(object: KubeObject): KubeObject {
  const view: KubeObject = {};
  if ('apiVersion' in object) view.apiVersion = object.apiVersion;
  if ('kind' in object) view.kind = object.kind;
  const isPod = object.kind === 'Pod' && object.apiVersion === 'v1';
  const isReplicaSet = object.kind === 'ReplicaSet';
  if ('metadata' in object)
    view.metadata = ownerLinks(
      pick(object.metadata, isPod ? POD_METADATA : isReplicaSet ? REPLICASET_METADATA : VIEW_METADATA),
    );
  if ('spec' in object) view.spec = pick(object.spec, VIEW_SPEC);
  if ('status' in object)
    view.status = statusFields(
      object.status,
      isPod ? 'pod' : findRule(object) !== undefined ? 'built-in rule' : 'generic',
    );
  return view;
}

/** Which status rule reads an object: the Pod rule, another built-in rule, or kstatus' generic checks. */
type StatusReader = 'pod' | 'built-in rule' | 'generic';

/** The status a rule reads: a Pod's phase, conditions and container states; a built-in rule's whole status; else conditions and observedGeneration. */
function statusFields(status: unknown, reader: StatusReader): unknown {
  const isPod = reader === 'pod';
  if (!isRecord(status)) return status;
  const out = isPod
    ? (pick(status, POD_STATUS_FIELDS) as Record<string, unknown>)
    : reader === 'built-in rule'
      ? { ...status }
      : (pick(status, GENERIC_STATUS_FIELDS) as Record<string, unknown>);
  if (Array.isArray(out.conditions)) {
    out.conditions = (out.conditions as unknown[]).map((c) => pick(c, CONDITION_FIELDS));
    if (isPod && (out.conditions as unknown[]).every(isWellFormedCondition))
      out.conditions = (out.conditions as Record<string, unknown>[]).filter((c) =>
        POD_CONDITION_TYPES.has(c.type as string),
      );
  }
  if (isPod && Array.isArray(out.containerStatuses))
    out.containerStatuses = (out.containerStatuses as unknown[]).map(containerStatusView);
  return out;
}

/** `name` and `state.waiting.reason` (what the Pod rule reads), wrong types kept as they are. */
function containerStatusView(item: unknown): unknown {
  const out = pick(item, CONTAINER_STATUS_FIELDS);
  if (!isRecord(out) || !isRecord(out.state)) return out;
  const state = pick(out.state, ['waiting']) as Record<string, unknown>;
  if ('waiting' in state) state.waiting = pick(state.waiting, ['reason']);
  return { ...out, state };
}

/** Metadata with each ownerReference cut to what a tree matches by (apiVersion, controller flags and the rest left out). */
function ownerLinks(metadata: unknown): unknown {
  if (!isRecord(metadata) || !Array.isArray(metadata.ownerReferences)) return metadata;
  return { ...metadata, ownerReferences: metadata.ownerReferences.map((r) => pick(r, OWNER_REFERENCE_FIELDS)) };
}

function pick(value: unknown, keys: readonly string[]): unknown {
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (key in value) out[key] = value[key];
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readResourceVersion(object: KubeObject): string | number {
  const rv = isRecord(object.metadata) ? object.metadata.resourceVersion : undefined;
  if (typeof rv !== 'string') return '';
  // Up to 9 digits without a leading zero: a small integer, one way back to the same text.
  return /^[1-9]\d{0,8}$/.test(rv) ? Number(rv) : rv;
}
