/**
 * A worker's in-memory copy of each cluster's stored current state, as of a stateVersion of the
 * cluster's row. A snapshot uses it, under the cluster's lock, only while the row still has that
 * version: any snapshot written since (by another worker process, or by this one without keeping
 * the state) moved the version, and the state is read from the store again. A copy is installed
 * only after its transaction committed, and dropped when a snapshot fails.
 */
import { createSharedValues } from '../history/intern.ts';
import { phaseKey } from '../history/plan-snapshot.ts';
import type { ClusterObservation, PhaseIdentity, StoredClusterState } from '../history/types.ts';
import { currentRun, type LockedCluster } from '../store/snapshot-store.ts';

/** Clusters' stored states by cluster id, each valid at one stateVersion. */
export interface KeptStates {
  /**
   * The state of the locked `cluster` if the copy is at its current version (with the row's own
   * tick and last good read), restricted to `only` like a live snapshot's load; undefined otherwise.
   */
  get(cluster: LockedCluster, only?: readonly PhaseIdentity[]): StoredClusterState | undefined;
  set(clusterId: number, version: number, state: StoredClusterState): void;
  delete(clusterId: number): void;
}

/** Options of {@link createKeptStates}. */
export interface KeptStatesOptions {
  /** Clusters kept; the least recently used goes first. @default 64 */
  maxClusters?: number;
}

/** Creates an empty cache. */
export function createKeptStates(options: KeptStatesOptions = {}): KeptStates {
  const max = Math.max(1, options.maxClusters ?? 64);
  const entries = new Map<number, { version: number; state: StoredClusterState }>();
  // Shared by the states of all clusters kept.
  const shared = createSharedValues();
  return {
    get(cluster, only) {
      const entry = entries.get(cluster.id);
      if (entry === undefined || entry.version !== cluster.stateVersion) return undefined;
      // Least recently used order: the entry moves to the end.
      entries.delete(cluster.id);
      entries.set(cluster.id, entry);
      const row = { lastGoodReadAt: cluster.lastGoodReadAt, lastTick: currentRun(cluster) };
      if (only === undefined) return { ...entry.state, ...row };
      const keys = new Set(only.map(phaseKey));
      return { ...entry.state, ...row, phases: entry.state.phases.filter((p) => keys.has(phaseKey(p.identity))) };
    },
    set(clusterId, version, state) {
      // Each status is replaced by an equal one whose values the kept states share. In place: the
      // phases are the state's own (loaded for it, or made by advancing the kept state), and the
      // value they hold does not change.
      for (const phase of state.phases) if (phase.status !== null) phase.status = shared.phaseStatus(phase.status);
      entries.delete(clusterId);
      entries.set(clusterId, { version, state });
      while (entries.size > max) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
    },
    delete(clusterId) {
      entries.delete(clusterId);
    },
  };
}

/**
 * True when `observation` brings back a phase `state` holds as deleted: the store does not keep a
 * deleted phase's resources in its state, and retention may have removed the phase since, so such
 * a snapshot reads the state from the store.
 */
export function revivesDeletedPhase(state: StoredClusterState, observation: ClusterObservation): boolean {
  if (observation.outcome !== 'ok') return false;
  const deleted = new Set(state.phases.filter((p) => p.deleted).map((p) => phaseKey(p.identity)));
  return deleted.size > 0 && observation.phases.some((p) => deleted.has(phaseKey(p.identity)));
}
