import { startEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/index.ts';
import {
  createClusterClient,
  type ClusterClient,
  type ClusterClientOptions,
} from '../../../src/kube/cluster-client.ts';
import { loadKubeconfigClusters } from '../../../src/kube/clusters.ts';
import type { ObjectRef } from '../../../src/inventory/types.ts';

/** An emulator plus a phaselog client for it, over real HTTP. */
export interface TestCluster {
  emulator: Emulator;
  client: ClusterClient;
  close(): Promise<void>;
}

/** Starts an emulator on port 0 and a ClusterClient built from its kubeconfig. */
export async function startTestCluster(
  name = 'test',
  options: EmulatorOptions = {},
  clientOptions: ClusterClientOptions = {},
): Promise<TestCluster> {
  const emulator = await startEmulator({ port: 0, ...options });
  const loaded = loadKubeconfigClusters({ yaml: emulator.kubeconfig(), name });
  const handle = loaded.clusters[0];
  if (handle === undefined) throw new Error(`kubeconfig did not load: ${JSON.stringify(loaded.errors)}`);
  const client = createClusterClient({ ...handle, name }, clientOptions);
  return {
    emulator,
    client,
    async close() {
      client.close();
      await emulator.close();
    },
  };
}

/** Polls `check` until it returns true or the deadline passes. */
export async function waitFor(check: () => boolean, what: string, deadlineMs = 5000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A real-shaped object of each common kind, named `name` in `namespace`. */
export function makeObject(
  kind: string,
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
): Record<string, unknown> {
  const metadata = { name, namespace, labels: { app: name, ...labels } };
  switch (kind) {
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata,
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
          },
        },
      };
    case 'StatefulSet':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata,
        spec: {
          replicas: 1,
          serviceName: name,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'db', image: 'postgres:17' }] },
          },
        },
      };
    case 'Service':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        spec: {
          type: 'ClusterIP',
          clusterIP: '10.96.0.10',
          ports: [{ port: 80, targetPort: 8080 }],
          selector: { app: name },
        },
      };
    case 'ConfigMap':
      return { apiVersion: 'v1', kind, metadata, data: { 'app.properties': `name=${name}` } };
    case 'Secret':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        type: 'Opaque',
        data: { password: Buffer.from('s3cret').toString('base64') },
      };
    case 'Job':
      return {
        apiVersion: 'batch/v1',
        kind,
        metadata,
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'job', image: 'busybox' }] } } },
      };
    case 'ServiceAccount':
      return { apiVersion: 'v1', kind, metadata };
    case 'Pod':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
        status: { phase: 'Running' },
      };
    default:
      throw new Error(`no template for ${kind}`);
  }
}

const GROUPS: Record<string, string> = { Deployment: 'apps', StatefulSet: 'apps', Job: 'batch' };

/** The inventory ref of an object made by {@link makeObject}. */
export function refOf(kind: string, namespace: string, name: string): ObjectRef {
  return { group: GROUPS[kind] ?? '', kind, namespace, name };
}

/** A fresh client (empty discovery cache) for an emulator that is already running. */
export function connect(emulator: Emulator, clientOptions: ClusterClientOptions = {}, name = 'test'): ClusterClient {
  const handle = loadKubeconfigClusters({ yaml: emulator.kubeconfig(), name }).clusters[0];
  if (handle === undefined) throw new Error('kubeconfig did not load');
  return createClusterClient({ ...handle, name }, clientOptions);
}
