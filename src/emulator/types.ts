/**
 * Public types of the Kubernetes API emulator. The emulator speaks the real HTTP protocol of a
 * kube-apiserver (discovery, CRUD, watch, Status errors) so `@kubernetes/client-node` and `kubectl`
 * drive it as they would a cluster; these types are its in-process control surface for tests,
 * the demo and the benchmarks.
 */

/** A Kubernetes object as the emulator stores it: plain JSON. */
export type KubeObject = Record<string, unknown> & {
  apiVersion?: string;
  kind?: string;
  metadata?: Record<string, unknown>;
};

/** Identifies one object for the in-process helpers (`get`, `patchStatus`, `remove`). */
export interface EmulatorObjectRef {
  apiVersion: string;
  kind: string;
  /** Omit (or leave empty) for cluster-scoped kinds. */
  namespace?: string;
  name: string;
}

/** Options of {@link startEmulator}. */
export interface EmulatorOptions {
  /** TCP port. @default 0 (ephemeral) */
  port?: number;
  /** Interface to bind. @default '127.0.0.1' */
  host?: string;
  /** Serve HTTPS with a freshly generated self-signed certificate (needs the `openssl` CLI). @default false */
  tls?: boolean;
  /** When set, every request must carry `Authorization: Bearer <token>`, else 401. */
  token?: string;
  /**
   * Host names (besides loopback names, IP addresses and `host`) that `Host` may carry. Without a
   * `token` every request's `Host` is checked (DNS rebinding: a page re-pointed at this address
   * must not read the cluster, 421 otherwise); with a token only once names are given here, as a
   * page cannot send the token. @default []
   */
  allowedHosts?: string[];
  /**
   * Service accounts and RBAC: tokens minted with `kubectl create token <sa>` (TokenRequest)
   * authenticate as that service account, and their requests are authorized by the Roles,
   * ClusterRoles and bindings stored in the emulator (403 otherwise). The `token` above, or no
   * token when it is unset, keeps full access; any other bearer token gets 401. @default false
   */
  rbac?: boolean;
  /** Cluster, user and context name in the generated kubeconfig. @default 'emulated' */
  clusterName?: string;
  /** CustomResourceDefinition objects (apiextensions.k8s.io/v1) whose kinds are served from the start. */
  crds?: object[];
  /** How often open watches that asked for `allowWatchBookmarks=true` get a BOOKMARK. @default 5000 */
  bookmarkIntervalMs?: number;
  /** Watch events kept per resource type before older resourceVersions answer 410 Gone. @default 10000 */
  watchHistorySize?: number;
  /**
   * Refuse (404 `namespaces "x" not found`) to create objects in namespaces that do not exist, as
   * the apiserver's NamespaceLifecycle admission does. Off by default so fixtures load in any order.
   * @default false
   */
  strictNamespaces?: boolean;
  /**
   * Act as the workload controllers: after an API create or update of a Deployment, StatefulSet or
   * DaemonSet, its status reports the rollout complete (all replicas updated and available), so
   * `kubectl rollout status` finishes. Off by default: tests and scenarios script status themselves.
   * @default false
   */
  completeRollouts?: boolean;
  /** Entries kept in the request log ({@link Emulator.requests}). @default 100000 */
  requestLogSize?: number;
}

/** Verbs as the emulator classifies requests (kube-apiserver's RequestInfo verbs plus `discovery`). */
export type EmulatorVerb =
  'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'discovery';

/**
 * What a fault does to a matching request.
 * - `reset`: the TCP connection is reset without an answer.
 * - `hang`: the request is never answered (until the emulator closes).
 * - `status`: an HTTP error with a proper `Status` body (`statusCode`, default 500).
 * - `latency`: only waits `latencyMs`, then the request proceeds normally.
 */
export type FaultEffect = 'reset' | 'hang' | 'status' | 'latency';

