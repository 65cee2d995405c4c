/**
 * What a watch cache keeps of an object, instead of the parsed object (issue #6: Flux's reader ran
 * out of memory holding whole objects). Three things are needed later, and only those are kept:
 *
 * - a status view: the fields kstatus and phaselog's pod-aware rule read (apiVersion, kind, a few
 *   metadata fields, the spec fields of the built-in rules, status). Every path a status rule
 *   reads gives the same value in the view as in the object, so statuses are identical
 *   (test/unit/kube/compact.test.ts checks this over the kstatus conformance fixtures). Kinds a
 *   custom health check (CEL, Lua) covers keep the whole slimmed object: a check may read anything.
 * - the object revision: the sha256 of the redacted metadata+spec (src/history/redact.ts) and
 *   that canonical JSON deflated with a dictionary of Kubernetes vocabulary, in one one-byte
 *   string. It is inflated only when a snapshot opens a new interval for the resource.
 * - the view is deflated together with the revision (they share names, labels and vocabulary:
 *   half the bytes of the two apart), except where it is read on every tick: whole objects (custom
 *   health checks run every tick) and the kinds whose status depends on time or pods (Pods,
 *   StatefulSets, ReplicaSets). Other kinds' statuses are computed once per object version, so
 *   their view is inflated once (~10 µs) when the object changes.
 * - the resourceVersion, to tell a relist's MODIFIED objects from unchanged ones.
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { canonicalJson } from '../history/canonical-hash.ts';
import { redactObject, type RedactionOptions } from '../history/redact.ts';
import type { HashedDocument } from '../history/types.ts';
import { findRule } from '../status/rules/index.ts';
import type { KubeObject } from './slim.ts';

/** One cached object. */
export interface CachedObject {
  /**
   * JSON of what status rules read (or of the whole slimmed object, for kinds with a custom health
   * check), when kept in the clear: a string costs a third of the same data as parsed objects.
   * Empty when the view is packed in {@link revision}. Read it with {@link readView}.
   */
  readonly view: string;
  /**
   * One latin1 string: the 32 bytes of the sha256 of the redacted object's canonical JSON (as
   * `hashRedacted` hashes it), then, deflated (raw, with {@link DICTIONARY}), the view's JSON and a
   * NUL when `view` is empty, and that canonical JSON. One string costs 16 bytes of overhead where
   * a Buffer costs ~100.
   */
  readonly revision: string;
  /** {@link redactionKey} of the options the revision was redacted with. */
  readonly redaction: string;
  readonly resourceVersion: string;
}

/** Options of {@link compactObject}. */
export interface CompactOptions {
  /** Keep the whole (slimmed) object as the view: a custom health check covers this kind. @default false */
  whole?: boolean;
  redaction?: RedactionOptions;
}

/** Metadata fields status rules read: deletion and generations. */
const VIEW_METADATA = ['name', 'namespace', 'generation', 'deletionTimestamp'] as const;
/** Of a Pod's metadata, also the scheduling window's start and the labels pod-aware rules select by. */
const POD_METADATA = [...VIEW_METADATA, 'creationTimestamp', 'labels'] as const;
/** Spec fields the built-in rules read (src/status/rules, selector.ts); values are kept whole. */
const VIEW_SPEC = ['replicas', 'selector', 'progressDeadlineSeconds', 'parallelism', 'completions', 'suspend', 'type', 'clusterIP', 'updateStrategy'] as const;
/** Of a Pod's container statuses, the Pod rule reads `name` and `state.waiting.reason`. */
const CONTAINER_STATUS_FIELDS = ['name', 'state'] as const;
/** What the Pod rule and the generic checks read of a Pod's status. */
const POD_STATUS_FIELDS = ['phase', 'conditions', 'containerStatuses', 'observedGeneration'] as const;
/** What kstatus reads of the status of a kind without a built-in rule. */
const GENERIC_STATUS_FIELDS = ['conditions', 'observedGeneration'] as const;
/** What kstatus reads of a condition (conditions.ts); timestamps are never read. */
const CONDITION_FIELDS = ['type', 'status', 'reason', 'message'] as const;

/**
 * Kubernetes vocabulary in the shape canonical JSON gives it (keys sorted), used as the deflate
 * dictionary: small documents compress poorly alone because each must spell its keys once.
 * Changing it makes stored deflated strings unreadable, but they live in memory only.
 */
