/**
 * The report's tables as plain text cells, shared by the Markdown and HTML renderers (each escapes
 * the cells its own way). Per-phase tables come without the phase column: Markdown puts the phase
 * in front of each row, HTML puts it in the section heading.
 */
import { formatDuration, formatPercent, formatTime } from './format.ts';
import type { AuditedManifestChange, AuditReport, ClusterAudit, PhaseAudit, StatusCause } from './types.ts';

export interface TextTable {
  headers: readonly string[];
  rows: readonly (readonly string[])[];
}

const NOT_BY_RANGE_END = 'not by range end';

export function totalsTable(report: AuditReport): TextTable {
  const { totals } = report;
  return {
    headers: [
      'Phases',
      'Clusters',
      'Availability',
      'Failures',
      'Restored from Failed',
      'Mean time to restore',
      'Incidents',
      'Mean time out of Current',
      'Flapping phases',
      'Cluster outages',
      'Inventory changes',
      'Revision changes',
    ],
    rows: [
      [
        String(totals.phases),
        String(totals.clusters),
        formatPercent(totals.availability),
        String(totals.failures),
        String(totals.restored),
        formatDuration(totals.meanTimeToRestoreMs),
        String(totals.incidents),
        formatDuration(totals.meanTimeOutOfCurrentMs),
        String(totals.flappingPhases),
        String(totals.outages),
        String(totals.inventoryChanges),
        String(totals.revisionChanges),
      ],
    ],
  };
}

export const PHASE_FIGURE_HEADERS: readonly string[] = [
  'Source',
  'Availability',
  'Observed',
  'Unreachable',
  'Unobserved',
  'Failures',
  'Failed at start',
  'Status changes',
  'Flapping',
  'Inventory changes',
  'Revision changes',
];

export function phaseFigures(phase: PhaseAudit): string[] {
  return [
    phase.source,
    formatPercent(phase.availability),
    formatDuration(phase.observedMs),
    formatDuration(phase.unreachableMs),
    formatDuration(phase.unobservedMs),
    String(phase.failures),
    phase.failedAtStart ? 'yes' : 'no',
    String(phase.statusChanges),
    phase.flapping ? `yes (${phase.maxChangesInAnHour} in an hour)` : 'no',
    String(phase.inventoryChanges),
    String(phase.revisionChanges),
  ];
}

export const RECOVERY_HEADERS: readonly string[] = [
  'Restores from Failed',
  'Mean time to restore',
  'Longest time to restore',
  'Not restored since',
  'Incidents (left Current)',
  'Mean time out of Current',
  'Longest time out of Current',
  'Not Current since',
];

export function recoveryFigures(phase: PhaseAudit): string[] {
  const { restore, recovery } = phase;
  return [
    restore.restores.length === 0 ? '0' : `${restore.restores.length} (${restore.restored} restored)`,
    formatDuration(restore.meanTimeToRestoreMs),
    formatDuration(restore.longestTimeToRestoreMs),
    restore.notRestored === null ? '' : formatTime(restore.notRestored.failedAt),
    String(recovery.incidents.length),
    formatDuration(recovery.meanTimeOutOfCurrentMs),
    formatDuration(recovery.longestTimeOutOfCurrentMs),
    recovery.openIncident === null ? '' : formatTime(recovery.openIncident.since),
  ];
}

export const INCIDENT_HEADERS: readonly string[] = [
  'Left Current',
  'Current again',
  'Duration',
  'Reached Failed',
  'Caused by',
  'Message',
];

export function incidentRows(phase: PhaseAudit): string[][] {
  return phase.recovery.incidents.map((incident) => [
    formatTime(incident.from),
    incident.to === null ? NOT_BY_RANGE_END : formatTime(incident.to),
    formatDuration(incident.durationMs),
    incident.reachedFailed ? 'yes' : 'no',
    ...causeCells(incident.cause),
  ]);
}

export const RESTORE_HEADERS: readonly string[] = [
  'Entered Failed',
  'Current again',
  'Time to restore',
  'Caused by',
  'Message',
];

export function restoreRows(phase: PhaseAudit): string[][] {
  return phase.restore.restores.map((restore) => [
    formatTime(restore.failedAt),
    restore.restoredAt === null ? NOT_BY_RANGE_END : formatTime(restore.restoredAt),
    formatDuration(restore.durationMs),
    ...causeCells(restore.cause),
  ]);
}

/** The resource (with its status then) and its message; empty cells when no cause was recorded. */
export function causeCells(cause: StatusCause | null): [string, string] {
  if (cause === null) return ['', ''];
  return [cause.status === null ? cause.resource : `${cause.resource} (${cause.status})`, cause.message];
}

export const MANIFEST_CHANGE_HEADERS: readonly string[] = ['At', 'Kind', 'Added', 'Removed', 'Revisions changed'];

/** What kind of change an instant's record is: a new manifest version, member revisions, or both. */
export function manifestChangeKind(change: AuditedManifestChange): string {
  const kinds = [
    change.inventoryChanged ? 'new manifest version' : '',
    change.revisionsChanged.length > 0 ? 'member revisions' : '',
  ];
  return kinds.filter((kind) => kind !== '').join(' + ') || 'none';
}

export function manifestChangeRows(phase: PhaseAudit): string[][] {
  return phase.manifestChanges.map((change) => [
    formatTime(change.at),
    manifestChangeKind(change),
    change.added.join(', '),
    change.removed.join(', '),
    change.revisionsChanged.join(', '),
  ]);
}

export function clustersTable(clusters: readonly ClusterAudit[]): TextTable {
  return {
    headers: [
      'Cluster',
      'Reachability',
      'Reachable',
      'Unreachable',
      'Unobserved',
      'Outages',
      'Longest outage',
      'Unreachable at start since',
    ],
    rows: clusters.map((cluster) => [
      cluster.name,
      formatPercent(cluster.reachability),
      formatDuration(cluster.reachableMs),
      formatDuration(cluster.unreachableMs),
      formatDuration(cluster.unobservedMs),
      String(cluster.outages.length),
      formatDuration(cluster.longestOutageMs),
      cluster.outageAtStart === null ? '' : formatTime(cluster.outageAtStart.from),
    ]),
  };
}
