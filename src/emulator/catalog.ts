/**
 * The resource types the emulator serves: the built-in kinds phaselog reads and any kinds added
 * through CustomResourceDefinitions. Storage is keyed on group + plural (never version), as the
 * apiserver stores one copy of an object whatever version it is read through.
 */
import type { KubeObject } from './types.ts';

/** One served resource type (one entry of an APIResourceList). */
export interface ResourceType {
  group: string;
  /** Served versions, preferred first. */
  versions: string[];
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Whether `/status` is a subresource (then the main endpoint ignores status, and vice versa). */
  hasStatus: boolean;
  /** The `/scale` subresource: where the replica counts live (dotted paths), if it has one. */
  scale?: { specReplicasPath: string; statusReplicasPath: string };
  /** Whether the apiserver maintains `metadata.generation` for it. */
  hasGeneration: boolean;
  /** Selectable fields beyond metadata.name and metadata.namespace. */
  fieldPaths: string[];
  /** True for kinds served because of a CRD object. */
  custom: boolean;
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** Verbs advertised in discovery for every type. */
export function listVerbs(): string[] {
  return ALL_VERBS;
}

/** Storage key of a type. */
export function typeKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

/** `apiVersion` string for a group and version (`v1` for core). */
export function formatApiVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** Splits an apiVersion into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

interface BuiltinSpec {
  gv: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  status?: boolean;
  short?: string[];
  categories?: string[];
  fields?: string[];
  scale?: boolean;
}

const POD_FIELDS = [
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.schedulerName',
  'spec.serviceAccountName',
  'status.phase',
  'status.podIP',
  'status.nominatedNodeName',
];
const EVENT_FIELDS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

const BUILTINS: BuiltinSpec[] = [
  {
    gv: 'v1',
    kind: 'Pod',
    plural: 'pods',
    namespaced: true,
    status: true,
    short: ['po'],
    categories: ['all'],
    fields: POD_FIELDS,
  },
  {
    gv: 'v1',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    status: true,
    short: ['svc'],
    categories: ['all'],
  },
  { gv: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, short: ['cm'] },
  { gv: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, fields: ['type'] },
  {
    gv: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    status: true,
    short: ['ns'],
    fields: ['status.phase'],
  },
  { gv: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, short: ['sa'] },
  {
    gv: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
    status: true,
    short: ['pvc'],
  },
  { gv: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true, status: true, short: ['quota'] },
  { gv: 'v1', kind: 'Event', plural: 'events', namespaced: true, short: ['ev'], fields: EVENT_FIELDS },
  {
    gv: 'apps/v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    status: true,
    scale: true,
    short: ['deploy'],
    categories: ['all'],
  },
  {
    gv: 'apps/v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    namespaced: true,
    status: true,
    scale: true,
    short: ['sts'],
    categories: ['all'],
  },
  {
    gv: 'apps/v1',
    kind: 'DaemonSet',
    plural: 'daemonsets',
    namespaced: true,
    status: true,
    short: ['ds'],
    categories: ['all'],
  },
  {
    gv: 'apps/v1',
    kind: 'ReplicaSet',
    plural: 'replicasets',
    namespaced: true,
    status: true,
    scale: true,
    short: ['rs'],
    categories: ['all'],
  },
  { gv: 'batch/v1', kind: 'Job', plural: 'jobs', namespaced: true, status: true, categories: ['all'] },
  {
    gv: 'batch/v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    namespaced: true,
    status: true,
    short: ['cj'],
    categories: ['all'],
  },
  {
    gv: 'policy/v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    status: true,
    short: ['pdb'],
  },
  { gv: 'rbac.authorization.k8s.io/v1', kind: 'Role', plural: 'roles', namespaced: true },
  { gv: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  { gv: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
  { gv: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false },
  { gv: 'scheduling.k8s.io/v1', kind: 'PriorityClass', plural: 'priorityclasses', namespaced: false, short: ['pc'] },
  { gv: 'networking.k8s.io/v1', kind: 'Ingress', plural: 'ingresses', namespaced: true, status: true, short: ['ing'] },
  {
    gv: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
    status: true,
    short: ['crd', 'crds'],
  },
];

// Kinds whose apiserver strategy maintains metadata.generation (all with a spec and a status).
const NO_GENERATION = new Set(['Namespace', 'Service', 'PersistentVolumeClaim', 'Pod', 'ResourceQuota']);

/** The built-in (non-CRD) resource types. */
export function listBuiltinTypes(): ResourceType[] {
  return BUILTINS.map((b) => {
    const { group, version } = parseApiVersion(b.gv);
    return {
      group,
      versions: [version],
      kind: b.kind,
      plural: b.plural,
      singular: b.kind.toLowerCase(),
      namespaced: b.namespaced,
      shortNames: b.short ?? [],
      categories: b.categories ?? [],
      hasStatus: b.status === true,
      hasGeneration: b.status === true && !NO_GENERATION.has(b.kind),
      fieldPaths: b.fields ?? [],
      custom: false,
      ...(b.scale === true
        ? { scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: 'status.replicas' } }
        : {}),
    };
  });
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Reads the served type out of a CustomResourceDefinition (apiextensions.k8s.io/v1). Returns an
 * error message instead when the CRD lacks what the apiserver would require.
 */
export function readCrdType(crd: KubeObject): ResourceType | { error: string } {
  const spec = asRecord(crd['spec']);
  const names = asRecord(spec['names']);
  const group = spec['group'];
  const kind = names['kind'];
  const plural = names['plural'];
  if (typeof group !== 'string' || group === '') return { error: 'spec.group: Required value' };
  if (typeof kind !== 'string' || kind === '') return { error: 'spec.names.kind: Required value' };
  if (typeof plural !== 'string' || plural === '') return { error: 'spec.names.plural: Required value' };
  const versions = Array.isArray(spec['versions']) ? spec['versions'].map(asRecord) : [];
  const served = versions.filter((v) => v['served'] !== false && typeof v['name'] === 'string');
  if (served.length === 0) return { error: 'spec.versions: must have exactly one version marked as storage version' };
  // Discovery lists the storage version first, as kube-apiserver sorts by version priority.
  served.sort((a, b) => Number(b['storage'] === true) - Number(a['storage'] === true));
  const hasStatus = served.some((v) => 'status' in asRecord(v['subresources']));
  const scaleDef = served
    .map((v) => asRecord(asRecord(v['subresources'])['scale']))
    .find((x) => typeof x['specReplicasPath'] === 'string');
  const selectable = served.flatMap((v) =>
    Array.isArray(v['selectableFields']) ? v['selectableFields'].map(asRecord) : [],
  );
  return {
    group,
    versions: served.map((v) => v['name'] as string),
    kind,
    plural,
    singular:
      typeof names['singular'] === 'string' && names['singular'] !== '' ? names['singular'] : kind.toLowerCase(),
    namespaced: spec['scope'] !== 'Cluster',
    shortNames: asStrings(names['shortNames']),
    categories: asStrings(names['categories']),
    hasStatus,
    hasGeneration: true,
    fieldPaths: selectable.map((f) => String(f['jsonPath'] ?? '').replace(/^\./, '')).filter((p) => p !== ''),
    custom: true,
    ...(scaleDef
      ? {
          scale: {
            specReplicasPath: String(scaleDef['specReplicasPath']).replace(/^\./, ''),
            statusReplicasPath: String(scaleDef['statusReplicasPath'] ?? '.status.replicas').replace(/^\./, ''),
          },
        }
      : {}),
  };
}

const READY_COLUMNS = [
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
];

const ARGO_COLUMNS = [
  { name: 'Sync Status', type: 'string', jsonPath: '.status.sync.status' },
  { name: 'Health Status', type: 'string', jsonPath: '.status.health.status' },
  { name: 'Revision', type: 'string', jsonPath: '.status.sync.revision', priority: 10 },
];

function makeInventoryCrd(
  group: string,
  version: string,
  kind: string,
  plural: string,
  short: string[],
  columns: object[] = [],
): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List`, shortNames: short },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          ...(columns.length > 0 ? { additionalPrinterColumns: columns } : {}),
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** CRDs of the inventory kinds phaselog reads; installed in every emulator so they are served. */
export function listInventoryCrds(): KubeObject[] {
  return [
    makeInventoryCrd('kpt.dev', 'v1alpha1', 'ResourceGroup', 'resourcegroups', []),
    makeInventoryCrd('kustomize.toolkit.fluxcd.io', 'v1', 'Kustomization', 'kustomizations', ['ks'], READY_COLUMNS),
    makeInventoryCrd('helm.toolkit.fluxcd.io', 'v2', 'HelmRelease', 'helmreleases', ['hr'], READY_COLUMNS),
    makeInventoryCrd('argoproj.io', 'v1alpha1', 'Application', 'applications', ['app', 'apps'], ARGO_COLUMNS),
  ];
}
