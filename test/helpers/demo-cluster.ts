/** Changes made to a running demo's emulated cluster through its Kubernetes API, as a controller would make them. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { cliUtilsInventory, namespaceObject, readyDeployment, ref, service } from '../../src/demo/objects.ts';

/** One phase, `shop/release` (cli-utils), of a ready Deployment and its Service: what the CLI tests read. */
export function shopRelease(): Record<string, unknown>[] {
  return [
    namespaceObject('shop'),
    readyDeployment('shop', 'web'),
    service('shop', 'web'),
    cliUtilsInventory('shop', 'release', [ref('Deployment', 'shop', 'web'), ref('Service', 'shop', 'web')]),
  ];
}

/** The emulator's API URL (plain HTTP, no auth), from the kubeconfig the demo writes in its state directory. */
export function demoClusterApi(stateDir: string, cluster: 'demo-staging' | 'demo-prod'): string {
  const config = parseYaml(readFileSync(path.join(stateDir, 'demo', `${cluster}.kubeconfig`), 'utf8')) as {
    clusters: { cluster: { server: string } }[];
  };
  const server = config.clusters[0]?.cluster.server;
  if (!server) throw new Error(`no server in the ${cluster} kubeconfig`);
  return server;
}

/** Progressing conditions that make a Deployment Failed (kstatus: ProgressDeadlineExceeded) or leave it Current. */
export const PROGRESS_DEADLINE_EXCEEDED = {
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: 'ReplicaSet "checkout" has timed out progressing.',
};
export const PROGRESSED = {
  status: 'True',
  reason: 'NewReplicaSetAvailable',
  message: 'ReplicaSet "checkout" has successfully progressed.',
};

/** Sets the Progressing condition of a Deployment's status (the status subresource, merge patch). */
export async function setDeploymentProgressing(
  api: string,
  ref: { namespace: string; name: string },
  condition: Record<string, string>,
): Promise<void> {
  const url = `${api}/apis/apps/v1/namespaces/${ref.namespace}/deployments/${ref.name}`;
  const deployment = (await (await fetch(url)).json()) as { status: { conditions: Record<string, string>[] } };
  const conditions = deployment.status.conditions
    .filter((c) => c['type'] !== 'Progressing')
    .concat([{ type: 'Progressing', ...condition, lastUpdateTime: new Date().toISOString() }]);
  const response = await fetch(`${url}/status`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status: { conditions } }),
  });
  if (response.status !== 200)
    throw new Error(`patching ${url}/status answered ${response.status}: ${await response.text()}`);
}

/** Drops one entry from a cli-utils inventory ConfigMap (as `kpt live apply` pruning an object would). */
export async function removeInventoryEntry(
  api: string,
  ref: { namespace: string; name: string },
  entry: string,
): Promise<void> {
  const url = `${api}/api/v1/namespaces/${ref.namespace}/configmaps/${ref.name}`;
  const response = await fetch(url, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ data: { [entry]: null } }),
  });
  if (response.status !== 200) throw new Error(`patching ${url} answered ${response.status}: ${await response.text()}`);
}

/** Sets the image of a Deployment's one container (a merge patch of spec, as a rollout would start). */
export async function setDeploymentImage(
  api: string,
  ref: { namespace: string; name: string },
  container: string,
  image: string,
): Promise<void> {
  const url = `${api}/apis/apps/v1/namespaces/${ref.namespace}/deployments/${ref.name}`;
  const response = await fetch(url, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ spec: { template: { spec: { containers: [{ name: container, image }] } } } }),
  });
  if (response.status !== 200) throw new Error(`patching ${url} answered ${response.status}: ${await response.text()}`);
}
