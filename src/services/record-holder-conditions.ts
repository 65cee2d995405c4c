/**
 * The inventory holders' conditions (`flux/Ready`, `argocd/Synced`, `kpt/Applied`, `owner/Started`,
 * ...; src/inventory/holder.ts), recorded after each snapshot commits, one run per holder source and
 * cluster, as a check's run is: changes only, the change log, subscriptions, gates and reports
 * read them like any condition. A cluster that is not observed records no run, so its holders'
 * conditions go stale with everything else there.
 */
import type { ConditionResult } from '../history/condition-changes.ts';
import type { ClusterObservation, StatusChange } from '../history/types.ts';
import { HOLDER_SOURCES } from '../inventory/holder.ts';
import type { ConditionStore } from '../store/condition-store.ts';

/** Records the holder conditions of an observation just committed; resolves with the changes written. */
export async function recordHolderConditions(
  conditions: Pick<ConditionStore, 'recordRun' | 'phaseIds'>,
  observation: ClusterObservation,
  intervalMs: number,
): Promise<StatusChange[]> {
  if (observation.outcome !== 'ok' || !observation.phases.some((p) => p.holder !== undefined)) return [];
  const ids = await conditions.phaseIds(observation.cluster);
  const changes: StatusChange[] = [];
  for (const source of HOLDER_SOURCES) {
    const results: ConditionResult[] = [];
    for (const phase of observation.phases) {
      if (phase.holder?.source !== source) continue;
      const { sourceKind, namespace, name } = phase.identity;
      const phaseId = ids.get(`${sourceKind}/${namespace}/${name}`);
      if (phaseId === undefined) continue;
      for (const c of phase.holder.conditions) results.push({ phaseId, ...c });
    }
    if (results.length === 0) continue;
    const written = await conditions.recordRun({
      check: source,
      source,
      cluster: observation.cluster,
      intervalMs,
      at: observation.at,
      results,
    });
    changes.push(...written.changes);
  }
  return changes;
}
