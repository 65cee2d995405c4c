/**
 * kstatus' built-in rule table (cli-utils `core.go`, `legacyTypes`), keyed by API group and kind,
 * never by version. `extensions` aliases exist for Deployment, DaemonSet and ReplicaSet only; a
 * custom resource that happens to be called `Deployment` in another group gets the generic path.
 */
import type { JsonRecord } from '../read.ts';
import { computeAlwaysReadyStatus } from './always-ready.ts';
import { computeArgoWorkflowStatus } from './argo-workflow.ts';
import { computeCustomResourceDefinitionStatus } from './crd.ts';
import { computeDaemonSetStatus } from './daemonset.ts';
import { computeDeploymentStatus } from './deployment.ts';
import { computeJobStatus } from './job.ts';
import { computePodDisruptionBudgetStatus } from './pdb.ts';
import { computePodStatus } from './pod.ts';
import { computePersistentVolumeClaimStatus } from './pvc.ts';
import { computeReplicaSetStatus } from './replicaset.ts';
import type { StatusRule } from './rule.ts';
import { computeServiceStatus } from './service.ts';
import { computeStatefulSetStatus } from './statefulset.ts';

export type { RuleContext, StatusRule } from './rule.ts';

/** A rule with the apiVersion prefix (`apps/`) its group is recognised by. */
interface RuleEntry {
  group: string;
  prefix: string;
  rule: StatusRule;
}

/** kind -> rules by group. Matching compares prefixes, so a lookup allocates nothing. */
const RULES = new Map<string, RuleEntry[]>();

function register(group: string, kind: string, rule: StatusRule): void {
  const entries = RULES.get(kind) ?? [];
  entries.push({ group, prefix: `${group}/`, rule });
  RULES.set(kind, entries);
}

/** True when `apiVersion` parses (as apimachinery's ParseGroupVersion) to the entry's group. */
function hasGroup(apiVersion: string, entry: RuleEntry): boolean {
  if (entry.group === '') return apiVersion === '/' || apiVersion.indexOf('/') === -1;
  return apiVersion.startsWith(entry.prefix) && apiVersion.indexOf('/', entry.prefix.length) === -1;
}

register('', 'Service', computeServiceStatus);
register('', 'Pod', computePodStatus);
register('', 'Secret', computeAlwaysReadyStatus);
register('', 'PersistentVolumeClaim', computePersistentVolumeClaimStatus);
register('apps', 'StatefulSet', computeStatefulSetStatus);
register('apps', 'DaemonSet', computeDaemonSetStatus);
register('extensions', 'DaemonSet', computeDaemonSetStatus);
register('apps', 'Deployment', computeDeploymentStatus);
register('extensions', 'Deployment', computeDeploymentStatus);
register('apps', 'ReplicaSet', computeReplicaSetStatus);
register('extensions', 'ReplicaSet', computeReplicaSetStatus);
register('policy', 'PodDisruptionBudget', computePodDisruptionBudgetStatus);
register('batch', 'CronJob', computeAlwaysReadyStatus);
register('', 'ConfigMap', computeAlwaysReadyStatus);
register('batch', 'Job', computeJobStatus);
register('apiextensions.k8s.io', 'CustomResourceDefinition', computeCustomResourceDefinitionStatus);
// Not a kstatus rule: Argo CD's health check for Workflows, so owner phases see a Workflow's end.
register('argoproj.io', 'Workflow', computeArgoWorkflowStatus);

/** Group and kind as apimachinery's `GroupVersionKind()` reads them. */
export interface GroupKind {
  group: string;
  kind: string;
}

/**
 * The group of an `apiVersion` by apimachinery's `ParseGroupVersion`: `''` for `v1`, the part
 * before the slash for `apps/v1`, and `undefined` for text with more than one slash (which makes
 * apimachinery drop the whole GroupVersionKind, kind included).
 */
export function parseGroup(apiVersion: string): string | undefined {
  if (apiVersion === '' || apiVersion === '/') return '';
  const slash = apiVersion.indexOf('/');
  if (slash === -1) return '';
  if (apiVersion.indexOf('/', slash + 1) !== -1) return undefined;
  return apiVersion.slice(0, slash);
}

/** The object's group and kind as kstatus keys its rules; a malformed apiVersion yields empty ones. */
export function readGroupKind(obj: JsonRecord): GroupKind {
  const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
  const group = parseGroup(apiVersion);
  if (group === undefined) return { group: '', kind: '' };
  return { group, kind: typeof obj['kind'] === 'string' ? obj['kind'] : '' };
}

/** The built-in rule for an object, or `undefined` when kstatus has none for its group and kind. */
export function findRule(obj: JsonRecord): StatusRule | undefined {
  const kind = obj['kind'];
  if (typeof kind !== 'string') return undefined;
  const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
  const entries = RULES.get(kind);
  if (entries !== undefined) {
    for (const entry of entries) if (hasGroup(apiVersion, entry)) return entry.rule;
    return undefined;
  }
  return parseGroup(apiVersion) === '' ? findRuleBySlashedKind(kind) : undefined;
}

/**
 * kstatus joins group and kind as `group/kind`, or just `kind` for the core group, so a core-group
 * object whose kind text is itself `apps/Deployment` hits the Deployment rule. Kept for fidelity.
 */
function findRuleBySlashedKind(kind: string): StatusRule | undefined {
  const slash = kind.indexOf('/');
  if (slash <= 0 || kind.indexOf('/', slash + 1) !== -1) return undefined;
  const group = kind.slice(0, slash);
  return RULES.get(kind.slice(slash + 1))?.find((entry) => entry.group === group)?.rule;
}
