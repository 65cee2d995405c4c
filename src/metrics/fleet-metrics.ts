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
 * detail series are there for the phases someone needs to look at. The text is written here rather
 * than through prom-client's metric objects, which hash every label set on `set()` and escape every
 * label when printing: at tens of thousands of series a scrape that is most of its time. The series
 * of one scrape come from one statement; scrapes that arrive while it runs share it.
 */
import { observationStateOf, staleReasonOf, type ObservationState } from '../history/observation.ts';
import type { FleetState } from '../store/read-fleet-state.ts';
import type { Metrics } from './registry.ts';

const NEEDS_ESCAPE = /[\\"\n]/;

/** A label value as the text format quotes it. */
function escapeLabel(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

const HELP: Record<string, string> = {
  phaselog_phase_status: 'The current status of each phase (kstatus: Current, InProgress, Failed, Terminating, NotFound, Unknown); 1 for the status it has, no series for the others.',
  phaselog_phase_resources: 'Resources per status of each phase not Current (non-zero counts only).',
  phaselog_phase_status_changed_timestamp_seconds: 'When the current status of each phase not Current began (Unix time).',
  phaselog_phase_stale: '1 for each phase whose status shown is the last one known (its cluster is unreachable or unobserved); fresh phases have no series.',
  phaselog_cluster_reachable: '1 when the last snapshot read the cluster, 0 when it could not.',
};

/** The Prometheus text of the fleet's state, judging staleness by the one observation rule at `now`. */
export function renderFleetState(state: FleetState, now: Date): string {
  const clusters = new Map<string, { label: string; reachable: boolean | null; observation: ObservationState }>();
  let reachable = '';
  for (const cluster of state.clusters) {
    const label = escapeLabel(cluster.name);
    clusters.set(cluster.name, { label, reachable: cluster.reachable, observation: observationStateOf({ ...cluster, retiredAt: null }, now) });
    if (cluster.reachable !== null) reachable += `phaselog_cluster_reachable{cluster="${label}"} ${cluster.reachable ? 1 : 0}\n`;
  }
  const status: string[] = [];
  let resources = '';
  let changed = '';
  let stale = '';
  for (const phase of state.phases) {
    const cluster = clusters.get(phase.cluster);
    const ids = `cluster="${cluster?.label ?? escapeLabel(phase.cluster)}",namespace="${escapeLabel(phase.namespace)}",phase="${escapeLabel(phase.name)}"`;
    status.push(`phaselog_phase_status{${ids},source="${escapeLabel(phase.source)}",status="${escapeLabel(phase.status)}"} 1\n`);
    const isStale = cluster === undefined ? phase.stale : staleReasonOf(cluster.observation, phase.stale, cluster.reachable) !== null;
    if (isStale) stale += `phaselog_phase_stale{${ids}} 1\n`;
    if (phase.status === 'Current') continue;
    if (phase.since !== null) changed += `phaselog_phase_status_changed_timestamp_seconds{${ids}} ${phase.since.getTime() / 1000}\n`;
    for (const [word, count] of Object.entries(phase.resources ?? {})) {
      if (typeof count === 'number' && count > 0) resources += `phaselog_phase_resources{${ids},status="${escapeLabel(word)}"} ${count}\n`;
    }
  }
  const block = (name: string, lines: string): string => `# HELP ${name} ${HELP[name]}\n# TYPE ${name} gauge\n${lines}`;
  return [
    block('phaselog_phase_status', status.join('')),
    block('phaselog_phase_resources', resources),
    block('phaselog_phase_status_changed_timestamp_seconds', changed),
    block('phaselog_phase_stale', stale),
    block('phaselog_cluster_reachable', reachable),
  ].join('\n');
}

/** Adds the fleet state series to `metrics`, read by `read` once per scrape. */
export function registerFleetMetrics(metrics: Metrics, read: () => Promise<FleetState>): void {
  let inFlight: Promise<string> | undefined;
  metrics.addText(() => {
    // A scrape that starts while a read runs is answered by it: its state may be older than the
    // scrape by the time that read has run, which a scrape interval of seconds does not notice.
    inFlight ??= read().then((state) => renderFleetState(state, new Date())).finally(() => (inFlight = undefined));
    return inFlight;
  });
}
