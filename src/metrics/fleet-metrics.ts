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
 * - `phaselog_cluster_reachable{cluster}` 1/0; a cluster never read yet has no series.
 *
 * Only the status series covers every phase: a healthy fleet's scrape is one line a phase, and the
 * detail series are there for the phases someone needs to look at. The text is written directly rather
 * than through prom-client's metric objects, which hash every label set on `set()` and escape every
 * label when printing: at tens of thousands of series that is most of a scrape's time. PostgreSQL
 * writes the per-phase lines as it reads them (store/read-fleet-state.ts); the staleness rule is
 * applied here, per cluster, and handed to that read as the clusters whose phases are all stale.
 * Scrapes that arrive while a read runs share it.
 */
import { observationStateOf, staleReasonOf } from '../history/observation.ts';
import type { FleetClusterFacts, FleetSeries, FleetStateReader } from '../store/read-fleet-state.ts';
import type { Metrics } from './registry.ts';

const HELP = {
  phaselog_phase_status:
    'The current status of each phase (kstatus: Current, InProgress, Failed, Terminating, NotFound, Unknown); 1 for the status it has, no series for the others.',
  phaselog_phase_resources: 'Resources per status of each phase not Current (non-zero counts only).',
  phaselog_phase_status_changed_timestamp_seconds:
    'When the current status of each phase not Current began (Unix time).',
  phaselog_phase_stale:
    '1 for each phase whose status shown is the last one known (its cluster is unreachable or unobserved); fresh phases have no series.',
  phaselog_cluster_reachable: '1 when the last snapshot read the cluster, 0 when it could not.',
} as const;

/** `cluster` as a quoted label value. */
const escapeLabel = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** The clusters whose phases are all stale at `now` (unreachable, or unobserved), by the one observation rule. */
export function staleClusterIds(clusters: readonly FleetClusterFacts[], now: Date): number[] {
  return clusters
    .filter(
      (cluster) =>
        staleReasonOf(observationStateOf({ ...cluster, retiredAt: null }, now), false, cluster.reachable) !== null,
    )
    .map((cluster) => cluster.id);
}

/** The Prometheus text of the fleet's state. */
export function renderFleetState(clusters: readonly FleetClusterFacts[], series: FleetSeries): string {
  const reachable = clusters
    .filter((cluster) => cluster.reachable !== null)
    .map(
      (cluster) => `phaselog_cluster_reachable{cluster="${escapeLabel(cluster.name)}"} ${cluster.reachable ? 1 : 0}`,
    );
  const families: Record<keyof typeof HELP, string> = {
    phaselog_phase_status: series.status,
    phaselog_phase_stale: series.stale,
    phaselog_phase_status_changed_timestamp_seconds: series.changed,
    phaselog_phase_resources: series.resources,
    phaselog_cluster_reachable: reachable.join('\n'),
  };
  return Object.entries(families)
    .map(
      ([name, lines]) =>
        `# HELP ${name} ${HELP[name as keyof typeof HELP]}\n# TYPE ${name} gauge\n${lines === '' ? '' : `${lines}\n`}`,
    )
    .join('');
}

/** Reads the fleet's state for one scrape at `now`. */
export async function readFleetText(reader: FleetStateReader, now: Date): Promise<string> {
  const clusters = await reader.clusters();
  return renderFleetState(clusters, await reader.series(staleClusterIds(clusters, now)));
}

/** Adds the fleet state series to `metrics`, read once per scrape. */
export function registerFleetMetrics(metrics: Metrics, reader: FleetStateReader): void {
  let inFlight: Promise<string> | undefined;
  metrics.addText(() => {
    // A scrape that starts while a read runs is answered by it: its state may be older than the
    // scrape by the time that read has run, which a scrape interval of seconds does not notice.
    inFlight ??= readFleetText(reader, new Date()).finally(() => (inFlight = undefined));
    return inFlight;
  });
}
