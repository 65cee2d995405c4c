/**
 * Label-selector phases: a phase declared as "these kinds, with these labels" has no inventory
 * object; its members are whatever the cluster holds now. One paginated LIST per kind (and per
 * namespace when namespaces are given), with the selector sent to the API server.
 */
import type { LabelSelector, Phase } from '../inventory/types.ts';
import { selectEntries } from '../inventory/selector.ts';
import type { ClusterClient } from './cluster-client.ts';
import { collectionPath, isKubeError } from './discovery.ts';
import type { KubeError } from './errors.ts';
import { listCollection } from './list-collection.ts';
import type { KubeObject } from './slim.ts';

/** A selector in the API's `labelSelector` query syntax (`a=b,c in (x,y),!d`). */
export function formatLabelSelector(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`);
  for (const req of selector.matchExpressions ?? []) {
    if (req.operator === 'In') parts.push(`${req.key} in (${(req.values ?? []).join(',')})`);
    else if (req.operator === 'NotIn') parts.push(`${req.key} notin (${(req.values ?? []).join(',')})`);
    else if (req.operator === 'Exists') parts.push(req.key);
    else parts.push(`!${req.key}`);
  }
  return parts.join(',');
}

/** What listing a selector phase's members found. */
export interface SelectedPhase {
  /** The phase with its entries filled in from the cluster. */
  phase: Phase;
  /** Errors of kinds that could not be listed (cluster-level ones make the cluster unreachable upstream). */
  errors: KubeError[];
}

/** Fill a selector phase's entries from the cluster. Never throws. */
export async function selectPhaseMembers(
  cluster: ClusterClient,
  phase: Phase,
  options: { pageSize?: number } = {},
): Promise<SelectedPhase> {
  const spec = phase.selector;
  if (spec === undefined) return { phase, errors: [] };
  const labelSelector = formatLabelSelector(spec.selector);
  const objects: KubeObject[] = [];
  const errors: KubeError[] = [];
  for (const gk of spec.kinds) {
    const resolved = await cluster.discovery.resolve(gk.group, gk.kind);
    if (isKubeError(resolved)) {
      errors.push(resolved);
      continue;
    }
    const namespaces: (string | undefined)[] =
      resolved.namespaced && spec.namespaces.length > 0 ? spec.namespaces : [undefined];
    for (const namespace of namespaces) {
      const apiVersion = resolved.group ? `${resolved.group}/${resolved.version}` : resolved.version;
      const outcome = await listCollection(
        cluster.transport,
        collectionPath(resolved, namespace),
        {
          ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
          labelSelector,
          apiVersion,
          kind: resolved.kind,
        },
        (item) => objects.push(item),
      );
      if (!outcome.ok) errors.push(outcome.error);
    }
  }
  const selected = selectEntries(phase, objects);
  const failed = errors.map((e) => ({
    code: 'SELECTOR_READ_FAILED' as const,
    message: `selector phase "${phase.name}": cannot list members: ${e.kind}: ${e.message}`,
  }));
  return { phase: failed.length ? { ...selected, errors: [...selected.errors, ...failed] } : selected, errors };
}
