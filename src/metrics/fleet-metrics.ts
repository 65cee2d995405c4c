/**
 * Phase-level state series, read from the database when scraped (never per resource):
 *
 * - `phaselog_phase_status{cluster,namespace,phase,source,status}` 1 for the current status only,
 *   as `argocd_app_info` does. kube-state-metrics prints every status with 0/1, but six series a
 *   phase would put a 50,000-phase fleet far past the scrape's size budget; alert on
 *   `phaselog_phase_status{status="Failed"} == 1`, count with `count by (status) (...)`.
 * - `phaselog_phase_resources{cluster,namespace,phase,status}` resources per status, non-zero
 *   only, of phases not Current.
 * - `phaselog_phase_status_changed_timestamp_seconds{cluster,namespace,phase}` when the current
 *   status began (`time() - x` is how long it has held), of phases not Current.
 * - `phaselog_phase_stale{cluster,namespace,phase}` 1 for each phase whose status shown is the last
 *   one known (cluster unreachable, unobserved); fresh phases have no series.
 *
 * Only the status series covers every phase: a healthy fleet's scrape is one line a phase, and the
 * detail series are there for the phases someone needs to look at.
 * - `phaselog_cluster_reachable{cluster}` 1/0; a cluster never read yet has no series.
 *
 * The series of one scrape come from one statement; scrapes that arrive while it runs share it.
 */
import type { Registry } from 'prom-client';
import { observationStateOf, staleReasonOf } from '../history/observation.ts';
import type { FleetState } from '../store/read-fleet-state.ts';
import { registerCollected, type CollectedValue } from './collected.ts';

/** Names of the series {@link registerFleetMetrics} adds. */
export const FLEET_METRIC_NAMES = [
  'phaselog_phase_status',
  'phaselog_phase_resources',
  'phaselog_phase_status_changed_timestamp_seconds',
  'phaselog_phase_stale',
  'phaselog_cluster_reachable',
] as const;

interface FleetSeries {
  status: CollectedValue[];
  resources: CollectedValue[];
  changed: CollectedValue[];
  stale: CollectedValue[];
  reachable: CollectedValue[];
}

/** Turns the fleet's state into series, judging staleness by the one observation rule at `now`. */
export function fleetSeries(state: FleetState, now: Date): FleetSeries {
  const series: FleetSeries = { status: [], resources: [], changed: [], stale: [], reachable: [] };
  const clusterStale = new Map<string, { reachable: boolean | null; observation: ReturnType<typeof observationStateOf> }>();
  for (const cluster of state.clusters) {
    clusterStale.set(cluster.name, { reachable: cluster.reachable, observation: observationStateOf({ ...cluster, retiredAt: null }, now) });
    if (cluster.reachable !== null) series.reachable.push({ labels: { cluster: cluster.name }, value: cluster.reachable ? 1 : 0 });
  }
  for (const phase of state.phases) {
    if (phase.status === null) continue;
    const ids = { cluster: phase.cluster, namespace: phase.namespace, phase: phase.name };
    series.status.push({ labels: { ...ids, source: phase.source, status: phase.status }, value: 1 });
    const cluster = clusterStale.get(phase.cluster);
    const stale = cluster === undefined ? phase.stale : staleReasonOf(cluster.observation, phase.stale, cluster.reachable) !== null;
    if (stale) series.stale.push({ labels: ids, value: 1 });
    if (phase.status === 'Current') continue;
    if (phase.since !== null) series.changed.push({ labels: ids, value: phase.since.getTime() / 1000 });
    for (const [status, count] of Object.entries(phase.resources ?? {})) {
      if (typeof count === 'number' && count > 0) series.resources.push({ labels: { ...ids, status }, value: count });
    }
  }
  return series;
}

/** Registers the fleet state series in `registry`, read by `read` once per scrape. */
export function registerFleetMetrics(registry: Registry, read: () => Promise<FleetState>): void {
  let inFlight: Promise<FleetSeries> | undefined;
  // Every series of a scrape asks at once (the registry collects them in parallel): one read serves
  // them all, and any scrape that starts before it is answered.
  const current = (): Promise<FleetSeries> => {
    inFlight ??= read().then((state) => fleetSeries(state, new Date())).finally(() => (inFlight = undefined));
    return inFlight;
  };
  const add = (name: (typeof FLEET_METRIC_NAMES)[number], help: string, pick: (s: FleetSeries) => CollectedValue[]): void =>
    registerCollected(registry, { name, help, type: 'gauge', collect: async () => pick(await current()) });
  add('phaselog_phase_status', 'The current status of each phase (kstatus: Current, InProgress, Failed, Terminating, NotFound, Unknown); 1 for the status it has, no series for the others.', (s) => s.status);
  add('phaselog_phase_resources', 'Resources per status of each phase not Current (non-zero counts only).', (s) => s.resources);
  add('phaselog_phase_status_changed_timestamp_seconds', 'When the current status of each phase not Current began (Unix time).', (s) => s.changed);
  add('phaselog_phase_stale', '1 for each phase whose status shown is the last one known (its cluster is unreachable or unobserved); fresh phases have no series.', (s) => s.stale);
  add('phaselog_cluster_reachable', '1 when the last snapshot read the cluster, 0 when it could not.', (s) => s.reachable);
}
