/**
 * The emulated cluster of the worker-RSS benchmark, in its own process so that its memory is not
 * counted: `count` typical objects (Deployments, Pods, Services, ConfigMaps of ~4 KB with managed
 * fields). Started by bench/worker-rss.ts:
 *
 *   node --import tsx bench/worker-rss-cluster.ts <count>
 */
import { startEmulator } from '../src/emulator/index.ts';
import { buildTypicalObject, typicalNamespaces } from './lib/k8s-objects.ts';

const count = Number(process.argv[2] ?? '10000');
const em = await startEmulator({ port: 0 });
em.apply(typicalNamespaces());
for (let i = 0; i < count; i += 1_000) em.apply(Array.from({ length: Math.min(1_000, count - i) }, (_, k) => buildTypicalObject(i + k)));
const shutdown = () => {
  void em.close().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
process.send?.({ ready: true, url: em.url, kubeconfig: em.kubeconfig() });
