/**
 * The emulated clusters of the scale-out benchmark, in a process of their own so that their CPU is
 * not counted against the coordinator. Started by bench/scale-out.ts:
 *
 *   node --import tsx bench/scale-out-clusters.ts '{"clusters":8,"phases":20,"resourcesPerPhase":25}'
 *
 * Sends `{ ready, kubeconfigs }` once listening; on `{ mutate: t }` moves one Deployment in 20 of
 * every cluster into a rollout (InProgress) and the previous tick's ones back to Current, then
 * answers `{ mutated: t, changed }`. On `{ flip: { id, cluster, phase, resource, to } }` sets that one
 * Deployment's status (`rolling`, `ready` or `failed`) and answers `{ flipped: id, at }`, `at` being the
 * moment of the change in epoch milliseconds with sub-millisecond precision (comparable across
 * processes of one machine); `{ flips: { id, list } }` makes several such changes at once and answers
 * `{ flipped: id, at }` likewise. On `{ watches: id }` answers `{ watchCounts: id, clusters }`: per
 * cluster, the watch requests open now (logged with verb `watch` and not ended) by User-Agent, so
 * the coordinator sees which worker watches what. Exits when the parent disconnects or sends SIGTERM.
 */
import { startEmulator } from '../src/emulator/index.ts';
import type { Emulator } from '../src/emulator/index.ts';
import { applyFleet, deploymentRef, readyStatus, rollingStatus } from '../test/integration/snapshot/fleet.ts';
import type { FleetShape } from '../test/integration/snapshot/fleet.ts';

/** Shape of the emulated fleet, passed as JSON on the command line. */
export interface ScaleOutClustersOptions extends FleetShape {
  clusters: number;
  /** Serve HTTPS, each cluster with its own self-signed CA, as real API servers do. @default false */
  tls?: boolean;
}

/** One Deployment in `SHARE` changes status per tick. */
const SHARE = 20;

function mutate(emulators: Emulator[], shape: FleetShape, tick: number): number {
  let changed = 0;
  for (const em of emulators) {
    for (let p = 0; p < shape.phases; p++) {
      for (let r = 0; r < shape.resourcesPerPhase; r++) {
        const slot = (p * shape.resourcesPerPhase + r) % SHARE;
        if (slot === tick % SHARE) em.patchStatus(deploymentRef(p, r, shape), rollingStatus());
        else if (slot === (tick + SHARE - 1) % SHARE) em.patchStatus(deploymentRef(p, r, shape), readyStatus());
        else continue;
        changed++;
      }
    }
  }
  return changed;
}

const options = JSON.parse(process.argv[2] ?? '{}') as ScaleOutClustersOptions;
const emulators: Emulator[] = [];
for (let c = 0; c < options.clusters; c++) {
  const em = await startEmulator({ port: 0, tls: options.tls === true });
  applyFleet(em, options);
  emulators.push(em);
}
const shutdown = () => {
  void Promise.all(emulators.map((em) => em.close())).finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('disconnect', shutdown);
/** One Deployment's status change, asked for by the watch-latency and scale-out benchmarks. */
export interface FlipRequest {
  id: number;
  cluster: number;
  phase: number;
  resource: number;
  to: 'rolling' | 'ready' | 'failed';
}

/** Open watch requests of one cluster, by the User-Agent that opened them. */
export interface ClusterWatches {
  cluster: string;
  open: number;
  byAgent: Record<string, number>;
}

/** kstatus reads a Deployment whose Progressing condition says ProgressDeadlineExceeded as Failed. */
function failedStatus(): Record<string, unknown> {
  return {
    observedGeneration: 1,
    replicas: 2,
    updatedReplicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
    conditions: [
      {
        type: 'Progressing',
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'ReplicaSet has timed out progressing',
      },
    ],
  };
}

const STATUS = { rolling: rollingStatus, ready: readyStatus, failed: failedStatus };

function applyFlip(flip: Omit<FlipRequest, 'id'>): void {
  emulators[flip.cluster]?.patchStatus(deploymentRef(flip.phase, flip.resource, options), STATUS[flip.to]());
}

function countWatches(): ClusterWatches[] {
  return emulators.map((em, c) => {
    const byAgent: Record<string, number> = {};
    let open = 0;
    for (const r of em.requests()) {
      if (r.verb !== 'watch' || r.endedAt !== undefined) continue;
      open++;
      const agent = r.userAgent ?? '(none)';
      byAgent[agent] = (byAgent[agent] ?? 0) + 1;
    }
    return { cluster: `cluster-${c}`, open, byAgent };
  });
}

process.on('message', (message: unknown) => {
  const tick = (message as { mutate?: unknown }).mutate;
  if (typeof tick === 'number') process.send?.({ mutated: tick, changed: mutate(emulators, options, tick) });
  const flip = (message as { flip?: FlipRequest }).flip;
  if (flip !== undefined && emulators[flip.cluster] !== undefined) {
    const at = performance.timeOrigin + performance.now();
    applyFlip(flip);
    process.send?.({ flipped: flip.id, at });
  }
  const flips = (message as { flips?: { id: number; list: Omit<FlipRequest, 'id'>[] } }).flips;
  if (flips !== undefined) {
    const at = performance.timeOrigin + performance.now();
    for (const one of flips.list) applyFlip(one);
    process.send?.({ flipped: flips.id, at });
  }
  const watches = (message as { watches?: unknown }).watches;
  if (typeof watches === 'number') process.send?.({ watchCounts: watches, clusters: countWatches() });
});
process.send?.({
  ready: true,
  url: '',
  kubeconfigs: emulators.map((em, c) => ({ name: `cluster-${c}`, yaml: em.kubeconfig() })),
});
