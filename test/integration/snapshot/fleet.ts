/**
 * Real-shaped fleets for snapshot tests and the snapshot benchmark: cli-utils inventory ConfigMaps
 * listing Deployments whose status kstatus reads as Current, and the patches that change them.
 */
import type { Emulator, EmulatorObjectRef } from '../../../src/emulator/index.ts';

const INVENTORY_ID_LABEL = 'cli-utils.sigs.k8s.io/inventory-id';

/** A Deployment that kstatus reads as Current (generation observed, every replica updated and available). */
export function readyDeployment(
  namespace: string,
  name: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace,
      generation: 1,
      labels: { app: name },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"Deployment"}' },
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
    },
    status: readyStatus(),
    ...extra,
  };
}

/** The status of a Deployment whose two replicas are all updated and available. */
export function readyStatus(): Record<string, unknown> {
  return {
    observedGeneration: 1,
    replicas: 2,
    updatedReplicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok' }],
  };
}

/** A status kstatus reads as InProgress: one of two replicas updated. */
export function rollingStatus(): Record<string, unknown> {
  return { observedGeneration: 1, replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 };
}

/** The name of resource `r` of phase `p`. */
export function resourceName(p: number, r: number): string {
  return `app-${p}-${r}`;
}

/** A cli-utils inventory ConfigMap listing `refs` (`[namespace, group, kind, name]`). */
export function inventoryConfigMap(
  namespace: string,
  name: string,
  id: string,
  refs: [string, string, string, string][],
): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (const [ns, group, kind, objName] of refs)
    data[`${ns}_${objName}_${group}_${kind}`] = '{"strategy":"Apply","actuation":"Succeeded","reconcile":"Succeeded"}';
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: { [INVENTORY_ID_LABEL]: id } },
    data,
  };
}

/** Options of {@link applyFleet}. */
export interface FleetShape {
  phases: number;
  resourcesPerPhase: number;
  /** Phases per namespace. @default 10 */
  phasesPerNamespace?: number;
}

/** The namespace phase `p` lives in. */
export function namespaceOf(p: number, shape: FleetShape): string {
  return `team-${Math.floor(p / (shape.phasesPerNamespace ?? 10))}`;
}

/** Applies `shape.phases` phases of ready Deployments to the emulator. */
export function applyFleet(em: Emulator, shape: FleetShape): void {
  const objects: Record<string, unknown>[] = [];
  const namespaces = new Set<string>();
  for (let p = 0; p < shape.phases; p += 1) {
    const ns = namespaceOf(p, shape);
    namespaces.add(ns);
    const refs: [string, string, string, string][] = [];
    for (let r = 0; r < shape.resourcesPerPhase; r += 1) {
      objects.push(readyDeployment(ns, resourceName(p, r)));
      refs.push([ns, 'apps', 'Deployment', resourceName(p, r)]);
    }
    objects.push(inventoryConfigMap(ns, `inventory-${p}`, `phase-${p}`, refs));
  }
  em.apply([
    ...[...namespaces].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    ...objects,
  ]);
}

/** The emulator ref of resource `r` of phase `p`. */
export function deploymentRef(p: number, r: number, shape: FleetShape): EmulatorObjectRef {
  return { apiVersion: 'apps/v1', kind: 'Deployment', namespace: namespaceOf(p, shape), name: resourceName(p, r) };
}
