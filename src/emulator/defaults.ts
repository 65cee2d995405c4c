/**
 * The few defaults kube-apiserver fills in that clients act on: the update strategy of Deployments,
 * StatefulSets and DaemonSets (`kubectl rollout status` refuses a StatefulSet or DaemonSet whose
 * `spec.updateStrategy.type` is not RollingUpdate, and `kubectl describe` prints the Deployment's).
 * Values are the apps/v1 defaults. Applied to API writes only; in-process fixtures stay as given.
 */
import type { KubeObject } from './types.ts';

const STRATEGIES: Record<string, { field: string; value: Record<string, unknown> }> = {
  Deployment: {
    field: 'strategy',
    value: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
  },
  StatefulSet: { field: 'updateStrategy', value: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } } },
  DaemonSet: {
    field: 'updateStrategy',
    value: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
  },
};

/** Returns the object with the apps/v1 update-strategy default filled in when it has none. */
export function applyWorkloadDefaults(group: string, kind: string, obj: KubeObject): KubeObject {
  const strategy = group === 'apps' ? STRATEGIES[kind] : undefined;
  const spec = obj['spec'];
  if (!strategy || typeof spec !== 'object' || spec === null || Array.isArray(spec)) return obj;
  const given = (spec as Record<string, unknown>)[strategy.field];
  if (typeof given === 'object' && given !== null && typeof (given as Record<string, unknown>)['type'] === 'string')
    return obj;
  return {
    ...obj,
    spec: {
      ...spec,
      [strategy.field]: { ...strategy.value, ...(typeof given === 'object' && given !== null ? given : {}) },
    },
  };
}
