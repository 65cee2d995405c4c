/**
 * The emulated clusters of the scale-out benchmark, in a process of their own so that their CPU is
 * not counted against the coordinator. Started by bench/scale-out.ts:
 *
 *   node --import tsx bench/scale-out-clusters.ts '{"clusters":8,"phases":20,"resourcesPerPhase":25}'
 *
 * Sends `{ ready, kubeconfigs }` once listening; on `{ mutate: t }` moves one Deployment in 20 of
 * every cluster into a rollout (InProgress) and the previous tick's ones back to Current, then
 * answers `{ mutated: t, changed }`. On `{ flip: { id, cluster, phase, resource, to } }` sets that one
 * Deployment's status (`rolling` or `ready`) and answers `{ flipped: id, at }`, `at` being the
 * moment of the change in epoch milliseconds with sub-millisecond precision (comparable across
 * processes of one machine). Exits when the parent disconnects or sends SIGTERM.
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
/** One Deployment's status change, asked for by the watch-latency benchmark. */
export interface FlipRequest {
  id: number;
  cluster: number;
  phase: number;
  resource: number;
  to: 'rolling' | 'ready';
}

process.on('message', (message: unknown) => {
  const tick = (message as { mutate?: unknown }).mutate;
  if (typeof tick === 'number') process.send?.({ mutated: tick, changed: mutate(emulators, options, tick) });
  const flip = (message as { flip?: FlipRequest }).flip;
  const em = flip === undefined ? undefined : emulators[flip.cluster];
  if (flip !== undefined && em !== undefined) {
    const at = performance.timeOrigin + performance.now();
    em.patchStatus(deploymentRef(flip.phase, flip.resource, options), flip.to === 'rolling' ? rollingStatus() : readyStatus());
    process.send?.({ flipped: flip.id, at });
  }
});
process.send?.({ ready: true, url: '', kubeconfigs: emulators.map((em, c) => ({ name: `cluster-${c}`, yaml: em.kubeconfig() })) });
