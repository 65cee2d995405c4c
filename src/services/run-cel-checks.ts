/**
 * `cel` checks, evaluated when phases are observed: after a snapshot commits, each cel check runs
 * over the observed phases it selects, on their members' objects (the observation's revision
 * bodies, or the stored ones a watch cache already dropped), and its results are written like any
 * check run's (changes only). Never fails the snapshot: a failure is logged, and the conditions go
 * stale if it persists.
 */
import type { Logger } from 'pino';
import { compileCelCondition, type CelCondition } from '../checks/cel-condition.ts';
import { isSelected, type CheckConfig } from '../checks/config.ts';
import type { ConditionResult } from '../history/condition-changes.ts';
import type { ClusterObservation, ObservedPhase, StatusChange } from '../history/types.ts';
import type { ConditionStore } from '../store/condition-store.ts';

/** What {@link createCelChecks} uses. */
export interface CelChecksDeps {
  conditions: Pick<ConditionStore, 'recordRun' | 'phaseIds' | 'revisionBodies'>;
  log: Logger;
}

/** The cel checks of a worker, compiled once. */
export interface CelChecks {
  /** Evaluates every cel check over an observation just recorded; resolves with the changes written. */
  afterSnapshot(observation: ClusterObservation, intervalMs: number): Promise<StatusChange[]>;
}

/** Compiles the cel checks among `checks` (parsing was already checked at config load). */
export function createCelChecks(deps: CelChecksDeps, checks: readonly CheckConfig[]): CelChecks {
  const compiled = checks.flatMap((check) =>
    check.cel === undefined ? [] : [{ check, condition: compileCelCondition(check.cel.expr) }],
  );
  return {
    async afterSnapshot(observation, intervalMs) {
      if (compiled.length === 0 || observation.outcome !== 'ok') return [];
      const ids = await deps.conditions.phaseIds(observation.cluster);
      const missing = new Set<string>();
      for (const phase of observation.phases)
        for (const r of phase.resources)
          if (r.revision !== undefined && r.revision.body === undefined) missing.add(r.revision.hash);
      const stored = await deps.conditions.revisionBodies([...missing]);
      const changes: StatusChange[] = [];
      for (const { check, condition } of compiled) {
        if (check.select.clusters.length > 0 && !check.select.clusters.includes(observation.cluster)) continue;
        const results = evaluate(check, condition, observation.cluster, observation.phases, ids, stored);
        const written = await deps.conditions.recordRun({
          check: check.name,
          source: 'cel',
          cluster: observation.cluster,
          intervalMs,
          at: observation.at,
          results,
        });
        changes.push(...written.changes);
      }
      return changes;
    },
  };
}

function evaluate(
  check: CheckConfig,
  condition: CelCondition,
  cluster: string,
  phases: readonly ObservedPhase[],
  ids: ReadonlyMap<string, number>,
  stored: ReadonlyMap<string, Record<string, unknown>>,
): ConditionResult[] {
  const results: ConditionResult[] = [];
  for (const phase of phases) {
    const { sourceKind, namespace, name } = phase.identity;
    const id = ids.get(`${sourceKind}/${namespace}/${name}`);
    if (id === undefined) continue;
    if (!isSelected(check.select, { id, cluster, source: sourceKind, namespace, name, labels: phase.labels })) continue;
    const objects: Record<string, unknown>[] = [];
    let unread: string | undefined;
    for (const r of phase.resources) {
      const body = r.revision?.body ?? (r.revision ? stored.get(r.revision.hash) : undefined);
      if (r.unread || (r.revision !== undefined && body === undefined)) unread ??= r.key;
      objects.push({ ...(body ?? {}), phaselog: { key: r.key, status: r.status, message: r.message } });
    }
    const verdict =
      unread !== undefined
        ? { status: 'Unknown' as const, reason: 'ObjectsUnread', message: `${unread} could not be read this time` }
        : condition.evaluate({
            phase: { cluster, source: sourceKind, namespace, name, labels: phase.labels, status: phase.status.status },
            objects,
          });
    results.push({ phaseId: id, type: check.name, ...verdict });
  }
  return results;
}
