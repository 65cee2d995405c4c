/** The report as GitHub-flavoured Markdown tables, phases worst first. */
import { formatDuration, formatTime } from './format.ts';
import { RESOURCE_STATUSES_IN_REPORT } from './statuses.ts';
import {
  clustersTable,
  INCIDENT_HEADERS,
  incidentRows,
  MANIFEST_CHANGE_HEADERS,
  manifestChangeRows,
  PHASE_FIGURE_HEADERS,
  phaseFigures,
  RECOVERY_HEADERS,
  recoveryFigures,
  RESTORE_HEADERS,
  restoreRows,
  totalsTable,
} from './tables.ts';
import type { TextTable } from './tables.ts';
import type { AuditReport, PhaseAudit } from './types.ts';

/**
 * Makes user data inert inside a table cell: Markdown and HTML punctuation is backslash-escaped
 * (CommonMark treats `\x` as a literal x for any ASCII punctuation) and line breaks become spaces.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()<>#|&~!$]/g, (char) => `\\${char}`).replace(/\r\n|\r|\n/g, ' ');
}

/** Every cell is escaped (names and messages come from clusters); headers are ours and written as they are. */
function table({ headers, rows }: TextTable): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map((row) => line(row.map(escapeMarkdown)))].join(
    '\n',
  );
}

function phaseLabel(phase: PhaseAudit): string {
  return `${phase.cluster}/${phase.namespace}/${phase.name}`;
}

/** A report-wide table of per-phase rows: the phase in front of each. */
function perPhase(
  headers: readonly string[],
  rowsOf: (phase: PhaseAudit) => string[][],
  phases: readonly PhaseAudit[],
): TextTable {
  return {
    headers: ['Phase', ...headers],
    rows: phases.flatMap((phase) => rowsOf(phase).map((row) => [phaseLabel(phase), ...row])),
  };
}

export function renderMarkdown(report: AuditReport): string {
  const { phases } = report;
  const sections: string[] = [
    '# Audit report',
    `${formatTime(report.range.from)} to ${formatTime(report.range.to)} (${formatDuration(report.range.durationMs)})`,
    '## Totals',
    table(totalsTable(report)),
    '## Phases (worst first)',
    table(perPhase(PHASE_FIGURE_HEADERS, (phase) => [phaseFigures(phase)], phases)),
    '## Recovery',
    'Time to restore runs from entering Failed to the next Current; time out of Current runs from leaving Current to the next Current, rollouts included.',
    table(perPhase(RECOVERY_HEADERS, (phase) => [recoveryFigures(phase)], phases)),
    '## Time in each status',
    table(
      perPhase(
        [...RESOURCE_STATUSES_IN_REPORT, 'Unreachable'],
        (phase) => [
          [
            ...RESOURCE_STATUSES_IN_REPORT.map((status) => formatDuration(phase.timeInStatus[status])),
            formatDuration(phase.unreachableMs),
          ],
        ],
        phases,
      ),
    ),
    '## Restores from Failed',
    table(perPhase(RESTORE_HEADERS, restoreRows, phases)),
    '## Incidents (left Current)',
    table(perPhase(INCIDENT_HEADERS, incidentRows, phases)),
    '## Manifest changes',
    'A new manifest version is an inventory change (entries added or removed; the `manifests` history); member revisions are objects applied with a new spec, with no new manifest version.',
    table(perPhase(MANIFEST_CHANGE_HEADERS, manifestChangeRows, phases)),
    ...(phases.some((phase) => Object.keys(phase.conditionTime).length > 0)
      ? [
          '## Conditions from checks',
          'Time in the range each condition was True, False and Unknown.',
          table(
            perPhase(
              ['Condition', 'True', 'False', 'Unknown'],
              (phase) =>
                Object.entries(phase.conditionTime).map(([type, d]) => [
                  type,
                  formatDuration(d.True),
                  formatDuration(d.False),
                  formatDuration(d.Unknown),
                ]),
              phases,
            ),
          ),
        ]
      : []),
    '## Clusters',
    table(clustersTable(report.clusters)),
  ];
  return `${sections.join('\n\n')}\n`;
}
