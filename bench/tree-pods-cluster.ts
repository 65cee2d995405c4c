/**
 * The emulated cluster of the tree benchmark, in its own process so its memory is not counted:
 * Deployments of {@link PODS_PER_DEPLOYMENT} typical ~4 KB Pods each, every Deployment with its
 * ReplicaSet, every Pod owned by it (as the controllers write them). Started by bench/tree-pods.ts:
 *
 *   node --import tsx bench/tree-pods-cluster.ts <pods>
 */
import { startEmulator } from '../src/emulator/index.ts';
import { buildTypicalObject, typicalNamespaces } from './lib/k8s-objects.ts';

/** Pods per Deployment (one ReplicaSet each). */
export const PODS_PER_DEPLOYMENT = 10;

const pods = Number(process.argv[2] ?? '10000');
const em = await startEmulator({ port: 0 });
em.apply(typicalNamespaces());
const deployments = Math.ceil(pods / PODS_PER_DEPLOYMENT);
for (let d = 0; d < deployments; d++) {
  const namespace = `team-${d % 20}`;
  const name = `web-${d}`;
  const labels = { app: name, 'pod-template-hash': 'abcdef1234' };
  em.apply({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, uid: `dep-${d}`, generation: 1 },
    spec: {
      replicas: PODS_PER_DEPLOYMENT,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels }, spec: { containers: [{ name: 'main', image: 'x' }] } },
    },
  });
  const rsName = `${name}-abcdef1234`;
  const rsUid = `rs-${d}`;
  em.apply({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: rsName,
      namespace,
      uid: rsUid,
      generation: 1,
      labels,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name,
          uid: `dep-${d}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { replicas: PODS_PER_DEPLOYMENT, selector: { matchLabels: labels } },
    status: {
      observedGeneration: 1,
      replicas: PODS_PER_DEPLOYMENT,
      readyReplicas: PODS_PER_DEPLOYMENT,
      availableReplicas: PODS_PER_DEPLOYMENT,
      fullyLabeledReplicas: PODS_PER_DEPLOYMENT,
    },
  });
  const batch = [];
  for (let p = 0; p < PODS_PER_DEPLOYMENT && d * PODS_PER_DEPLOYMENT + p < pods; p++) {
    // A typical Pod (index 1 of the mix is a Pod), renamed and owned by the ReplicaSet.
    const pod = buildTypicalObject(1 + 5 * (d * PODS_PER_DEPLOYMENT + p)) as { metadata: Record<string, unknown> };
    pod.metadata = {
      ...pod.metadata,
      name: `${rsName}-${p}`,
      namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rsName,
          uid: rsUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    };
    batch.push(pod);
  }
  em.apply(batch);
}
const shutdown = () => {
  void em.close().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
process.send?.({ ready: true, url: em.url, kubeconfig: em.kubeconfig(), deployments });