const DICTIONARY = Buffer.from([
  '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"config.k8s.io/owning-inventory":"',
  '"},"creationTimestamp":"20','T00:00:00Z","labels":{"app":"','","app.kubernetes.io/instance":"','","app.kubernetes.io/managed-by":"Helm',
  '","app.kubernetes.io/managed-by":"kustomize","app.kubernetes.io/name":"','","app.kubernetes.io/part-of":"','","app.kubernetes.io/version":"',
  '","helm.sh/chart":"','"},"name":"','","namespace":"','","ownerReferences":[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"ReplicaSet","name":"',
  '","uid":"','"}]},"spec":{"affinity":{},"containers":[{"args":["','"],"command":["','"],"env":[{"name":"','","value":"','"},{"name":"',
  '","valueFrom":{"configMapKeyRef":{"key":"','","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"',
  '","valueFrom":{"secretKeyRef":{"key":"','"}}}],"image":"','","imagePullPolicy":"IfNotPresent","livenessProbe":{"failureThreshold":3,"httpGet":{"path":"/healthz","port":"http","scheme":"HTTP"},"initialDelaySeconds":',
  ',"periodSeconds":10,"successThreshold":1,"timeoutSeconds":1},"name":"main","ports":[{"containerPort":8080,"name":"http","protocol":"TCP"}],',
  '"readinessProbe":{"failureThreshold":3,"httpGet":{"path":"/readyz","port":"http","scheme":"HTTP"},"periodSeconds":10,"successThreshold":1,"timeoutSeconds":1},',
  '"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"runAsNonRoot":true},',
  '"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","volumeMounts":[{"mountPath":"','","name":"','","readOnly":true}]}],',
  '"dnsPolicy":"ClusterFirst","enableServiceLinks":true,"nodeName":"','","preemptionPolicy":"PreemptLowerPriority","priority":0,"restartPolicy":"Always","schedulerName":"default-scheduler",',
  '"serviceAccount":"default","serviceAccountName":"default","terminationGracePeriodSeconds":30,"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},',
  '{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}],"volumes":[{"configMap":{"defaultMode":420,"name":"','"},"name":"',
  '{"name":"kube-api-access-","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}]}}]}',
  '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deployment.kubernetes.io/revision":"','"},"spec":{"progressDeadlineSeconds":600,"replicas":',
  ',"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"','"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"labels":{"app":"',
  '{"apiVersion":"v1","kind":"Service","metadata":{"spec":{"clusterIP":"10.96.','","clusterIPs":["10.96.','"],"internalTrafficPolicy":"Cluster","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack",',
  '"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":"http"},{"name":"metrics","port":9090,"protocol":"TCP","targetPort":9090}],"selector":{"app":"','"},"sessionAffinity":"None","type":"ClusterIP"}}',
  '{"apiVersion":"apps/v1","kind":"StatefulSet"{"apiVersion":"batch/v1","kind":"Job"{"apiVersion":"v1","kind":"Pod","data":{"',
].join(''));

/**
 * Small zlib state (8 KB window, enough for the dictionary and a typical object; memLevel 5): the
 * default 256 KB allocated and freed per call fragments the C heap and shows as resident memory.
 */
const ZLIB = { dictionary: DICTIONARY, windowBits: 13, memLevel: 5 };

/** Bytes of the sha256 digest at the start of a record's revision string. */
const DIGEST_BYTES = 32;

/** A stable name of redaction options, so a revision redacted differently is recognised. */
export function redactionKey(options: RedactionOptions | undefined): string {
  const drops = options?.dropAnnotations ?? [];
  return drops.length === 0 ? '' : [...drops].sort().join('\u0000');
}

/** Kinds whose status is computed on every tick (it depends on the time or on pods): their view stays in the clear. */
const READ_EVERY_TICK = new Set(['v1/Pod', 'apps/v1/StatefulSet', 'apps/v1/ReplicaSet', 'extensions/v1beta1/ReplicaSet']);

/** The compact record of `object` (already slimmed, with apiVersion and kind set). */
export function compactObject(object: KubeObject, options: CompactOptions = {}): CachedObject {
  const view = JSON.stringify(options.whole === true ? object : statusView(object));
  const clear = options.whole === true || READ_EVERY_TICK.has(`${String(object.apiVersion)}/${String(object.kind)}`);
  return {
    view: clear ? view : '',
    revision: compactRevision(object, options.redaction, clear ? undefined : view),
    redaction: redactionKey(options.redaction),
    resourceVersion: readResourceVersion(object),
  };
}

