/**
 * The apiserver's write semantics over the object store: create, update (main resource or
 * `/status`), delete with finalizers and propagation policies, generation bumping, optimistic
 * concurrency (409 on stale resourceVersion), namespace termination and a small garbage collector
 * for ownerReferences. Every outcome is data: an object with its HTTP code, or an ApiFailure.
 */
import { randomUUID, randomBytes } from 'node:crypto';
import { formatApiVersion, parseApiVersion, readCrdType, type ResourceType } from './catalog.ts';
import {
  makeAlreadyExists,
  makeConflict,
  makeFailure,
  makeInvalid,
  makeNotFound,
  type ApiFailure,
} from './api-status.ts';
import { settleCrdStatus } from './crd-status.ts';
import { applyWorkloadDefaults } from './defaults.ts';
import { isJsonEqual } from './json-equal.ts';
import { completeRolloutStatus, replicaSetPods, rolloutChildren } from './rollout-controller.ts';
import { ObjectStore, readMeta } from './object-store.ts';
import { TypeRegistry } from './registry.ts';
import type { KubeObject } from './types.ts';

/** Result of a write: the object to return and the HTTP code, or a failure. */
export type WriteResult = { ok: true; code: number; object: KubeObject } | { ok: false; failure: ApiFailure };

/** How a write treats `.status` and other fields. */
export interface UpdateMode {
  /** Write through `/status`: only `.status` changes. */
  subresource?: 'status';
  /** In-process writes (tests, scenarios) keep every field the caller gave, status included. */
  inProcess?: boolean;
  /** `dryRun=All`: compute and validate the result, store nothing, emit nothing. */
  dryRun?: boolean;
}

