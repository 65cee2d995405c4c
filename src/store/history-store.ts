/**
 * The history store's write side: records one observation of a cluster in one transaction. The
 * cluster's row is locked for the whole transaction (two snapshots of one cluster never write at
 * once, in any process), a snapshot for a tick not newer than the last one written writes nothing
 * (duplicate jobs, late retries), and a process killed half-way leaves nothing behind because
 * Postgres rolls the transaction back.
 */
import { advanceClusterState } from '../history/advance-state.ts';
import { hashObservation, planSnapshot, planUnchangedTick, settleRun as settlePlanRun, unobservedSpanChange, writesOnlyRun, type SnapshotPlan } from '../history/plan-snapshot.ts';
import type { ClusterObservation, StatusChange, StoredClusterState } from '../history/types.ts';
import { applyPlan } from './history-write.ts';
import { createClusterStateCache, revivesDeletedPhase } from './cluster-state-cache.ts';
import { loadClusterState, lockCluster, recordUnobservedGap, type LockedCluster } from './history-state.ts';
import { unobservedGapBefore } from '../history/observation.ts';
import { forgetQueryArguments, type Db } from './prisma.ts';

/** What {@link HistoryStore.recordSnapshot} did. */
export type RecordSnapshotResult =
  | { written: true; outcome: 'ok' | 'unreachable'; changes: StatusChange[]; rows: number; extendedTick: boolean }
  | { written: false; reason: 'STALE_TICK'; lastTickAt: Date };

/** Options of {@link HistoryStore.recordSnapshot}. */
export interface RecordSnapshotOptions {
  /** The tick the observation belongs to; ticks at or before the cluster's last written tick are skipped. */
  tickAt: Date;
}

/** The history store's snapshot port: the write path (the change log is read by src/store/read-history.ts). */
export interface HistoryStore {
  /** Diffs `observation` against the open intervals and writes the difference atomically. */
  recordSnapshot(observation: ClusterObservation, options: RecordSnapshotOptions): Promise<RecordSnapshotResult>;
}

/** Options of {@link createHistoryStore}. */
export interface HistoryStoreOptions {
  /** Longest a snapshot transaction may run. @default 120000 */
  transactionTimeoutMs?: number;
  /**
   * Keep each cluster's current state in memory between its snapshots (checked against the
   * cluster row's stateVersion under the snapshot lock, so it is used only when no other writer
   * wrote since): ~3 MB of heap per 10,000 resources (bench/ingest.ts prints it), for the 64
   * clusters used last. @default true
   */
  cacheState?: boolean;
}