/** The status view of a cached object, parsed. */
export function readView(record: CachedObject): KubeObject {
  if (record.view !== '') return JSON.parse(record.view) as KubeObject;
  const text = inflateText(record);
  // JSON text never holds a raw NUL (JSON.stringify escapes control characters).
  return JSON.parse(text.slice(0, text.indexOf('\u0000'))) as KubeObject;
}

/** The redacted revision of `object` (and the packed view): its hash and its canonical JSON deflated, in one string. */
function compactRevision(object: KubeObject, redaction: RedactionOptions | undefined, packedView: string | undefined): string {
  const text = canonicalJson(redactObject(object, redaction));
  const digest = createHash('sha256').update(text).digest();
  return Buffer.concat([digest, deflateRawSync(packedView === undefined ? text : `${packedView}\u0000${text}`, ZLIB)]).toString('latin1');
}

function inflateText(record: CachedObject): string {
  return inflateRawSync(Buffer.from(record.revision.slice(DIGEST_BYTES), 'latin1'), ZLIB).toString('utf8');
}

/**
 * The revision as the history core takes it. A watch-mode worker holds one per cached phase member
 * from tick to tick (in the status memo of src/services/observe-cluster.ts), so it holds nothing
 * but its record: the hex hash is made on each read (~0.65 µs; a snapshot reads it a few times per
 * resource, ~25 ms per 10,000, where keeping it cost 0.6 MB of heap per 10,000 in bench/worker-rss),
 * the body inflated on each read and never kept (a snapshot reads it once, for a revision it
 * stores; kept, it would be the whole parsed object again per record). An object literal with a
 * getter costs ~500 bytes here (closure, context, and a property dictionary), this class ~40.
 */
class CachedRevision implements HashedDocument {
  readonly #record: CachedObject;

  constructor(record: CachedObject) {
    this.#record = record;
  }

  get hash(): string {
    return Buffer.from(this.#record.revision.slice(0, DIGEST_BYTES), 'latin1').toString('hex');
  }

  get body(): Record<string, unknown> {
    return inflateRevision(this.#record);
  }
}

/**
 * The revision of a cached record as the history core takes it. When the cache redacted with
 * other options than `redaction`, the body is redacted again and hashed anew (correct when the
 * cache dropped no annotation that `redaction` keeps; caches drop none unless told).
 */
export function toHashedDocument(record: CachedObject, redaction?: RedactionOptions): HashedDocument {
  if (record.redaction !== redactionKey(redaction)) {
    const body = redactObject(inflateRevision(record), redaction);
    return { hash: createHash('sha256').update(canonicalJson(body)).digest('hex'), body };
  }
  return new CachedRevision(record);
}

/** The redacted object a record's revision holds. */
export function inflateRevision(record: CachedObject): Record<string, unknown> {
  const text = inflateText(record);
  return JSON.parse(record.view === '' ? text.slice(text.indexOf('\u0000') + 1) : text) as Record<string, unknown>;
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
  if ('metadata' in object) view.metadata = pick(object.metadata, isPod ? POD_METADATA : VIEW_METADATA);
  if ('spec' in object) view.spec = pick(object.spec, VIEW_SPEC);
  if ('status' in object) view.status = statusFields(object.status, isPod, findRule(object) !== undefined);
  return view;
}

/** The status a rule reads: a Pod's phase, conditions and container states; a built-in rule's whole status; else conditions and observedGeneration. */
function statusFields(status: unknown, isPod: boolean, hasRule: boolean): unknown {
  if (!isRecord(status)) return status;
  const out = isPod ? pick(status, POD_STATUS_FIELDS) as Record<string, unknown> : hasRule ? { ...status } : pick(status, GENERIC_STATUS_FIELDS) as Record<string, unknown>;
  if (Array.isArray(out.conditions)) out.conditions = (out.conditions as unknown[]).map((c) => pick(c, CONDITION_FIELDS));
  if (isPod && Array.isArray(out.containerStatuses)) out.containerStatuses = (out.containerStatuses as unknown[]).map(containerStatusView);
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

function pick(value: unknown, keys: readonly string[]): unknown {
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (key in value) out[key] = value[key];
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readResourceVersion(object: KubeObject): string {
  const rv = isRecord(object.metadata) ? object.metadata.resourceVersion : undefined;
  return typeof rv === 'string' ? rv : '';
}
