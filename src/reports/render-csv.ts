/** One CSV row per phase (RFC 4180: CRLF line ends, fields quoted when they hold `,` `"` CR or LF). */
import { RESOURCE_STATUSES_IN_REPORT } from './statuses.ts';
import type { AuditReport, PhaseAudit } from './types.ts';

/** Quotes one field per RFC 4180 when it needs it; inner quotes are doubled. */
export function quoteCsvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

const COLUMNS: readonly [string, (phase: PhaseAudit) => string | number | boolean | null][] = [
  ['id', (p) => p.id],
  ['cluster', (p) => p.cluster],
  ['namespace', (p) => p.namespace],
  ['name', (p) => p.name],
  ['source', (p) => p.source],
  ['observed_ms', (p) => p.observedMs],
  ['unreachable_ms', (p) => p.unreachableMs],
  ['unobserved_ms', (p) => p.unobservedMs],
  ['availability_percent', (p) => (p.availability === null ? null : roundTo(p.availability, 4))],
  ...RESOURCE_STATUSES_IN_REPORT.map(
    (status) => [`${status.toLowerCase()}_ms`, (p: PhaseAudit) => p.timeInStatus[status]] as [string, (phase: PhaseAudit) => number],
  ),
  ['failures', (p) => p.failures],
  ['failed_at_start', (p) => p.failedAtStart],
  ['incidents', (p) => p.recovery.incidents.length],
  ['recovered', (p) => p.recovery.recovered],
  ['mean_time_to_recover_ms', (p) => roundOrNull(p.recovery.meanTimeToRecoverMs, 0)],
  ['longest_time_to_recover_ms', (p) => p.recovery.longestTimeToRecoverMs],
  ['open_incident_since', (p) => p.recovery.openIncident?.since.toISOString() ?? null],
  ['status_changes', (p) => p.statusChanges],
  ['max_changes_in_an_hour', (p) => p.maxChangesInAnHour],
  ['flapping', (p) => p.flapping],
  ['manifest_changes', (p) => p.manifestChanges.length],
  ['status_at_end', (p) => p.statusAtEnd],
];

function roundTo(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

function roundOrNull(value: number | null, decimals: number): number | null {
  return value === null ? null : roundTo(value, decimals);
}

/** Header row plus one row per phase; empty cells for `null`. Percentages to 4 decimals, ms whole. */
export function renderCsv(report: AuditReport): string {
  const rows = [COLUMNS.map(([header]) => header)];
  for (const phase of report.phases) {
    rows.push(COLUMNS.map(([, read]) => {
      const value = read(phase);
      return value === null ? '' : String(value);
    }));
  }
  return rows.map((row) => row.map(quoteCsvField).join(',')).join('\r\n') + '\r\n';
}
