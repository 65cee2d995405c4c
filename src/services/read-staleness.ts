/**
 * A phase's staleness now: the observation rule (src/history/observation.ts) applied to what a
 * phase read brought about its cluster. The phase reads, the gate and history all ask here.
 */
import { observationStateOf, staleReasonOf, type ObservationState, type StaleReason } from '../history/observation.ts';
import type { PhaseRecord } from '../store/read-types.ts';

/** Whether a phase's current status is stale at `now`, and why. */
export interface PhaseStaleness {
  /** Null when the status is fresh (or the phase has none). */
  reason: StaleReason | null;
  /** Its cluster's observation state at `now`. */
  observation: ObservationState;
}

/** The staleness of `phase`'s current status at `now`. */
export function phaseStaleness(
  phase: Pick<PhaseRecord, 'current' | 'clusterObservation' | 'clusterReachable'>,
  now: Date,
): PhaseStaleness {
  const observation = observationStateOf(phase.clusterObservation, now);
  if (phase.current === null) return { reason: null, observation };
  return { reason: staleReasonOf(observation, phase.current.stale, phase.clusterReachable), observation };
}
