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
    // Redis away: the owner is unknown, which the answer says as null rather than failing the query.
    owner: async (c, _args, ctx) => {
      const owner = await ctx.loaders.clusterOwner.load(c.name).catch(() => null);
      return owner === null ? null : { worker: owner.worker, host: owner.host, since: owner.since };
    },
  },
};
