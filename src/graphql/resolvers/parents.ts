/**
 * Parent types of GraphQL object types that have no domain type of their own. codegen.ts maps the
 * SDL types to these (and to the domain records of the stores and services), so a resolver's parent
 * is typed as what the resolver of the field above really returns.
 */
import type { CheckKind } from '../../history/condition-changes.ts';
import type { StaleReason } from '../../history/observation.ts';
import type { PhaseIntervalRecord, PhaseStatusRecord } from '../../store/read-types.ts';

/** PhaseSnapshot: a phase as of a moment, i.e. the interval containing the moment, and why it was stale then. */
export interface PhaseSnapshotParent {
  phaseId: number;
  /** The phase's cluster (what its resources' revisions are withheld by). */
  cluster: string;
  at: Date;
  interval: PhaseStatusRecord;
  staleReason: StaleReason | null;
}

/**
 * PhaseInterval: a phase's status interval with its id, as HistoryReader.listPhaseIntervals returns
 * it; `staleReason` set where the read knows more than the stored row (an open interval of a
 * cluster not observed now).
 */
export type PhaseIntervalParent = PhaseIntervalRecord & { staleReason?: StaleReason | null };

/**
 * PhaseCondition: a derived condition (stored with the phase's status, its time an RFC 3339 string)
 * or one from a check (its own rows), with where it comes from and whether its check still runs.
 */
export interface PhaseConditionParent {
  type: string;
  source: 'derived' | CheckKind;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string | Date | null;
  stale: boolean;
  lastCheckedAt: Date | null;
}