/** A fault injected with {@link Emulator.injectFault}. Rules are tried in the order they were added. */
export interface FaultRule {
  /** Which requests it hits; omitted fields match anything. `group` is '' for the core group. */
  match?: {
    verb?: EmulatorVerb;
    group?: string;
    /** Plural resource name, e.g. `deployments`. */
    resource?: string;
    kind?: string;
    namespace?: string;
  };
  effect: FaultEffect;
  /** For `status`: 400/401/403/404/409/410/429/500/503 (any 4xx/5xx works). @default 500 */
  statusCode?: number;
  /** For 429 (and 503): value of the `Retry-After` header and of `details.retryAfterSeconds`. */
  retryAfterSeconds?: number;
  /** Extra delay before the effect; with `latency` it is the whole effect. Latency rules add up. */
  latencyMs?: number;
  /** Apply to this many matching requests, then stop. @default unlimited (until removed) */
  times?: number;
}

/** One request the emulator received. `status` is 0 while unanswered, and for reset connections. */
export interface RequestRecord {
  verb: string;
  method: string;
  path: string;
  group: string;
  resource: string;
  namespace?: string;
  status: number;
  /** The client's User-Agent header (phaselog's names the worker). */
  userAgent?: string;
  /** Epoch ms the request arrived and its response ended (a watch ends when either side closes it). */
  at?: number;
  endedAt?: number;
}

/** Options of {@link Emulator.remove}. */
export interface RemoveOptions {
  /** @default 'Background' */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
}

/** A running emulator. Everything in-process is synchronous; watch clients see the changes at once. */
export interface Emulator {
  /** Base URL, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  /** Kubeconfig YAML for this server (with the bearer token if one is required). */
  kubeconfig(opts?: { contextName?: string }): string;
  /** Writes {@link Emulator.kubeconfig} to a file (mode 0600). */
  writeKubeconfig(path: string, opts?: { contextName?: string }): Promise<void>;
  /**
   * Creates or replaces objects in-process: status included (an object without a `status` key
   * keeps the stored one, as a real apply would), resourceVersion bumped, generation bumped when the
   * spec changed, watch events emitted. Unlike API writes, a `metadata.generation`,
   * `uid` or `creationTimestamp` given in the object is kept, so fixtures with
   * `status.observedGeneration` stay consistent. Throws EmulatorInputError on unknown kinds.
   */
  apply(obj: object | object[]): void;
  /** JSON-merge-patches `.status` of an existing object (throws if it does not exist). */
  patchStatus(ref: EmulatorObjectRef, status: Record<string, unknown>): void;
  /** Deletes like the API does: objects with finalizers (or Foreground deletion) turn Terminating. Returns whether it existed. */
  remove(ref: EmulatorObjectRef, opts?: RemoveOptions): boolean;
  /** A copy of the stored object, or undefined. */
  get(ref: EmulatorObjectRef): KubeObject | undefined;
  /** Copies of the stored objects of a kind (in one namespace, or all), in namespace/name order, optionally filtered by a label selector. Throws EmulatorInputError on an unknown kind or bad selector. */
  list(query: { apiVersion: string; kind: string; namespace?: string; labelSelector?: string }): KubeObject[];
  /** Applies every object in a YAML (multi-document) or JSON (object, array or List) file; returns how many. */
  loadFile(path: string): Promise<number>;
  /** Adds a fault rule; returns a function that removes it. */
  injectFault(rule: FaultRule): () => void;
  clearFaults(): void;
  /** The fault rules in force, in the order they are tried; `remaining` is Infinity for rules without `times`. */
  faults(): { rule: FaultRule; remaining: number }[];
  /**
   * `true`: stop listening, so new connections are refused (ECONNREFUSED) as from a cluster whose
   * apiserver is down, and cut open connections and watches. `false`: listen again on the same port.
   */
  refuseConnections(refuse: boolean): Promise<void>;
  /** Whether {@link Emulator.refuseConnections} is in force. */
  readonly refusing: boolean;
  /** The request log, oldest first (bounded by `requestLogSize`). */
  requests(): readonly RequestRecord[];
  /** How many logged requests match every given field. */
  requestCount(filter?: Partial<RequestRecord>): number;
  resetRequests(): void;
  /** Forgets watch history: watches and continue tokens from before now answer 410 Gone. */
  compact(): void;
  /** Ends every open watch stream cleanly (as an apiserver restart or timeout would); returns how many. */
  closeWatches(): number;
  /** The current global resourceVersion (etcd revision). */
  resourceVersion(): number;
  /** Number of stored objects. */
  objectCount(): number;
  /** Stops listening, ends open watches and hung requests. */
  close(): Promise<void>;
}
