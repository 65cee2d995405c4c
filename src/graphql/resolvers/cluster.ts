/** Resolvers of Cluster: its observation state, by the one rule of src/history/observation.ts. */
import type { Resolvers } from '../../generated/graphql.ts';
import { clusterStateOf, observationStateOf } from '../../history/observation.ts';
import type { ClusterRecord } from '../../store/cluster-store.ts';

const stateOf = (c: ClusterRecord) => clusterStateOf(observationStateOf(c.observation, new Date()), c.reachable);

export const clusterResolvers: Pick<Resolvers, 'Cluster'> = {
  Cluster: {
    // A cluster nobody observes has no reachability to report: its last one would read as current.
    reachable: (c) => (observationStateOf(c.observation, new Date()).state === 'OBSERVED' ? c.reachable : null),
    state: (c) => stateOf(c),
    retired: (c) => c.observation.retiredAt !== null,
    retiredAt: (c) => c.observation.retiredAt,
    lastObservedAt: (c) => c.observation.lastObservedAt,
    snapshotInterval: (c) => c.observation.snapshotIntervalMs,
  },
};
