/**
 * One CSV row per phase (RFC 4180: CRLF line ends, fields quoted when they hold `,` `"` CR or LF).
 * Text cells are neutralised against formula injection (OWASP "CSV Injection"): names and messages
 * come from clusters and configuration, and a spreadsheet runs a cell that starts with `=`, `+`,
 * `-`, `@`, a tab or a carriage return as a formula, also after blanks and in full-width forms.
 */
import { RESOURCE_STATUSES_IN_REPORT } from './statuses.ts';
import type { AuditReport, PhaseAudit } from './types.ts';

/** Quotes one field per RFC 4180 when it needs it; inner quotes are doubled. */
export function quoteCsvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Characters that make a spreadsheet read a cell as a formula (OWASP's list). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * Leading characters a spreadsheet may skip before it reads a formula: whitespace as JavaScript
 * knows it (Unicode spaces such as U+3000 and U+00A0, line breaks, U+FEFF) and the zero-width ones.
 */
const LEADING_BLANKS = /^[\s\u200B-\u200D\u2060]+/u;

/**
 * A text cell a spreadsheet shows as text: one whose first character, after leading blanks and
 * read as its NFKC compatibility form (full-width `＝` and `＋`, small `﹦`, superscript `⁼` are
 * `=` and `+` to a spreadsheet that normalises), is a formula character gets a leading single
 * quote, which spreadsheets read as "this is text" (and do not display).
 */
export function neutraliseCsvText(text: string): string {
  if (FORMULA_START.test(text)) return `'${text}`;
  const [first = ''] = text.replace(LEADING_BLANKS, '');
  return FORMULA_START.test(first.normalize('NFKC')) ? `'${text}` : text;
}

/**
 * One cell as written. Only text is neutralised: numbers the report computed are written as numbers
 * (a negative figure stays `-5`, which a spreadsheet reads as the number it is), while text that
 * merely looks like a number (a name `-5`) is text and is neutralised like any other.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value === 'string') return quoteCsvField(neutraliseCsvText(value));
  return quoteCsvField(String(value));
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
    (status) =>
      [`${status.toLowerCase()}_ms`, (p: PhaseAudit) => p.timeInStatus[status]] as [
        string,
        (phase: PhaseAudit) => number,
      ],
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
  // Added later, so at the end: readers that take columns by position keep working. The recover
  // columns above count any departure from Current (rollouts included); these say which is which.
  ['mean_time_out_of_current_ms', (p) => roundOrNull(p.recovery.meanTimeOutOfCurrentMs, 0)],
  ['longest_time_out_of_current_ms', (p) => p.recovery.longestTimeOutOfCurrentMs],
  ['restores', (p) => p.restore.restores.length],
  ['restored', (p) => p.restore.restored],
  ['mean_time_to_restore_ms', (p) => roundOrNull(p.restore.meanTimeToRestoreMs, 0)],
  ['longest_time_to_restore_ms', (p) => p.restore.longestTimeToRestoreMs],
  ['not_restored_since', (p) => p.restore.notRestored?.failedAt.toISOString() ?? null],
  ['inventory_changes', (p) => p.inventoryChanges],
  ['revision_changes', (p) => p.revisionChanges],
];

function roundTo(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

function roundOrNull(value: number | null, decimals: number): number | null {
  return value === null ? null : roundTo(value, decimals);
}

/** Header row plus one row per phase (worst first, as the report orders them); empty cells for `null`. Percentages to 4 decimals, ms whole. */
export function renderCsv(report: AuditReport): string {
  const rows = [COLUMNS.map(([header]) => csvCell(header))];
  for (const phase of report.phases) {
    rows.push(COLUMNS.map(([, read]) => csvCell(read(phase))));
  }
  return rows.map((row) => row.join(',')).join('\r\n') + '\r\n';
}
