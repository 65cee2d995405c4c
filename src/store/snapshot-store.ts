/**
 * The snapshot pipeline's port to the database: one transaction over one locked cluster, in which
 * the pipeline reads the stored state and writes a plan. The cluster's row is locked for the whole
 * transaction (two snapshots of one cluster never write at once, in any process), and a process
 * killed half-way leaves nothing behind because PostgreSQL rolls the transaction back.
 *
 * It stores and nothing else: which state to load, whether a tick changes anything and what to
 * keep between snapshots is decided in src/snapshot/record.ts. Nothing here reads a cluster.
 */
import type { SnapshotPlan } from '../history/plan-snapshot.ts';
import type { ClusterObservation, PhaseIdentity, StoredClusterState } from '../history/types.ts';
import { applyPlan, type AppliedPlan, type ApplyPlanOptions } from './history-write.ts';
import { loadClusterState, lockCluster, recordUnobservedGap, type LockedCluster } from './history-state.ts';
import type { Db } from './db.ts';
import { withSqlTransaction } from './sql-transaction.ts';

export type { AppliedPlan } from './history-write.ts';
export { currentRun, type LockedCluster } from './history-state.ts';
export { RevisionsMissingError } from './revisions.ts';

/** What a snapshot may do inside its transaction, with its cluster's row locked. */
export interface ClusterTransaction {
  /** The locked row as it was when locked. */
  readonly cluster: LockedCluster;
  /**
   * Writes the span the cluster went unobserved (from `from` to `to`) into its phases' history,
   * before the tick that ends it is planned; the stored state must be loaded after this.
   */
  recordUnobservedGap(from: Date, to: Date): Promise<void>;
  /**
   * The cluster's current stored state; with `only`, just those phases. `observation`, the one
   * about to be planned, lets the state share its strings (keys, digests) where they are equal.
   */
  loadState(options?: {
    only?: readonly PhaseIdentity[];
    observation?: ClusterObservation;
  }): Promise<StoredClusterState>;
  /** Writes `plan`; the cluster row takes `labels` when given. */
  apply(
    plan: SnapshotPlan,
    options: ApplyPlanOptions & { name: string; labels?: Record<string, string> },
  ): Promise<AppliedPlan>;
}

/** The store as the snapshot pipeline uses it. */
export interface SnapshotStore {
  /**
   * Runs `work` in one transaction holding the lock of the cluster named `cluster` (its row is
   * created if needed); commits when `work` resolves, rolls back when it throws.
   */
  withLockedCluster<T>(cluster: string, work: (tx: ClusterTransaction) => Promise<T>): Promise<T>;
}

/** Options of {@link createSnapshotStore}. */
export interface SnapshotStoreOptions {
  /** Longest a snapshot transaction may run. @default 120000 */
  transactionTimeoutMs?: number;
}

/**
 * The snapshot store over `db`'s pool: the transaction runs on `pg` directly (src/store/sql-transaction.ts
 * says why), with the same statements Prisma's raw queries would send.
 */
export function createSnapshotStore(db: Db, options: SnapshotStoreOptions = {}): SnapshotStore {
  return {
    withLockedCluster: (name, work) =>
      withSqlTransaction(
        db,
        async (tx) => {
          const cluster = await lockCluster(tx, name);
          return work({
            cluster,
            recordUnobservedGap: async (from, to) => {
              await recordUnobservedGap(tx, cluster, from, to);
            },
            loadState: ({ only, observation } = {}) => loadClusterState(tx, cluster, only, observation),
            apply: (plan, { name: clusterName, labels, ...write }) =>
              applyPlan(tx, { ...cluster, name: clusterName, ...(labels ? { labels } : {}) }, plan, write),
          });
        },
        { timeoutMs: options.transactionTimeoutMs ?? 120_000, maxWaitMs: 30_000 },
      ),
  };
}