/** Creates the history store over a Prisma client. */
export function createHistoryStore(db: Db, options: HistoryStoreOptions = {}): HistoryStore {
  const cache = options.cacheState === false ? undefined : createClusterStateCache();
  return {
    async recordSnapshot(observation, { tickAt }) {
      // The cluster locked, and the state to keep once the transaction has committed (never before: it may roll back).
      let clusterId: number | undefined;
      let keep: { version: number; state: StoredClusterState | undefined } | undefined;
      const result = await db.$transaction(
        async (tx) => {
          keep = undefined;
          const cluster = await lockCluster(tx, observation.cluster);
          clusterId = cluster.id;
          // A partial observation (a live snapshot of the phases a change affects) is no tick: it is
          // diffed against what is stored like any other, whatever tick was written last.
          const partial = observation.outcome === 'ok' && observation.partial === true;
          if (!partial && cluster.lastTickAt !== null && cluster.lastTickAt.getTime() >= tickAt.getTime()) {
            return { written: false, reason: 'STALE_TICK', lastTickAt: cluster.lastTickAt } as const;
          }
          // A tick after the cluster went unobserved records the gap first; the state is then read again.
          const gapFrom = partial ? undefined : unobservedGapBefore(cluster.tickLastSeenAt, cluster.snapshotIntervalMs, observation.at);
          if (gapFrom !== undefined) await recordUnobservedGap(tx, cluster, gapFrom, observation.at);
          // The whole cluster's state as of the row's version, when this worker has it.
          let whole = gapFrom === undefined ? cache?.get(cluster) : undefined;
          if (whole !== undefined && revivesDeletedPhase(whole, observation)) whole = undefined;
          const planned = partial ? undefined : planWithKeptState(cluster, observation, whole);
          let plan: SnapshotPlan;
          let settleRun: (() => void) | undefined;
          if (planned !== undefined) {
            plan = planned.plan;
            settleRun = planned.settleRun;
          } else {
            // A partial observation's hash is never stored (it is no tick), so it is not computed.
            const stateHash = partial ? '' : hashObservation(observation);
            // The current run saw exactly this: nothing to diff, nothing to load. A partial observation
            // is always diffed, against the phases it observed only.
            const only = partial && observation.outcome === 'ok' ? observation.phases.map((p) => p.identity) : undefined;
            const unchanged = !partial && isCurrentRun(cluster, observation, stateHash);
            let stored: StoredClusterState | undefined;
            if (!unchanged) {
              if (whole !== undefined) stored = only === undefined ? whole : cache?.get(cluster, only);
              else {
                stored = await loadClusterState(tx, cluster, only, observation);
                if (only === undefined) whole = stored;
              }
            }
            plan = stored === undefined ? planUnchangedTick(observation, stateHash) : planSnapshot(stored, observation, stateHash);
          }
          // The run before the gap ends where the cluster was last observed; this tick starts the next.
          if (gapFrom !== undefined) {
            if (plan.tick === 'extend') plan.tick = 'start';
            plan.changes.unshift(unobservedSpanChange(gapFrom, plan.outcome));
          }
          // The state after the snapshot is worked out while the change log is appended.
          let next: StoredClusterState | undefined;
          const applied = await applyPlan(tx, { ...cluster, name: observation.cluster, ...(observation.labels ? { labels: observation.labels } : {}) }, plan, tickAt, {
            ...(settleRun === undefined ? {} : { settleRun }),
            meanwhile: (written) => {
              if (whole !== undefined) next = advanceClusterState(whole, plan, written);
            },
          });
          keep = { version: applied.stateVersion, state: next };
          return { written: true, outcome: plan.outcome, changes: applied.changes, rows: applied.rows, extendedTick: plan.tick === 'extend' } as const;
        },
        { timeout: options.transactionTimeoutMs ?? 120_000, maxWait: 30_000 },
      )
        .catch((error: unknown) => {
          // Rolled back, or its commit is in doubt: the next snapshot of the cluster reads the store.
          if (clusterId !== undefined) cache?.delete(clusterId);
          throw error;
        })
        // Prisma's debug history would hold the snapshot's bulk parameters for the next 100 queries.
        .finally(forgetQueryArguments);
      if (clusterId !== undefined && keep !== undefined) {
        if (keep.state === undefined) cache?.delete(clusterId);
        else cache?.set(clusterId, keep.version, keep.state);
      }
      if (result.written) releaseStoredRevisions(observation);
      return result;
    },
  };
}

/**
 * Tells every revision the committed snapshot refers to that the store holds it (a read resource's
 * open interval refers to its revision, written now or before), so a watch-cache record can drop
 * its copy (src/kube/compact.ts). Unread resources kept their interval and are left alone.
 */
function releaseStoredRevisions(observation: ClusterObservation): void {
  if (observation.outcome !== 'ok') return;
  for (const phase of observation.phases) for (const r of phase.resources) if (r.unread !== true) r.revision?.stored?.();
}

/** True when `stateHash` is the hash of the cluster's current run: the observation changes nothing. */
function isCurrentRun(cluster: LockedCluster, observation: ClusterObservation, stateHash: string): boolean {
  return cluster.tickOutcome === observation.outcome && cluster.tickStateHash === stateHash;
}

/**
 * With the cluster's kept state at hand, a whole observation is planned before it is hashed, and
 * hashed while the database writes the plan (settleRun, called by applyPlan): hashing 10,000
 * resources costs ~10 ms that would otherwise come before the first write. A plan that writes
 * nothing but the run is settled at once, and written as an unchanged tick (the cluster's row
 * alone) when the hash is the current run's, as without the kept state. Undefined without it.
 */
function planWithKeptState(cluster: LockedCluster, observation: ClusterObservation, whole: StoredClusterState | undefined): { plan: SnapshotPlan; settleRun?: () => void } | undefined {
  if (whole === undefined) return undefined;
  const plan = planSnapshot(whole, observation, null);
  if (!writesOnlyRun(plan)) return { plan, settleRun: () => settlePlanRun(plan, whole.lastTick, hashObservation(observation)) };
  const stateHash = hashObservation(observation);
  if (isCurrentRun(cluster, observation, stateHash)) return { plan: planUnchangedTick(observation, stateHash) };
  settlePlanRun(plan, whole.lastTick, stateHash);
  return { plan };
}
