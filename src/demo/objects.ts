/**
 * The demo's starting state: for each cluster, workloads in a namespace and the inventories that
 * make them phases (one phase per inventory kind: cli-utils ConfigMap, kpt ResourceGroup, Flux
 * Kustomization, Argo CD Application), and on staging an operator's custom resource whose Jobs,
 * Pods and Workflows make it an owner phase.
 */
import type { KubeObject } from '../emulator/index.ts';
import { buildPodStatus } from '../emulator/workload-objects.ts';

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A Pod whose one container runs and is ready (kstatus: Current). */
export function runningPod(namespace: string, name: string, image = 'busybox:1.36'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: name } },
    spec: { containers: [{ name: 'main', image }], restartPolicy: 'Always' },
    status: buildPodStatus('main', image, 'running', 0),
  };
}

/** A Deployment whose status says it is fully rolled out (kstatus: Current). */
export function readyDeployment(namespace: string, name: string, replicas = 2, image = 'nginx:1.27'): KubeObject {
  const t = now();
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name }, generation: 1 },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
    status: {
      observedGeneration: 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
          lastUpdateTime: t,
          lastTransitionTime: t,
        },
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: `ReplicaSet "${name}-5d9c7b" has successfully progressed.`,
          lastUpdateTime: t,
          lastTransitionTime: t,
        },
      ],
    },
  };
}

export function service(namespace: string, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: {
      selector: { app: name },
      ports: [{ port: 80, targetPort: 8080 }],
      clusterIP: '10.96.12.34',
      type: 'ClusterIP',
    },
    status: { loadBalancer: {} },
  };
}

export function configMap(
  namespace: string,
  name: string,
  data: Record<string, string> = { LOG_LEVEL: 'info' },
): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

export function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Active' } };
}

interface Ref {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  version: string;
}

/** cli-utils' ObjMetadata string: `<namespace>_<name>_<group>_<kind>`. */
function objMetadata(ref: Ref): string {
  return `${ref.namespace}_${ref.name}_${ref.group}_${ref.kind}`;
}

/** A cli-utils inventory ConfigMap, as kpt and airshipctl write it. */
export function cliUtilsInventory(namespace: string, inventoryId: string, refs: Ref[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `inventory-${inventoryId}`,
      namespace,
      labels: { 'cli-utils.sigs.k8s.io/inventory-id': inventoryId },
    },
    data: Object.fromEntries(
      refs.map((r) => [objMetadata(r), '{"strategy":"Apply","actuation":"Succeeded","reconcile":"Succeeded"}']),
    ),
  };
}

/** A kpt ResourceGroup inventory. */
export function resourceGroup(namespace: string, name: string, refs: Ref[]): KubeObject {
  return {
    apiVersion: 'kpt.dev/v1alpha1',
    kind: 'ResourceGroup',
    metadata: {
      name,
      namespace,
      generation: 1,
      labels: { 'cli-utils.sigs.k8s.io/inventory-id': `${namespace}-${name}` },
    },
    spec: {
      resources: refs.map(({ group, kind, namespace: ns, name: n }) => ({ group, kind, namespace: ns, name: n })),
    },
  };
}

/** A Flux Kustomization with its `.status.inventory`. */
export function fluxKustomization(name: string, refs: Ref[], revision: string): KubeObject {
  const t = now();
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system', generation: 1 },
    spec: {
      interval: '10m',
      path: `./apps/${name}`,
      prune: true,
      sourceRef: { kind: 'GitRepository', name: 'flux-system' },
    },
    status: {
      observedGeneration: 1,
      lastAppliedRevision: revision,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'ReconciliationSucceeded',
          message: `Applied revision: ${revision}`,
          observedGeneration: 1,
          lastTransitionTime: t,
        },
      ],
      inventory: { entries: refs.map((r) => ({ id: objMetadata(r), v: r.version })) },
    },
  };
}

/** An Argo CD Application with its `.status.resources`. */
export function argoApplication(name: string, destinationNamespace: string, refs: Ref[]): KubeObject {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name, namespace: 'argocd', generation: 1 },
    spec: {
      project: 'default',
      source: { repoURL: 'https://git.example.com/platform/demo.git', path: name, targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: destinationNamespace },
    },
    status: {
      resources: refs.map((r) => ({
        ...(r.group ? { group: r.group } : {}),
        version: r.version,
        kind: r.kind,
        ...(r.namespace ? { namespace: r.namespace } : {}),
        name: r.name,
        status: 'Synced',
      })),
      sync: { status: 'Synced', revision: 'a1b2c3d' },
    },
  };
}

/**
 * The inventory object with the labels that put its phase at `order` in `plan` (phaselog.dev/plan,
 * phaselog.dev/plan-order): how a plan is declared without phaselog.yaml.
 */
