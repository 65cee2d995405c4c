/**
 * The emulated cluster of the worker-RSS benchmark, in its own process so that its memory is not
 * counted: `count` typical objects (Deployments, Pods, Services, ConfigMaps of ~4 KB with managed
 * fields), every one of them a member of a phase: cli-utils inventory ConfigMaps of
 * {@link PHASE_SIZE} objects of one namespace each. Started by bench/worker-rss.ts:
 *
 *   node --import tsx bench/worker-rss-cluster.ts <count>
 */
import { startEmulator } from '../src/emulator/index.ts';
import { INVENTORY_ID_LABEL } from '../src/inventory/cli-utils.ts';
import { buildTypicalObject, typicalNamespaces } from './lib/k8s-objects.ts';

/** Objects per phase. */
const PHASE_SIZE = 20;

/** The inventories of objects `0 .. count-1`: those of one namespace (`team-(i % 20)`), in phases of {@link PHASE_SIZE}. */
function inventories(count: number): Record<string, unknown>[] {
  const members = new Map<string, string[]>();
  for (let i = 0; i < count; i += 1) {
    const object = buildTypicalObject(i) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string };
    };
    const group = object.apiVersion.includes('/') ? object.apiVersion.slice(0, object.apiVersion.indexOf('/')) : '';
    const list = members.get(object.metadata.namespace) ?? [];
    list.push(`${object.metadata.namespace}_${object.metadata.name}_${group}_${object.kind}`);
    members.set(object.metadata.namespace, list);
  }
  const out: Record<string, unknown>[] = [];
  for (const [namespace, keys] of members) {
    for (let start = 0; start < keys.length; start += PHASE_SIZE) {
      const name = `phase-${start / PHASE_SIZE}`;
      const data = Object.fromEntries(
        keys
          .slice(start, start + PHASE_SIZE)
          .map((k) => [k, '{"strategy":"Apply","actuation":"Succeeded","reconcile":"Succeeded"}']),
      );
      out.push({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace, labels: { [INVENTORY_ID_LABEL]: `${namespace}-${name}` } },
        data,
      });
    }
  }
  return out;
}

const count = Number(process.argv[2] ?? '10000');
const em = await startEmulator({ port: 0 });
em.apply(typicalNamespaces());
for (let i = 0; i < count; i += 1_000)
  em.apply(Array.from({ length: Math.min(1_000, count - i) }, (_, k) => buildTypicalObject(i + k)));
em.apply(inventories(count));
const shutdown = () => {
  void em.close().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
process.send?.({ ready: true, url: em.url, kubeconfig: em.kubeconfig() });
