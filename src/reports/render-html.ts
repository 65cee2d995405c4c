/**
 * The report as one self-contained HTML file: inline CSS, no scripts, no external fonts or URLs.
 * Each phase gets an inline SVG status timeline with one segment per status interval in the range;
 * stale intervals and the cluster's unreachable periods are hatched. Every segment carries a
 * `<title>` (status, from, to) and, when wide enough, its status as text; a legend row under each
 * timeline repeats the colour swatch with the status word, so colour is never the only cue.
 */
import type { ResourceStatus } from '../status/types.ts';
import { formatDuration, formatPercent, formatTime } from './format.ts';
import { normaliseIntervals } from './intervals.ts';
import type { Span } from './intervals.ts';
import { RESOURCE_STATUSES_IN_REPORT } from './statuses.ts';
import type { AuditInput, AuditReport, ClusterAudit, PhaseAudit, PhaseHistory, StatusInterval } from './types.ts';

/** Fill colour per status. */
export const STATUS_COLOURS: Readonly<Record<ResourceStatus, string>> = {
  Current: '#2e7d32',
  InProgress: '#1565c0',
  Failed: '#c62828',
  Terminating: '#6a1b9a',
  NotFound: '#757575',
  Unknown: '#f9a825',
};

/** Text colour that reads on each fill. */
const TEXT_COLOURS: Readonly<Record<ResourceStatus, string>> = {
  Current: '#ffffff',
  InProgress: '#ffffff',
  Failed: '#ffffff',
  Terminating: '#ffffff',
  NotFound: '#ffffff',
  Unknown: '#000000',
};