export function inPlan(object: KubeObject, plan: string, order: number): KubeObject {
  const metadata = (object.metadata ?? {}) as { labels?: Record<string, string> };
  return {
    ...object,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, 'phaselog.dev/plan': plan, 'phaselog.dev/plan-order': String(order) },
    },
  };
}

export function ref(kind: string, namespace: string, name: string): Ref {
  const table: Record<string, [string, string]> = {
    Deployment: ['apps', 'v1'],
    Service: ['', 'v1'],
    ConfigMap: ['', 'v1'],
    Namespace: ['', 'v1'],
    Pod: ['', 'v1'],
  };
  const [group, version] = table[kind] ?? ['', 'v1'];
  return { group, kind, namespace, name, version };
}

/** A namespaced custom resource type with a status subresource, served once applied. */
export function customResourceDefinition(group: string, version: string, kind: string, plural: string): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** The demo's operator-driven phase kind, shaped like the OpenStack LCM operator's `OsPhase`. */
export const LCM_PHASE = { group: 'lcm.example.dev', version: 'v1alpha1', kind: 'Phase', plural: 'phases' } as const;

/** The CRDs the demo's owner phases need: the LCM Phase kind and Argo Workflows. */
export function ownerPhaseCrds(): KubeObject[] {
  return [
    customResourceDefinition(LCM_PHASE.group, LCM_PHASE.version, LCM_PHASE.kind, LCM_PHASE.plural),
    customResourceDefinition('argoproj.io', 'v1alpha1', 'Workflow', 'workflows'),
  ];
}

/** An owner reference to `owner` (which must carry a uid), as a controller sets it. */
export function ownerReferenceTo(owner: KubeObject): Record<string, unknown> {
  const meta = owner.metadata as { name: string; uid: string };
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: meta.name,
    uid: meta.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** An LCM Phase object with a fixed uid, so its Jobs can name it as owner in the same apply. */
export function lcmPhase(namespace: string, name: string, uid: string, stage = 'install'): KubeObject {
  return {
    apiVersion: `${LCM_PHASE.group}/${LCM_PHASE.version}`,
    kind: LCM_PHASE.kind,
    metadata: { name, namespace, uid, generation: 1 },
    spec: { stage, targetVersion: '1.0.0' },
    status: {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: `stage ${stage} reconciled` }],
    },
  };
}

/** What a task Job is doing: running, done, or failed after its retries. */
export type JobState = 'running' | 'complete' | 'failed';

/** A batch Job owned by `owner`, in `state` (kstatus: running Current, complete Current, failed Failed). */
export function ownedJob(owner: KubeObject, name: string, uid: string, state: JobState): KubeObject {
  const namespace = (owner.metadata as { namespace: string }).namespace;
  const t = now();
  const status: Record<string, unknown> = { startTime: t };
  if (state === 'running') Object.assign(status, { active: 1 });
  if (state === 'complete')
    Object.assign(status, {
      succeeded: 1,
      completionTime: t,
      conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: t }],
    });
  if (state === 'failed')
    Object.assign(status, {
      failed: 3,
      conditions: [
        {
          type: 'Failed',
          status: 'True',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
          lastTransitionTime: t,
        },
      ],
    });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace, uid, ownerReferences: [ownerReferenceTo(owner)], labels: { 'job-name': name } },
    spec: {
      backoffLimit: 2,
      completions: 1,
      parallelism: 1,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'task', image: 'example/lcm-task:1.0' }] } },
    },
    status,
  };
}

/** The Pod of a Job (one attempt), owned by it; running while the Job runs, then Succeeded or Failed. */
export function jobPod(job: KubeObject, name: string, uid: string, state: JobState): KubeObject {
  const namespace = (job.metadata as { namespace: string }).namespace;
  const phase = state === 'running' ? 'Running' : state === 'complete' ? 'Succeeded' : 'Failed';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid,
      ownerReferences: [ownerReferenceTo(job)],
      labels: { 'job-name': (job.metadata as { name: string }).name },
    },
    spec: { restartPolicy: 'Never', containers: [{ name: 'task', image: 'example/lcm-task:1.0' }] },
    status: {
      phase,
      conditions: [
        {
          type: 'Ready',
          status: state === 'running' ? 'True' : 'False',
          reason: state === 'running' ? '' : 'PodCompleted',
        },
      ],
    },
  };
}

/** An Argo Workflow owned by `owner`, in an Argo phase (Running, Succeeded, Failed, ...). */
export function ownedWorkflow(owner: KubeObject, name: string, uid: string, phase: string, message = ''): KubeObject {
  const namespace = (owner.metadata as { namespace: string }).namespace;
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace, uid, ownerReferences: [ownerReferenceTo(owner)] },
    spec: { entrypoint: 'main', templates: [{ name: 'main', container: { image: 'example/lcm-task:1.0' } }] },
    status: { phase, ...(message ? { message } : {}) },
  };
}
