/**
 * Service-account tokens and RBAC, for `rbac: true`. Tokens minted by TokenRequest (`kubectl
 * create token <sa>`) authenticate as `system:serviceaccount:<namespace>:<name>`, and each request
 * such a token makes is authorized by the Roles, ClusterRoles and bindings stored in the emulator,
 * with the apiserver's RBAC rules: a ClusterRoleBinding grants its role's rules everywhere; a
 * RoleBinding grants its Role's or ClusterRole's rules in its own namespace only; a rule matches
 * when its verbs, apiGroups, resources (`plural` or `plural/subresource`) and resourceNames all
 * do, `*` matching anything. Discovery, OpenAPI, /version and health paths are open to every
 * authenticated user, as the default `system:discovery` and `system:public-info-viewer` bindings
 * make them. Aggregation, escalation checks and non-resource URL rules are not modelled.
 */
import type { ClusterState } from './cluster-state.ts';
import type { RequestInfo, ResourceRequest } from './request-info.ts';
import type { KubeObject } from './types.ts';

/** The service account a minted token stands for. */
export interface ServiceAccountIdentity {
  namespace: string;
  name: string;
}

/** The user name the apiserver gives a service account. */
export function serviceAccountUser(sa: ServiceAccountIdentity): string {
  return `system:serviceaccount:${sa.namespace}:${sa.name}`;
}

interface Rule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

/** Whether the service account may make this request. */
export function isAllowed(state: ClusterState, sa: ServiceAccountIdentity, info: RequestInfo): boolean {
  if (info.kind !== 'resource') return true;
  const ns = info.namespace;
  for (const binding of objectsOf(state, 'ClusterRoleBinding', undefined)) {
    if (!bindsTo(binding, sa)) continue;
    if (rulesOf(state, binding, undefined).some((rule) => matches(rule, info))) return true;
  }
  if (ns === undefined) return false;
  for (const binding of objectsOf(state, 'RoleBinding', ns)) {
    if (!bindsTo(binding, sa)) continue;
    if (rulesOf(state, binding, ns).some((rule) => matches(rule, info))) return true;
  }
  return false;
}

/** Who a review (`kubectl auth can-i`, `kubectl auth whoami`) is about, and what they may do. */
export interface Reviewer {
  user: string;
  groups: string[];
  /** Whether the reviewer may do what a SelfSubjectAccessReview's `resourceAttributes` describe. */
  can(attributes: {
    verb?: string;
    group?: string;
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
  }): boolean;
}

/** The reviewer behind a service-account token. */
export function reviewerFor(state: ClusterState, sa: ServiceAccountIdentity): Reviewer {
  return {
    user: serviceAccountUser(sa),
    groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
    can: (a) =>
      isAllowed(state, sa, {
        kind: 'resource',
        verb: (a.verb ?? '') as ResourceRequest['verb'],
        group: a.group ?? '',
        version: '',
        plural: a.resource ?? '',
        namespace: a.namespace === '' ? undefined : a.namespace,
        name: a.name === '' ? undefined : a.name,
        subresource: a.subresource === '' ? undefined : a.subresource,
      }),
  };
}

/** The apiserver's Forbidden message for a denied request. */
export function forbiddenMessage(sa: ServiceAccountIdentity, info: ResourceRequest): string {
  const resource = info.subresource !== undefined ? `${info.plural}/${info.subresource}` : info.plural;
  const what = info.name !== undefined ? `${resource} "${info.name}"` : resource;
  const where = info.namespace !== undefined ? ` in the namespace "${info.namespace}"` : ' at the cluster scope';
  return `${what} is forbidden: User "${serviceAccountUser(sa)}" cannot ${info.verb} resource "${resource}" in API group "${info.group}"${where}`;
}

function objectsOf(state: ClusterState, kind: string, namespace: string | undefined): KubeObject[] {
  const type = state.registry.findByKind('rbac.authorization.k8s.io', kind);
  if (type === undefined) return [];
  return state.store
    .sortedKeys(type, namespace)
    .map((key) => state.store.getByKey(type, key))
    .filter((o): o is KubeObject => o !== undefined);
}

function bindsTo(binding: KubeObject, sa: ServiceAccountIdentity): boolean {
  const subjects = (binding['subjects'] ?? []) as Subject[];
  const user = serviceAccountUser(sa);
  const groups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'];
  return subjects.some(
    (s) =>
      (s.kind === 'ServiceAccount' && s.name === sa.name && s.namespace === sa.namespace) ||
      (s.kind === 'User' && s.name === user) ||
      (s.kind === 'Group' && s.name !== undefined && groups.includes(s.name)),
  );
}

/** The rules a binding grants: its roleRef's, looked up now (a role edited later counts at once). */
function rulesOf(state: ClusterState, binding: KubeObject, namespace: string | undefined): Rule[] {
  const ref = (binding['roleRef'] ?? {}) as { kind?: string; name?: string };
  if (ref.name === undefined) return [];
  const candidates =
    ref.kind === 'Role' && namespace !== undefined
      ? objectsOf(state, 'Role', namespace)
      : ref.kind === 'ClusterRole'
        ? objectsOf(state, 'ClusterRole', undefined)
        : [];
  const role = candidates.find((r) => (r.metadata as { name?: string } | undefined)?.name === ref.name);
  return (role?.['rules'] ?? []) as Rule[];
}

function matches(rule: Rule, info: ResourceRequest): boolean {
  const resource = info.subresource !== undefined ? `${info.plural}/${info.subresource}` : info.plural;
  const has = (list: string[] | undefined, value: string): boolean =>
    (list ?? []).some((entry) => entry === '*' || entry === value);
  if (!has(rule.verbs, info.verb)) return false;
  if (!has(rule.apiGroups, info.group)) return false;
  if (!has(rule.resources, resource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (info.name !== undefined && names.includes(info.name));
}
