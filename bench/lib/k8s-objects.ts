/**
 * Typical Kubernetes objects as an API server returns them (~4 KB of JSON on average): metadata with
 * labels, a last-applied-configuration annotation and managedFields, a spec and a status. Used by the
 * JSON.parse baseline so that "objects/s" means objects of a realistic size.
 */

type Json = Record<string, unknown>;

function metadata(kind: string, i: number, spec: Json): Json {
  const name = `${kind.toLowerCase()}-${i}`;
  return {
    name,
    namespace: `team-${i % 20}`,
    uid: `3f1c2a9e-${String(i % 10_000).padStart(4, '0')}-4000-8000-${String(i).padStart(12, '0')}`,
    resourceVersion: String(4_000_000 + i),
    generation: 1 + (i % 7),
    creationTimestamp: '2026-11-20T09:15:02Z',
    labels: {
      app: name,
      'app.kubernetes.io/name': name,
      'app.kubernetes.io/part-of': 'shop',
      'app.kubernetes.io/managed-by': 'kustomize',
    },
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
        apiVersion: 'v1',
        kind,
        metadata: {
          name,
          namespace: `team-${i % 20}`,
          labels: { app: name, 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': 'shop' },
        },
        spec,
      }),
      'config.k8s.io/owning-inventory': 'shop-inventory',
    },
    managedFields: [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-19T16:02:11Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': {
            'f:annotations': {
              '.': {},
              'f:config.k8s.io/owning-inventory': {},
              'f:kubectl.kubernetes.io/last-applied-configuration': {},
            },
            'f:labels': { '.': {}, 'f:app.kubernetes.io/managed-by': {} },
          },
        },
      },
      {
        manager: 'kustomize-controller',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: '2026-11-20T09:15:02Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': {
            'f:labels': { 'f:app': {}, 'f:app.kubernetes.io/name': {}, 'f:app.kubernetes.io/part-of': {} },
          },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:spec': {
                'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': {} } },
              },
            },
          },
        },
      },
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        subresource: 'status',
        apiVersion: 'apps/v1',
        time: '2026-11-20T09:16:40Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:status': {
            'f:availableReplicas': {},
            'f:conditions': { '.': {}, 'k:{"type":"Available"}': { '.': {}, 'f:status': {}, 'f:type': {} } },
            'f:observedGeneration': {},
            'f:readyReplicas': {},
          },
        },
      },
    ],
  };
}

function container(i: number): Json {
  return {
    name: 'main',
    image: `registry.example.com/shop/service-${i % 50}:1.4.${i % 10}`,
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'shop-db', key: 'url' } } },
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability.svc:4317' },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 10 },
    livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 20 },
  };
}

function deployment(i: number): Json {
  const spec = {
    replicas: 3,
    selector: { matchLabels: { app: `deployment-${i}` } },
    template: { metadata: { labels: { app: `deployment-${i}` } }, spec: { containers: [container(i)] } },
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata('Deployment', i, spec),
    spec,
    status: {
      observedGeneration: 1 + (i % 7),
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: i % 9 === 0 ? 2 : 3,
      availableReplicas: 3,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
          lastUpdateTime: '2026-11-20T09:16:40Z',
          lastTransitionTime: '2026-11-20T09:16:40Z',
        },
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: `ReplicaSet "deployment-${i}-5d9f7c" has successfully progressed.`,
          lastUpdateTime: '2026-11-20T09:16:40Z',
          lastTransitionTime: '2026-11-20T09:15:02Z',
        },
      ],
    },
  };
}

function pod(i: number): Json {
  const spec = {
    containers: [container(i)],
    serviceAccountName: 'default',
    nodeName: `node-${i % 12}`,
    restartPolicy: 'Always',
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadata('Pod', i, spec),
    spec,
    status: {
      phase: 'Running',
      podIP: `10.0.${i % 250}.${i % 200}`,
      startTime: '2026-11-20T09:15:05Z',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastTransitionTime: '2026-11-20T09:15:10Z',
      })),
      containerStatuses: [
        {
          name: 'main',
          ready: true,
          restartCount: i % 3,
          started: true,
          image: `registry.example.com/shop/service-${i % 50}:1.4.${i % 10}`,
          imageID: `registry.example.com/shop/service@sha256:${'ab'.repeat(32)}`,
          containerID: `containerd://${'cd'.repeat(32)}`,
          state: { running: { startedAt: '2026-11-20T09:15:09Z' } },
        },
      ],
    },
  };
}

function service(i: number): Json {
  const spec = {
    type: 'ClusterIP',
    selector: { app: `deployment-${i}` },
    ports: [
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
      { name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' },
      ...['grpc', 'admin', 'debug', 'events', 'cache', 'sidecar'].map((name, p) => ({
        name,
        port: 9100 + p,
        targetPort: 9100 + p,
        protocol: 'TCP',
      })),
    ],
  };
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata('Service', i, spec),
    spec: {
      ...spec,
      clusterIP: `10.96.${i % 250}.${i % 200}`,
      clusterIPs: [`10.96.${i % 250}.${i % 200}`],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
    },
    status: { loadBalancer: {} },
  };
}

function configMap(i: number): Json {
  const data = {
    'application.yaml': `server:\n  port: 8080\nfeatures:\n${Array.from({ length: 48 }, (_, f) => `  flag${f}: ${(i + f) % 2 === 0}`).join('\n')}\n`,
    LOG_LEVEL: 'info',
  };
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: metadata('ConfigMap', i, data), data };
}

const BUILDERS = [deployment, pod, pod, service, configMap];

/** Object `i` of the mix: Deployments, Pods (twice as many), Services and ConfigMaps in turn. */
export function buildTypicalObject(i: number): Json {
  return (BUILDERS[i % BUILDERS.length] ?? deployment)(i);
}

/** `count` distinct objects of the mix (see {@link buildTypicalObject}). */
export function buildTypicalObjects(count: number): Json[] {
  return Array.from({ length: count }, (_, i) => buildTypicalObject(i));
}

/** The namespaces the mix uses (`team-0` ... `team-19`), as Namespace objects. */
export function typicalNamespaces(): Json[] {
  return Array.from({ length: 20 }, (_, n) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: `team-${n}` },
  }));
}

/** The group/kinds of the mix. */
export const TYPICAL_KINDS: readonly { group: string; kind: string }[] = [
  { group: 'apps', kind: 'Deployment' },
  { group: '', kind: 'Pod' },
  { group: '', kind: 'Service' },
  { group: '', kind: 'ConfigMap' },
];
