/** The report as GitHub-flavoured Markdown tables. */
import { formatDuration, formatPercent, formatTime } from './format.ts';
import { RESOURCE_STATUSES_IN_REPORT } from './statuses.ts';
import type { AuditReport, PhaseAudit } from './types.ts';

/**
 * Makes user data inert inside a table cell: Markdown and HTML punctuation is backslash-escaped
 * (CommonMark treats `\x` as a literal x for any ASCII punctuation) and line breaks become spaces.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()<>#|&~!$]/g, (char) => `\\${char}`).replace(/\r\n|\r|\n/g, ' ');
}

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

function phaseLabel(phase: PhaseAudit): string {
  return escapeMarkdown(`${phase.cluster}/${phase.namespace}/${phase.name}`);
}

export function renderMarkdown(report: AuditReport): string {
  const { totals } = report;
  const sections: string[] = [
    '# Audit report',
    `${formatTime(report.range.from)} to ${formatTime(report.range.to)} (${formatDuration(report.range.durationMs)})`,
    '## Totals',
    table(
      ['Phases', 'Clusters', 'Availability', 'Failures', 'Incidents', 'Flapping phases', 'Cluster outages', 'Manifest changes'],
      [[
        String(totals.phases), String(totals.clusters), formatPercent(totals.availability), String(totals.failures),
        String(totals.incidents), String(totals.flappingPhases), String(totals.outages), String(totals.manifestChanges),
      ]],
    ),
    '## Phases',
    table(
      ['Phase', 'Source', 'Availability', 'Observed', 'Unreachable', 'Unobserved', 'Failures', 'Failed at start', 'Incidents', 'Mean time to recover', 'Longest recovery', 'Not recovered since', 'Status changes', 'Flapping'],
      report.phases.map((phase) => [
        phaseLabel(phase), escapeMarkdown(phase.source), formatPercent(phase.availability), formatDuration(phase.observedMs),
        formatDuration(phase.unreachableMs), formatDuration(phase.unobservedMs), String(phase.failures), phase.failedAtStart ? 'yes' : 'no',
        String(phase.recovery.incidents.length), formatDuration(phase.recovery.meanTimeToRecoverMs),
        formatDuration(phase.recovery.longestTimeToRecoverMs),
        phase.recovery.openIncident === null ? '' : formatTime(phase.recovery.openIncident.since),
        String(phase.statusChanges), phase.flapping ? `yes (${phase.maxChangesInAnHour} in an hour)` : 'no',
      ]),
    ),
    '## Time in each status',
    table(
      ['Phase', ...RESOURCE_STATUSES_IN_REPORT, 'Unreachable'],
      report.phases.map((phase) => [
        phaseLabel(phase), ...RESOURCE_STATUSES_IN_REPORT.map((status) => formatDuration(phase.timeInStatus[status])), formatDuration(phase.unreachableMs),
      ]),
    ),
    '## Incidents',
    table(
      ['Phase', 'Left Current', 'Current again', 'Duration', 'Reached Failed'],
      report.phases.flatMap((phase) =>
        phase.recovery.incidents.map((incident) => [
          phaseLabel(phase), formatTime(incident.from), incident.to === null ? 'not by range end' : formatTime(incident.to),
          formatDuration(incident.durationMs), incident.reachedFailed ? 'yes' : 'no',
        ]),
      ),
    ),
    '## Manifest changes',
    table(
      ['Phase', 'At', 'Added', 'Removed', 'Revisions changed'],
      report.phases.flatMap((phase) =>
        phase.manifestChanges.map((change) => [
          phaseLabel(phase), formatTime(change.at), escapeMarkdown(change.added.join(', ')), escapeMarkdown(change.removed.join(', ')),
          escapeMarkdown(change.revisionsChanged.join(', ')),
        ]),
      ),
    ),
    '## Clusters',
    table(
      ['Cluster', 'Reachability', 'Reachable', 'Unreachable', 'Unobserved', 'Outages', 'Longest outage', 'Unreachable at start since'],
      report.clusters.map((cluster) => [
        escapeMarkdown(cluster.name), formatPercent(cluster.reachability), formatDuration(cluster.reachableMs),
        formatDuration(cluster.unreachableMs), formatDuration(cluster.unobservedMs), String(cluster.outages.length),
        formatDuration(cluster.longestOutageMs), cluster.outageAtStart === null ? '' : formatTime(cluster.outageAtStart.from),
      ]),
    ),
  ];
  return `${sections.join('\n\n')}\n`;
}