/** Delete options from the request body or query. */
export interface DeleteOptions {
  propagationPolicy?: string;
  dryRun?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function finalizersOf(obj: KubeObject): string[] {
  const f = readMeta(obj)['finalizers'];
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

function specPart(obj: KubeObject): KubeObject {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

function withoutVolatile(obj: KubeObject): KubeObject {
  const meta = { ...readMeta(obj) };
  delete meta['resourceVersion'];
  delete meta['managedFields'];
  return { ...obj, metadata: meta };
}

function ownerUids(obj: KubeObject): string[] {
  const refs = readMeta(obj)['ownerReferences'];
  if (!Array.isArray(refs)) return [];
  return refs
    .map((r) => (typeof r === 'object' && r !== null ? (r as Record<string, unknown>)['uid'] : undefined))
    .filter((u): u is string => typeof u === 'string');
}

interface Locator {
  type: ResourceType;
  namespace: string;
  name: string;
}

/** Registry + store + write semantics. */
export class ClusterState {
  readonly registry = new TypeRegistry();
  readonly store: ObjectStore;
  /** owner uid -> dependents. */
  private readonly dependents = new Map<string, Map<string, Locator>>();
  /** Objects waiting for the garbage collector (foreground owners, terminating namespaces). */
  private readonly pendingGc = new Map<string, Locator>();
  private settling = false;

  constructor(
    historySize: number,
    private readonly strictNamespaces = false,
    /** Act as the workload controllers after API writes (see rollout-controller.ts). */
    private readonly completeRollouts = false,
  ) {
    this.store = new ObjectStore(historySize);
  }

  private locKey(l: Locator): string {
    return `${l.type.group}/${l.type.plural}/${l.namespace}/${l.name}`;
  }

  /** Looks up a type for an object's apiVersion and kind. */
  resolveType(obj: KubeObject): ResourceType | undefined {
    if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return undefined;
    const { group, version } = parseApiVersion(obj.apiVersion);
    return this.registry.findByKind(group, obj.kind, version);
  }

  /** The stored object. */
  get(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.store.get(type, type.namespaced ? namespace : '', name);
  }

  private stamp(obj: KubeObject, rv: number): KubeObject {
    return { ...obj, metadata: { ...readMeta(obj), resourceVersion: String(rv) } };
  }

  private indexOwners(loc: Locator, before: KubeObject | undefined, after: KubeObject | undefined): void {
    const key = this.locKey(loc);
    for (const uid of before ? ownerUids(before) : []) this.dependents.get(uid)?.delete(key);
    for (const uid of after ? ownerUids(after) : []) {
      let m = this.dependents.get(uid);
      if (!m) this.dependents.set(uid, (m = new Map()));
      m.set(key, loc);
    }
  }

  private storeObject(type: ResourceType, obj: KubeObject, before: KubeObject | undefined): KubeObject {
    const isCrd = type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition';
    const stamped = this.stamp(isCrd ? settleCrdStatus(obj, now()) : obj, this.store.nextRevision());
    const meta = readMeta(stamped);
    const loc = { type, namespace: String(meta['namespace'] ?? ''), name: String(meta['name']) };
    this.indexOwners(loc, before, stamped);
    this.store.put(type, stamped, Number(meta['resourceVersion']));
    if (isCrd) this.serveCrd(stamped);
    return stamped;
  }

  private serveCrd(crd: KubeObject): void {
    const t = readCrdType(crd);
    if (!('error' in t)) this.registry.add(t);
  }

  private removeObject(type: ResourceType, current: KubeObject): KubeObject {
    const rv = this.store.nextRevision();
    const final = this.stamp(current, rv);
    const meta = readMeta(final);
    const loc = { type, namespace: String(meta['namespace'] ?? ''), name: String(meta['name']) };
    this.indexOwners(loc, current, undefined);
    this.pendingGc.delete(this.locKey(loc));
    this.store.remove(type, final, rv);
    if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') {
      const t = readCrdType(final);
      if (!('error' in t)) this.registry.removeCustom(t.group, t.plural);
    }
    const uid = meta['uid'];
    if (typeof uid === 'string') this.cascade(uid);
    return final;
  }

  // Background cascading deletion of dependents, as the garbage collector does.
  private cascade(ownerUid: string): void {
    const deps = this.dependents.get(ownerUid);
    if (!deps) return;
    this.dependents.delete(ownerUid);
    for (const d of [...deps.values()]) this.delete(d.type, d.namespace, d.name, {});
  }

  private namespaceFailure(type: ResourceType, namespace: string): ApiFailure | undefined {
    if (!type.namespaced) return undefined;
    const nsType = this.registry.findByKind('', 'Namespace');
    const ns = nsType ? this.store.get(nsType, '', namespace) : undefined;
    if (!ns && this.strictNamespaces) return makeNotFound('', 'namespaces', namespace);
    if (ns && readMeta(ns)['deletionTimestamp'] !== undefined) {
      return makeFailure(
        403,
        `${type.plural} "${namespace}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        { group: type.group, kind: type.plural },
        'Forbidden',
      );
    }
    return undefined;
  }

  /** POST semantics (and the create half of in-process apply). */
  create(type: ResourceType, namespace: string, body: KubeObject, mode: UpdateMode = {}): WriteResult {
    const meta = { ...readMeta(body) };
    let name = typeof meta['name'] === 'string' ? meta['name'] : '';
    if (name === '' && typeof meta['generateName'] === 'string' && meta['generateName'] !== '') {
      name = meta['generateName'] + randomBytes(4).toString('hex').slice(0, 5);
    }
    if (name === '')
      return {
        ok: false,
        failure: makeInvalid(
          type.group,
          type.kind,
          '',
          'metadata.name',
          'Required value: name or generateName is required',
        ),
      };
    const bodyNs = typeof meta['namespace'] === 'string' ? meta['namespace'] : '';
    if (type.namespaced) {
      if (bodyNs !== '' && namespace !== '' && bodyNs !== namespace) {
        return {
          ok: false,
          failure: makeFailure(
            400,
            'the namespace of the provided object does not match the namespace sent on the request',
          ),
        };
      }
      const ns = namespace !== '' ? namespace : bodyNs !== '' ? bodyNs : 'default';
      meta['namespace'] = ns;
      const nsFailure = this.namespaceFailure(type, ns);
      if (nsFailure) return { ok: false, failure: nsFailure };
    } else {
      delete meta['namespace'];
    }
    meta['name'] = name;
    if (this.store.get(type, String(meta['namespace'] ?? ''), name))
      return { ok: false, failure: makeAlreadyExists(type.group, type.plural, name) };
    if (type.kind === 'CustomResourceDefinition') {
      const t = readCrdType(body);
      if ('error' in t) return { ok: false, failure: makeInvalid(type.group, type.kind, name, 'spec', t.error) };
    }
    // In-process objects (fixtures) may carry their own uid, timestamp and generation; API clients may not.
    const keep = (key: string, valid: (v: unknown) => boolean): boolean => mode.inProcess === true && valid(meta[key]);
    if (!keep('uid', (v) => typeof v === 'string' && v !== '')) meta['uid'] = randomUUID();
    if (!keep('creationTimestamp', (v) => typeof v === 'string' && v !== '')) meta['creationTimestamp'] = now();
    delete meta['deletionTimestamp'];
    delete meta['resourceVersion'];
    if (!keep('generation', (v) => typeof v === 'number' && v > 0)) {
      if (type.hasGeneration) meta['generation'] = 1;
      else delete meta['generation'];
    }
    let obj: KubeObject = { ...body, apiVersion: this.apiVersionFor(type, body), kind: type.kind, metadata: meta };
    if (!mode.inProcess) obj = applyWorkloadDefaults(type.group, type.kind, obj);
    if (type.hasStatus && !mode.inProcess) delete obj['status'];
    if (type.kind === 'Namespace' && type.group === '') obj['status'] = { phase: 'Active' };
    if (mode.dryRun) return { ok: true, code: 201, object: obj };
    const stored = this.storeObject(type, obj, undefined);
    if (!mode.inProcess) this.runControllers(type, stored);
    return { ok: true, code: 201, object: stored };
  }

  // What controllers would do after an API write; the answer to the write itself is unchanged.
  private runControllers(type: ResourceType, stored: KubeObject): void {
    if (!this.completeRollouts || type.group !== 'apps') return;
    this.keepRolloutChildren(type, stored);
    const status = completeRolloutStatus(type.kind, stored, now());
    if (!status) return;
    const meta = readMeta(stored);
    this.update(
      type,
      String(meta['namespace'] ?? ''),
      String(meta['name']),
      { ...stored, status },
      { subresource: 'status' },
    );
  }

  // The ReplicaSets and Pods behind a completed rollout (see rolloutChildren): what is wanted is
  // created or updated, a Deployment's other ReplicaSets are scaled to 0, unwanted Pods deleted.
  private keepRolloutChildren(type: ResourceType, owner: KubeObject): void {
    if (type.kind === 'ReplicaSet') return;
    const wanted = rolloutChildren(type.kind, owner);
    const ownerUid = readMeta(owner)['uid'];
    if (!wanted || typeof ownerUid !== 'string') return;
    const namespace = String(readMeta(owner)['namespace'] ?? '');
    const keep = new Set<string>();
    for (const obj of wanted.objects) {
      const objType = this.resolveType(obj);
      if (!objType) return;
      keep.add(`${obj.kind}/${String(readMeta(obj)['name'])}`);
      const stored = this.upsertInProcess(objType, namespace, obj);
      if (objType.kind === 'ReplicaSet' && stored) this.keepReplicaSetPods(stored);
    }
    for (const dep of [...(this.dependents.get(ownerUid)?.values() ?? [])]) {
      if (keep.has(`${dep.type.kind}/${dep.name}`)) continue;
      const current = this.store.get(dep.type, dep.namespace, dep.name);
      if (!current) continue;
      if (dep.type.kind === 'ReplicaSet') {
        const spec = { ...(current['spec'] as Record<string, unknown>), replicas: 0 };
        const scaled = this.upsertInProcess(dep.type, dep.namespace, {
          ...current,
          spec,
          status: { observedGeneration: readMeta(current)['generation'] ?? 1, replicas: 0 },
        });
        if (scaled) this.keepReplicaSetPods(scaled);
      } else if (dep.type.kind === 'Pod') {
        this.delete(dep.type, dep.namespace, dep.name, {});
      }
    }
  }

  private keepReplicaSetPods(rs: KubeObject): void {
    const podType = this.registry.findByKind('', 'Pod');
    const uid = readMeta(rs)['uid'];
    if (!podType || typeof uid !== 'string') return;
    const namespace = String(readMeta(rs)['namespace'] ?? '');
    const pods = replicaSetPods(rs);
    const names = new Set(pods.map((p) => String(readMeta(p)['name'])));
    for (const pod of pods)
      if (!this.store.get(podType, namespace, String(readMeta(pod)['name'])))
        this.create(podType, namespace, pod, { inProcess: true });
    for (const dep of [...(this.dependents.get(uid)?.values() ?? [])])
      if (dep.type.kind === 'Pod' && dep.type.group === '' && !names.has(dep.name))
        this.delete(podType, dep.namespace, dep.name, {});
  }

  private upsertInProcess(type: ResourceType, namespace: string, obj: KubeObject): KubeObject | undefined {
    const name = String(readMeta(obj)['name']);
    const existing = this.store.get(type, namespace, name);
    const result = existing
      ? this.update(
          type,
          namespace,
          name,
          { ...obj, metadata: { ...readMeta(existing), ...readMeta(obj), resourceVersion: undefined } },
          { inProcess: true },
        )
      : this.create(type, namespace, obj, { inProcess: true });
    return result.ok ? result.object : undefined;
  }

  private apiVersionFor(type: ResourceType, body: KubeObject): string {
    const requested = typeof body.apiVersion === 'string' ? parseApiVersion(body.apiVersion).version : '';
    return formatApiVersion(type.group, type.versions.includes(requested) ? requested : (type.versions[0] ?? 'v1'));
  }

  /** PUT semantics; `body` is the whole new object. */
  update(type: ResourceType, namespace: string, name: string, body: KubeObject, mode: UpdateMode = {}): WriteResult {
    const ns = type.namespaced ? namespace : '';
    const current = this.store.get(type, ns, name);
    if (!current) return { ok: false, failure: makeNotFound(type.group, type.plural, name) };
    const curMeta = readMeta(current);
    const bodyMeta = readMeta(body);
    if (bodyMeta['name'] !== undefined && bodyMeta['name'] !== name) {
      return {
        ok: false,
        failure: makeFailure(
          400,
          `the name of the object (${String(bodyMeta['name'])}) does not match the name on the URL (${name})`,
        ),
      };
    }
    const rv = bodyMeta['resourceVersion'];
    if (rv !== undefined && rv !== '' && String(rv) !== curMeta['resourceVersion']) {
      return { ok: false, failure: makeConflict(type.group, type.plural, name) };
    }
    const next = this.composeUpdate(type, current, body, mode);
    if ('failure' in next) return { ok: false, failure: next.failure };
    // The CRD controllers re-settle the status after every write, so compare against that result.
    const obj =
      type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition'
        ? settleCrdStatus(next.object, now())
        : next.object;
    if (mode.dryRun)
      return {
        ok: true,
        code: 200,
        object: { ...obj, metadata: { ...readMeta(obj), resourceVersion: curMeta['resourceVersion'] } },
      };
    const terminating = curMeta['deletionTimestamp'] !== undefined;
    if (terminating && finalizersOf(obj).length === 0) {
      return { ok: true, code: 200, object: this.finishRemoval(type, obj) };
    }
    if (isJsonEqual(withoutVolatile(obj), withoutVolatile(current))) return { ok: true, code: 200, object: current };
    const stored = this.storeObject(type, obj, current);
    this.settle();
    if (!mode.inProcess && mode.subresource === undefined) this.runControllers(type, stored);
    return { ok: true, code: 200, object: stored };
  }

  private finishRemoval(type: ResourceType, obj: KubeObject): KubeObject {
    const final = this.removeObject(type, obj);
    this.settle();
    return final;
  }

  private composeUpdate(
    type: ResourceType,
    current: KubeObject,
    body: KubeObject,
    mode: UpdateMode,
  ): { object: KubeObject } | { failure: ApiFailure } {
    const curMeta = readMeta(current);
    if (mode.subresource === 'status') {
      const obj: KubeObject = { ...current };
      if (body['status'] === undefined) delete obj['status'];
      else obj['status'] = body['status'];
      return { object: obj };
    }
    const meta: Record<string, unknown> = { ...readMeta(body) };
    for (const k of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'namespace',
      'name',
      'generation',
    ]) {
      if (curMeta[k] === undefined) delete meta[k];
      else meta[k] = curMeta[k];
    }
    let obj: KubeObject = { ...body, apiVersion: this.apiVersionFor(type, body), kind: type.kind, metadata: meta };
    if (!mode.inProcess) obj = applyWorkloadDefaults(type.group, type.kind, obj);
    // API writes to the main resource never change status; in-process writes keep it unless given.
    const keepStatus = type.hasStatus
      ? !mode.inProcess || body['status'] === undefined
      : mode.inProcess === true && body['status'] === undefined;
    if (keepStatus) {
      if (current['status'] === undefined) delete obj['status'];
      else obj['status'] = current['status'];
    }
    if (curMeta['deletionTimestamp'] !== undefined) {
      const before = new Set(finalizersOf(current));
      const added = finalizersOf(obj).filter((f) => !before.has(f));
      if (added.length > 0) {
        return {
          failure: makeFailure(
            422,
            `${type.kind} "${String(curMeta['name'])}" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"${added.join('", "')}"}`,
            undefined,
            'Invalid',
          ),
        };
      }
    }
    const givenGeneration = readMeta(body)['generation'];
    if (mode.inProcess && typeof givenGeneration === 'number' && givenGeneration > 0) {
      meta['generation'] = givenGeneration;
    } else if (type.hasGeneration && !isJsonEqual(specPart(obj), specPart(current))) {
      meta['generation'] = (typeof curMeta['generation'] === 'number' ? curMeta['generation'] : 0) + 1;
    }
    return { object: obj };
  }

  /** DELETE semantics: immediate removal, or Terminating while finalizers remain. */
  delete(type: ResourceType, namespace: string, name: string, opts: DeleteOptions): WriteResult {
    const ns = type.namespaced ? namespace : '';
    const current = this.store.get(type, ns, name);
    if (!current) return { ok: false, failure: makeNotFound(type.group, type.plural, name) };
    const meta = readMeta(current);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== meta['uid']) {
      return {
        ok: false,
        failure: makeFailure(
          409,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta['uid'])}`,
          { name, group: type.group, kind: type.plural },
          'Conflict',
        ),
      };
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== meta['resourceVersion']) {
      return {
        ok: false,
        failure: makeFailure(
          409,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(meta['resourceVersion'])}`,
          { name, group: type.group, kind: type.plural },
          'Conflict',
        ),
      };
    }
    if (opts.dryRun) return { ok: true, code: 200, object: current };
    const finalizers = finalizersOf(current);
    const foreground = opts.propagationPolicy === 'Foreground';
    const isNamespace = type.group === '' && type.kind === 'Namespace';
    if (foreground && !finalizers.includes(FOREGROUND)) finalizers.push(FOREGROUND);
    if (opts.propagationPolicy === 'Orphan') this.orphanDependents(meta);
    if (finalizers.length === 0 && !isNamespace) {
      return { ok: true, code: 200, object: this.finishRemoval(type, current) };
    }
    if (meta['deletionTimestamp'] !== undefined && !foreground) return { ok: true, code: 202, object: current };
    const nextMeta: Record<string, unknown> = {
      ...meta,
      deletionTimestamp: meta['deletionTimestamp'] ?? now(),
      deletionGracePeriodSeconds: 0,
    };
    if (finalizers.length > 0) nextMeta['finalizers'] = finalizers;
    const next: KubeObject = { ...current, metadata: nextMeta };
    if (isNamespace)
      next['status'] = { ...(typeof current['status'] === 'object' ? current['status'] : {}), phase: 'Terminating' };
    const stored = this.storeObject(type, next, current);
    const loc = { type, namespace: ns, name };
    if (foreground || isNamespace) this.pendingGc.set(this.locKey(loc), loc);
    if (foreground && typeof meta['uid'] === 'string') this.deleteDependentsForeground(meta['uid']);
    if (isNamespace) this.deleteNamespaceContents(name);
    this.settle();
    return { ok: true, code: 202, object: this.store.get(type, ns, name) ?? stored };
  }

  // Orphaning: dependents lose their ownerReference to the owner, as the garbage collector does.
  private orphanDependents(meta: Record<string, unknown>): void {
    const uid = meta['uid'];
    if (typeof uid !== 'string') return;
    for (const d of [...(this.dependents.get(uid)?.values() ?? [])]) {
      const dep = this.store.get(d.type, d.namespace, d.name);
      if (!dep) continue;
      const refs = readMeta(dep)['ownerReferences'];
      const kept = Array.isArray(refs)
        ? refs.filter((r) => !(typeof r === 'object' && r !== null && (r as Record<string, unknown>)['uid'] === uid))
        : [];
      const depMeta: Record<string, unknown> = { ...readMeta(dep), ownerReferences: kept };
      if (kept.length === 0) delete depMeta['ownerReferences'];
      this.storeObject(d.type, { ...dep, metadata: depMeta }, dep);
    }
    this.dependents.delete(uid);
  }

  private deleteDependentsForeground(uid: string): void {
    for (const d of [...(this.dependents.get(uid)?.values() ?? [])]) {
      this.delete(d.type, d.namespace, d.name, { propagationPolicy: 'Foreground' });
    }
  }

  private deleteNamespaceContents(namespace: string): void {
    for (const t of this.registry.list()) {
      if (!t.namespaced) continue;
      for (const obj of this.store.listSorted(t, namespace))
        this.delete(t, namespace, String(readMeta(obj)['name']), {});
    }
  }

  // Releases foreground owners whose dependents are gone and namespaces left empty, repeatedly,
  // because each release can free another owner.
  private settle(): void {
    if (this.settling) return;
    this.settling = true;
    try {
      let progress = true;
      while (progress) {
        progress = false;
        for (const [key, loc] of [...this.pendingGc]) {
          const obj = this.store.get(loc.type, loc.namespace, loc.name);
          if (!obj) {
            this.pendingGc.delete(key);
            continue;
          }
          if (this.releaseIfReady(loc, obj)) {
            this.pendingGc.delete(key);
            progress = true;
          }
        }
      }
    } finally {
      this.settling = false;
    }
  }

  private releaseIfReady(loc: Locator, obj: KubeObject): boolean {
    const meta = readMeta(obj);
    const isNamespace = loc.type.group === '' && loc.type.kind === 'Namespace';
    if (isNamespace) {
      if (this.store.countInNamespace(loc.name, this.registry.list()) > 0) return false;
      if (finalizersOf(obj).length === 0) {
        this.removeObject(loc.type, obj);
        return true;
      }
    }
    const uid = meta['uid'];
    const deps = typeof uid === 'string' ? this.dependents.get(uid) : undefined;
    if (deps && deps.size > 0) return false;
    const finalizers = finalizersOf(obj);
    if (!finalizers.includes(FOREGROUND) && !finalizers.includes(ORPHAN)) return !isNamespace;
    const rest = finalizers.filter((f) => f !== FOREGROUND && f !== ORPHAN);
    const next: KubeObject = { ...obj, metadata: { ...meta, finalizers: rest } };
    if (rest.length === 0 && !isNamespace) this.removeObject(loc.type, next);
    else this.storeObject(loc.type, next, obj);
    return !isNamespace || rest.length === 0;
  }
}
