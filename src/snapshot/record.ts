/**
 * Recording one observation of a cluster: how it becomes as few writes as possible, in one
 * transaction of the store (src/store/snapshot-store.ts).
 *
 * - A tick not newer than the last one written writes nothing (duplicate jobs, late retries).
 * - A tick after the cluster went unobserved first writes that span into history.
 * - A tick that saw exactly what the cluster's current run saw (equal state hash) reads nothing
 *   and only extends the run.
 * - Otherwise the observation is planned against the stored state: the state this worker kept
 *   from its last snapshot of the cluster when the row still has that state's version, else the
 *   state loaded from the store (only the observed phases, for a live observation).
 * - After commit, the kept state is advanced by the plan (never before: the transaction may roll
 *   back), so the next snapshot need not read back what this one wrote.
 */
import { advanceClusterState, type WrittenIds } from '../history/advance-state.ts';
import { unobservedGapBefore } from '../history/observation.ts';
import {
  hashObservation,
  planSnapshot,
  planUnchangedTick,
  unobservedSpanChange,
  type SnapshotPlan,
} from '../history/plan-snapshot.ts';
import type { ClusterObservation, StatusChange, StoredClusterState } from '../history/types.ts';
import { currentRun, type LockedCluster, type SnapshotStore } from '../store/snapshot-store.ts';
import { createKeptStates, revivesDeletedPhase } from './kept-state.ts';

/** What {@link Recorder.record} did. */
export type RecordSnapshotResult =
  | { written: true; outcome: 'ok' | 'unreachable'; changes: StatusChange[]; rows: number; extendedTick: boolean }
  | { written: false; reason: 'STALE_TICK'; lastTickAt: Date };

/** Options of {@link Recorder.record}. */
export interface RecordOptions {
  /** The tick the observation belongs to; ticks at or before the cluster's last written tick are skipped. */
  tickAt: Date;
  /**
   * Bodies of revisions the observation no longer holds, read from the cluster after an attempt
   * failed with RevisionsMissingError (src/snapshot/revision-bodies.ts), by hash.
   */
  revisionBodies?: ReadonlyMap<string, Record<string, unknown>>;
}

/** Records observations of clusters. */
export interface Recorder {
  /** Diffs `observation` against what is stored and writes the difference atomically. */
  record(observation: ClusterObservation, options: RecordOptions): Promise<RecordSnapshotResult>;
}

/** Options of {@link createRecorder}. */
export interface RecorderOptions {
  /**
   * Keep each cluster's current state in memory between its snapshots (used only while the
   * cluster row's stateVersion says no other writer wrote since); the heap it costs per 10,000
   * resources is printed by bench/ingest.ts. @default true
   */
  keepState?: boolean;
  /**
   * Clusters whose state is kept, least recently snapshotted first out. A worker owns its clusters
   * alone, so it keeps all of them. @default 64
   */
  maxKeptClusters?: number;
}

/** What a committed snapshot leaves to keep. */
interface Committed {
  result: RecordSnapshotResult;
  /** Absent when the transaction wrote nothing (a stale tick): the kept state stays as it is. */
  keep?: { version: number; before: StoredClusterState | undefined; plan: SnapshotPlan; written: WrittenIds };
}

/** A recorder over `store`. */
export function createRecorder(store: SnapshotStore, options: RecorderOptions = {}): Recorder {
  const kept =
    options.keepState === false
      ? undefined
      : createKeptStates(options.maxKeptClusters !== undefined ? { maxClusters: options.maxKeptClusters } : {});
  return {
    async record(observation, { tickAt, revisionBodies }) {
      let clusterId: number | undefined;
      let committed: Committed;
      try {
        committed = await store.withLockedCluster(observation.cluster, async (tx): Promise<Committed> => {
          const cluster = tx.cluster;
          clusterId = cluster.id;
          // A live observation (a live snapshot of the phases a change affects) is no tick: it is
          // diffed against what is stored like any other, whatever tick was written last.
          const live = observation.outcome === 'ok' && observation.live === true;
          if (!live && cluster.lastTickAt !== null && cluster.lastTickAt.getTime() >= tickAt.getTime()) {
            return { result: { written: false, reason: 'STALE_TICK', lastTickAt: cluster.lastTickAt } };
          }
          const gapFrom = live
            ? undefined
            : unobservedGapBefore(cluster.tickLastSeenAt, cluster.snapshotIntervalMs, observation.at);
          if (gapFrom !== undefined) await tx.recordUnobservedGap(gapFrom, observation.at);
          // The kept state is stale once the gap was written.
          let whole = gapFrom === undefined ? kept?.get(cluster) : undefined;
          if (whole !== undefined && revivesDeletedPhase(whole, observation)) whole = undefined;
          // A live observation's hash is never stored (it is no tick), so it is not computed.
          const stateHash = live ? '' : hashObservation(observation);
          let plan: SnapshotPlan;
          if (!live && isCurrentRun(cluster, observation, stateHash)) {
            plan = planUnchangedTick(observation, stateHash);
          } else {
            const only = live && observation.outcome === 'ok' ? observation.phases.map((p) => p.identity) : undefined;
            let stored: StoredClusterState | undefined =
              whole !== undefined ? (only === undefined ? whole : kept?.get(cluster, only)) : undefined;
            if (stored === undefined) {
              stored = await tx.loadState({ ...(only === undefined ? {} : { only }), observation });
              if (only === undefined) whole = stored;
            }
            plan = planSnapshot(stored, observation, stateHash);
          }
          if (gapFrom !== undefined) plan = afterUnobservedGap(plan, gapFrom);
          const applied = await tx.apply(plan, {
            tickAt,
            name: observation.cluster,
            ...(observation.labels ? { labels: observation.labels } : {}),
            ...(revisionBodies ? { revisionBodies } : {}),
          });
          return {
            result: {
              written: true,
              outcome: plan.outcome,
              changes: applied.changes,
              rows: applied.rows,
              extendedTick: plan.tick === 'extend',
            },
            keep: { version: applied.stateVersion, before: whole, plan, written: applied.written },
          };
        });
      } catch (error) {
        // Rolled back, or its commit is in doubt: the next snapshot of the cluster reads the store.
        if (clusterId !== undefined) kept?.delete(clusterId);
        throw error;
      }
      if (kept !== undefined && clusterId !== undefined && committed.keep !== undefined) {
        const { version, before, plan, written } = committed.keep;
        const next = before === undefined ? undefined : advanceClusterState(before, plan, written);
        if (next === undefined) kept.delete(clusterId);
        else kept.set(clusterId, version, next);
      }
      return committed.result;
    },
  };
}

/** True when `stateHash` is the hash of the cluster's current run: the observation changes nothing. */
function isCurrentRun(cluster: LockedCluster, observation: ClusterObservation, stateHash: string): boolean {
  const run = currentRun(cluster);
  return run !== null && run.outcome === observation.outcome && run.stateHash === stateHash;
}

/**
 * `plan` for the tick that ends a span the cluster went unobserved: the run before the gap ended
 * where the cluster was last observed, so this tick starts a new one, and the change log says so.
 */
function afterUnobservedGap(plan: SnapshotPlan, gapFrom: Date): SnapshotPlan {
  return {
    ...plan,
    tick: plan.tick === 'extend' ? 'start' : plan.tick,
    changes: [unobservedSpanChange(gapFrom, plan.outcome), ...plan.changes],
  };
}