const WIDTH = 1000;
const BAR_HEIGHT = 28;
/** Rough width of one character of the 12-unit label font, to decide whether a label fits. */
const CHAR_WIDTH = 7.5;

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem;color:#1a1a1a;max-width:72rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;font-size:.875rem}
th{background:#f3f3f3}
section.phase{border-top:2px solid #ddd;padding-top:.5rem}
svg.timeline{width:100%;height:auto;display:block}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:1rem;font-size:.875rem}
.swatch{display:inline-block;width:1rem;height:1rem;vertical-align:middle;margin-right:.25rem;border:1px solid #555}
.swatch.hatched{background:repeating-linear-gradient(45deg,#ffffff 0 3px,#555555 3px 6px)}
`;

export function renderHtml(report: AuditReport, input: AuditInput): string {
  const byId = new Map(input.phases.map((phase) => [phase.id, phase]));
  // The report keeps the input's order; fall back to the id if the two were not built together.
  const historyOf = (phase: PhaseAudit, index: number): PhaseHistory | undefined => {
    const sameIndex = input.phases[index];
    return sameIndex !== undefined && sameIndex.id === phase.id ? sameIndex : byId.get(phase.id);
  };
  const from = report.range.from.getTime();
  const to = report.range.to.getTime();
  const unreachable = new Map<string, Span[]>();
  input.clusters.forEach((cluster, index) => {
    const spans = normaliseIntervals(cluster.reachability, to, `clusters[${index}].reachability`)
      .filter((interval) => !interval.item.reachable)
      .map(({ from: start, to: end }) => ({ from: start, to: end }));
    unreachable.set(cluster.name, [...(unreachable.get(cluster.name) ?? []), ...spans]);
  });

  const title = `phaselog audit ${formatTime(report.range.from)} to ${formatTime(report.range.to)}`;
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(title)}</h1>`,
    `<p>Range length ${escapeHtml(formatDuration(report.range.durationMs))}. Availability is the share of observed, reachable time spent Current; time the cluster could not be read is shown hatched and counted apart. A phase is flapping when an hour holds more than ${report.flappingChangesPerHour} status changes.</p>`,
    renderTotals(report),
    renderClusters(report.clusters),
    ...report.phases.map((phase, index) =>
      renderPhase({ phase, index, history: historyOf(phase, index), clusterUnreachable: unreachable.get(phase.cluster) ?? [] }, { from, to }),
    ),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function htmlTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const head = `<tr>${headers.map((header) => `<th>${escapeHtml(header)}</th>`).join('')}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('\n');
  return `<table>\n<thead>${head}</thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

function renderTotals(report: AuditReport): string {
  const { totals } = report;
  return `<h2>Totals</h2>\n${htmlTable(
    ['Phases', 'Clusters', 'Availability', 'Failures', 'Incidents', 'Flapping phases', 'Cluster outages', 'Manifest changes'],
    [[
      String(totals.phases), String(totals.clusters), formatPercent(totals.availability), String(totals.failures),
      String(totals.incidents), String(totals.flappingPhases), String(totals.outages), String(totals.manifestChanges),
    ]],
  )}`;
}

function renderClusters(clusters: readonly ClusterAudit[]): string {
  return `<h2>Clusters</h2>\n${htmlTable(
    ['Cluster', 'Reachability', 'Reachable', 'Unreachable', 'Unobserved', 'Outages', 'Longest outage', 'Unreachable at start since'],
    clusters.map((cluster) => [
      cluster.name, formatPercent(cluster.reachability), formatDuration(cluster.reachableMs), formatDuration(cluster.unreachableMs),
      formatDuration(cluster.unobservedMs), String(cluster.outages.length), formatDuration(cluster.longestOutageMs),
      cluster.outageAtStart === null ? '' : formatTime(cluster.outageAtStart.from),
    ]),
  )}`;
}

/** What one phase's section shows: its audit, its place in the report, its history and its cluster's outages. */
interface PhaseSection {
  phase: PhaseAudit;
  /** Position in the report, which keeps each timeline's SVG ids unique. */
  index: number;
  history: PhaseHistory | undefined;
  clusterUnreachable: readonly Span[];
}

/** One phase's timeline: status segments and cluster outages, already clipped to the range. */
interface Timeline {
  label: string;
  index: number;
  segments: readonly { status: StatusInterval; from: number; to: number }[];
  outages: readonly Span[];
}

function renderPhase(section: PhaseSection, range: Span): string {
  const { phase, index, history, clusterUnreachable } = section;
  const { from, to } = range;
  const label = `${phase.cluster}/${phase.namespace}/${phase.name}`;
  const intervals = history === undefined ? [] : normaliseIntervals(history.statusIntervals, to, `phase ${phase.id}`);
  const segments = intervals
    .map((interval) => ({ status: interval.item, from: Math.max(interval.from, from), to: Math.min(interval.to, to) }))
    .filter((segment) => segment.to > segment.from);
  const outages = clusterUnreachable
    .map((span) => ({ from: Math.max(span.from, from), to: Math.min(span.to, to) }))
    .filter((span) => span.to > span.from);
  return [
    `<section class="phase">`,
    `<h2>${escapeHtml(label)}</h2>`,
    htmlTable(
      ['Source', 'Availability', 'Observed', 'Unreachable', 'Unobserved', 'Failures', 'Failed at start', 'Incidents', 'Mean time to recover', 'Longest recovery', 'Not recovered since', 'Status changes', 'Flapping'],
      [[
        phase.source, formatPercent(phase.availability), formatDuration(phase.observedMs), formatDuration(phase.unreachableMs),
        formatDuration(phase.unobservedMs), String(phase.failures), phase.failedAtStart ? 'yes' : 'no',
        String(phase.recovery.incidents.length), formatDuration(phase.recovery.meanTimeToRecoverMs),
        formatDuration(phase.recovery.longestTimeToRecoverMs),
        phase.recovery.openIncident === null ? '' : formatTime(phase.recovery.openIncident.since),
        String(phase.statusChanges), phase.flapping ? `yes (${phase.maxChangesInAnHour} in an hour)` : 'no',
      ]],
    ),
    renderTimeline({ label, index, segments, outages }, range),
    renderLegend(phase, segments.map((segment) => segment.status.status), segments.some((s) => s.status.stale) || outages.length > 0),
    renderIncidents(phase),
    renderManifestChanges(phase),
    '</section>',
  ].join('\n');
}

function renderTimeline(timeline: Timeline, range: Span): string {
  const { label, index, segments, outages } = timeline;
  const { from, to } = range;
  const span = to - from;
  const x = (at: number): number => (span > 0 ? round(((at - from) / span) * WIDTH) : 0);
  const hatch = `hatch-${index}`;
  const parts = segments.map((segment) => {
    const status = segment.status.status;
    const left = x(segment.from);
    const width = round(x(segment.to) - left);
    const stale = segment.status.stale ? ' (stale: cluster not readable, last known status)' : '';
    const tip = `${status}, from ${formatTime(new Date(segment.from))} to ${formatTime(new Date(segment.to))}${stale}`;
    const text = width >= status.length * CHAR_WIDTH + 8
      ? `<text x="${round(left + width / 2)}" y="${BAR_HEIGHT / 2 + 4}" text-anchor="middle" font-size="12" fill="${TEXT_COLOURS[status]}">${status}</text>`
      : '';
    const overlay = segment.status.stale ? `<rect x="${left}" y="0" width="${width}" height="${BAR_HEIGHT}" fill="url(#${hatch})"/>` : '';
    return `<g class="seg" data-status="${status}"><title>${escapeHtml(tip)}</title><rect x="${left}" y="0" width="${width}" height="${BAR_HEIGHT}" fill="${STATUS_COLOURS[status]}"/>${overlay}${text}</g>`;
  });
  const hatched = outages.map((outage) => {
    const left = x(outage.from);
    const tip = `cluster unreachable, from ${formatTime(new Date(outage.from))} to ${formatTime(new Date(outage.to))}`;
    return `<rect class="unreachable" x="${left}" y="0" width="${round(x(outage.to) - left)}" height="${BAR_HEIGHT}" fill="url(#${hatch})"><title>${escapeHtml(tip)}</title></rect>`;
  });
  return [
    `<svg class="timeline" viewBox="0 0 ${WIDTH} ${BAR_HEIGHT + 18}" role="img" aria-label="${escapeHtml(`Status timeline of ${label}`)}">`,
    `<defs><pattern id="${hatch}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#000000" stroke-opacity="0.45" stroke-width="3"/></pattern></defs>`,
    `<rect x="0" y="0" width="${WIDTH}" height="${BAR_HEIGHT}" fill="#ffffff" stroke="#bbbbbb"/>`,
    ...parts,
    ...hatched,
    `<text x="0" y="${BAR_HEIGHT + 14}" font-size="11" fill="#333333">${escapeHtml(formatTime(new Date(from)))}</text>`,
    `<text x="${WIDTH}" y="${BAR_HEIGHT + 14}" font-size="11" fill="#333333" text-anchor="end">${escapeHtml(formatTime(new Date(to)))}</text>`,
    '</svg>',
  ].join('\n');
}

function renderLegend(phase: PhaseAudit, shown: readonly ResourceStatus[], hasHatched: boolean): string {
  const items = RESOURCE_STATUSES_IN_REPORT.filter((status) => shown.includes(status)).map(
    (status) =>
      `<li><span class="swatch" style="background:${STATUS_COLOURS[status]}"></span>${status} ${escapeHtml(formatDuration(phase.timeInStatus[status]))}</li>`,
  );
  if (hasHatched) {
    items.push(`<li><span class="swatch hatched"></span>Unreachable (hatched) ${escapeHtml(formatDuration(phase.unreachableMs))}</li>`);
  }
  return `<ul class="legend">${items.join('')}</ul>`;
}

function renderIncidents(phase: PhaseAudit): string {
  if (phase.recovery.incidents.length === 0) return '';
  return `<h3>Incidents (left Current in the range)</h3>\n${htmlTable(
    ['Left Current', 'Current again', 'Duration', 'Reached Failed'],
    phase.recovery.incidents.map((incident) => [
      formatTime(incident.from), incident.to === null ? 'not by range end' : formatTime(incident.to),
      formatDuration(incident.durationMs), incident.reachedFailed ? 'yes' : 'no',
    ]),
  )}`;
}

function renderManifestChanges(phase: PhaseAudit): string {
  if (phase.manifestChanges.length === 0) return '<p>No manifest changes in the range.</p>';
  const list = (keys: readonly string[]): string => keys.join(', ');
  return `<h3>Manifest changes</h3>\n${htmlTable(
    ['At', 'Added', 'Removed', 'Revisions changed'],
    phase.manifestChanges.map((change) => [formatTime(change.at), list(change.added), list(change.removed), list(change.revisionsChanged)]),
  )}`;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
