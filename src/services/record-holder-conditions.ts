/**
 * The inventory holders' conditions (`flux/Ready`, `argocd/Synced`, `kpt/Applied`, `owner/Started`,
 * ...; src/inventory/holder.ts), recorded after each snapshot commits, one run per holder source and
 * cluster, as a check's run is: changes only, the change log, subscriptions, gates and reports
 * read them like any condition. A cluster that is not observed records no run, so its holders'
 * conditions go stale with everything else there.
 */
import { createHash } from 'node:crypto';
import type { ConditionResult } from '../history/condition-changes.ts';
import type { ClusterObservation, StatusChange } from '../history/types.ts';
import { HOLDER_SOURCES, type HolderReading, type HolderSource } from '../inventory/holder.ts';
import type { ConditionStore } from '../store/condition-store.ts';

/** Records holder conditions; one per worker, as it remembers what it last wrote for each cluster. */
export interface HolderConditions {
  /** Records the holder conditions of an observation just committed; resolves with the changes written. */
  afterSnapshot(observation: ClusterObservation, intervalMs: number): Promise<StatusChange[]>;
  /** Forgets what was written for a cluster (this process no longer snapshots it). */
  forget(cluster: string): void;
}

/** What one source's run wrote for a cluster: at which time, and a digest of each phase's reading. */
interface LastRun {
  at: Date;
  digest: string;
}

/** Readings' JSON, by reading: few distinct readings exist (equal ones are one object). */
const fingerprints = new WeakMap<HolderReading, string>();

function fingerprintOf(reading: HolderReading): string {
  let known = fingerprints.get(reading);
  if (known === undefined) {
    known = JSON.stringify(reading);
    fingerprints.set(reading, known);
  }
  return known;
}

/** One digest of the phases' identities and readings, in observation order (a worker keeps one per cluster and source). */
function digestOf(phases: readonly { key: string; reading: HolderReading }[]): string {
  const hash = createHash('sha256');
  for (const { key, reading } of phases) hash.update(key).update('\u0000').update(fingerprintOf(reading)).update('\n');
  return hash.digest('base64');
}

/**
 * Most runs find every holder as the last run did (parsed inventories are kept from tick to tick and
 * equal readings are one object), so a run compares its readings with the last one this process
 * wrote and then only moves the run's time, provided nobody else ran since (the row still holds the
 * last run's time: another worker that owned the cluster in between makes it write in full).
 */
export function createHolderConditions(
  conditions: Pick<ConditionStore, 'recordRun' | 'phaseIds' | 'confirmRun'>,
): HolderConditions {
  const last = new Map<string, LastRun>();
  return {
    async afterSnapshot(observation, intervalMs) {
      if (observation.outcome !== 'ok') return [];
      const bySource = new Map<HolderSource, { key: string; reading: HolderReading }[]>();
      for (const phase of observation.phases) {
        if (phase.holder === undefined) continue;
        const { sourceKind, namespace, name } = phase.identity;
        const list = bySource.get(phase.holder.source) ?? [];
        list.push({ key: `${sourceKind}/${namespace}/${name}`, reading: phase.holder });
        bySource.set(phase.holder.source, list);
      }
      if (bySource.size === 0) return [];
      let ids: Map<string, number> | undefined;
      const changes: StatusChange[] = [];
      for (const source of HOLDER_SOURCES) {
        const phases = bySource.get(source);
        if (phases === undefined) continue;
        const memo = `${observation.cluster}\u0000${source}`;
        const before = last.get(memo);
        const digest = digestOf(phases);
        if (
          before !== undefined &&
          before.at < observation.at &&
          before.digest === digest &&
          (await conditions.confirmRun(source, observation.cluster, before.at, observation.at))
        ) {
          last.set(memo, { at: observation.at, digest });
          continue;
        }
        ids ??= await conditions.phaseIds(observation.cluster);
        const results: ConditionResult[] = [];
        let complete = true;
        for (const { key, reading } of phases) {
          const phaseId = ids.get(key);
          if (phaseId === undefined) {
            complete = false;
            continue;
          }
          for (const c of reading.conditions) results.push({ phaseId, ...c });
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
        // Only a run that wrote every phase may stand for the next one.
        if (written.stale === true || !complete) last.delete(memo);
        else last.set(memo, { at: observation.at, digest });
        changes.push(...written.changes);
      }
      return changes;
    },
    forget(cluster) {
      for (const source of HOLDER_SOURCES) last.delete(`${cluster}\u0000${source}`);
    },
  };
}
