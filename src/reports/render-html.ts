/**
 * The report as one self-contained HTML file: inline CSS, no scripts, no external fonts or URLs.
 * Phases come worst first. Each gets an inline SVG status timeline with one segment per status
 * interval in the range; stale intervals and the cluster's unreachable periods are hatched; manifest
 * changes are marked above the bar (a filled triangle for a new manifest version, a hollow one for
 * member revision changes alone); a UTC time axis with round ticks runs below it. Every segment and
 * marker carries a `<title>` (a segment's names the resource behind a non-Current status and its
 * message) and, when wide enough, a segment shows its status as text; a legend under each timeline
 * repeats the colour swatch with the status word, so colour is never the only cue.
 */
import type { ResourceStatus } from '../status/types.ts';
import { formatDuration, formatTime } from './format.ts';
import { normaliseIntervals } from './intervals.ts';
import type { Span } from './intervals.ts';
import { RESOURCE_STATUSES_IN_REPORT } from './statuses.ts';
import {
  causeCells,
  clustersTable,
  INCIDENT_HEADERS,
  incidentRows,
  MANIFEST_CHANGE_HEADERS,
  manifestChangeKind,
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
import { timeAxisTicks } from './time-axis.ts';
import type {
  AuditedManifestChange,
  AuditInput,
  AuditReport,
  PhaseAudit,
  PhaseHistory,
  StatusInterval,
} from './types.ts';

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
/** Room above the bar for manifest change markers. */
const MARKER_ROW = 14;
const BAR_TOP = MARKER_ROW + 2;
const BAR_HEIGHT = 28;
const BAR_BOTTOM = BAR_TOP + BAR_HEIGHT;
const TICK_LENGTH = 5;
const HEIGHT = BAR_BOTTOM + TICK_LENGTH + 16;
/** Few enough tick labels (up to `MM-DD HH:MM`) not to touch across the 1000-unit width. */
const MAX_TICKS = 9;
/** How far from either end a tick label is anchored to its side instead of centred, so it stays inside. */
const EDGE_LABEL_ROOM = 45;
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
td{white-space:nowrap}td:last-child{white-space:normal}
section.phase{border-top:2px solid #ddd;padding-top:.5rem}
svg.timeline{width:100%;height:auto;display:block}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:1rem;font-size:.875rem}
.swatch{display:inline-block;width:1rem;height:1rem;vertical-align:middle;margin-right:.25rem;border:1px solid #555}
.swatch.hatched{background:repeating-linear-gradient(45deg,#ffffff 0 3px,#555555 3px 6px)}
.marker{font-size:.8rem;margin-right:.25rem;color:#333}
`;

export function renderHtml(report: AuditReport, input: AuditInput): string {
  // The report lists phases worst first, not in the input's order: match the histories by id.
  const byId = new Map(input.phases.map((phase) => [phase.id, phase]));
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
    `<p>Range length ${escapeHtml(formatDuration(report.range.durationMs))}; times in UTC. Availability is the share of observed, reachable time spent Current; time the cluster could not be read is shown hatched and counted apart. Time to restore runs from entering Failed to the next Current; time out of Current runs from leaving Current to the next Current, rollouts included. A phase is flapping when an hour holds more than ${report.flappingChangesPerHour} status changes. Phases are listed worst first.</p>`,
    '<h2>Totals</h2>',
    htmlTable(totalsTable(report)),
    '<h2>Clusters</h2>',
    htmlTable(clustersTable(report.clusters)),
    ...report.phases.map((phase, index) =>
      renderPhase(
        { phase, index, history: byId.get(phase.id), clusterUnreachable: unreachable.get(phase.cluster) ?? [] },
        { from, to },
      ),
    ),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function htmlTable({ headers, rows }: TextTable): string {
  const head = `<tr>${headers.map((header) => `<th>${escapeHtml(header)}</th>`).join('')}</tr>`;
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('\n');
  return `<table>\n<thead>${head}</thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

/** A heading and its table, or nothing when the table has no row. */
function titledTable(title: string, table: TextTable): string {
  return table.rows.length === 0 ? '' : `<h3>${escapeHtml(title)}</h3>\n${htmlTable(table)}`;
}

interface Segment {
  status: StatusInterval;
  from: number;
  to: number;
}

/** What one phase's section shows: its audit, its place in the report, its history and its cluster's outages. */
interface PhaseSection {
  phase: PhaseAudit;
  /** Position in the report, which keeps each timeline's SVG ids unique. */
  index: number;
  history: PhaseHistory | undefined;
  clusterUnreachable: readonly Span[];
}

function renderPhase(section: PhaseSection, range: Span): string {
  const { phase, index, history, clusterUnreachable } = section;
  const { from, to } = range;
  const label = `${phase.cluster}/${phase.namespace}/${phase.name}`;
  const intervals = history === undefined ? [] : normaliseIntervals(history.statusIntervals, to, `phase ${phase.id}`);
  const segments: Segment[] = intervals
    .map((interval) => ({ status: interval.item, from: Math.max(interval.from, from), to: Math.min(interval.to, to) }))
    .filter((segment) => segment.to > segment.from);
  const outages = clusterUnreachable
    .map((span) => ({ from: Math.max(span.from, from), to: Math.min(span.to, to) }))
    .filter((span) => span.to > span.from);
  return [
    `<section class="phase">`,
    `<h2>${escapeHtml(label)}</h2>`,
    htmlTable({ headers: PHASE_FIGURE_HEADERS, rows: [phaseFigures(phase)] }),
    htmlTable({ headers: RECOVERY_HEADERS, rows: [recoveryFigures(phase)] }),
    renderTimeline({ label, index, segments, outages, changes: phase.manifestChanges, from, to }),
    renderLegend(phase, segments, segments.some((s) => s.status.stale) || outages.length > 0),
    titledTable('Restores from Failed (entered Failed in the range)', {
      headers: RESTORE_HEADERS,
      rows: restoreRows(phase),
    }),
    titledTable('Incidents (left Current in the range)', { headers: INCIDENT_HEADERS, rows: incidentRows(phase) }),
    phase.manifestChanges.length === 0
      ? '<p>No manifest changes in the range.</p>'
      : titledTable('Manifest changes', { headers: MANIFEST_CHANGE_HEADERS, rows: manifestChangeRows(phase) }),
    '</section>',
  ].join('\n');
}

/** One phase's timeline: status segments, cluster outages and manifest changes, already clipped to the range. */
interface TimelineParts {
  label: string;
  index: number;
  segments: readonly Segment[];
  outages: readonly Span[];
  changes: readonly AuditedManifestChange[];
  from: number;
  to: number;
}

function renderTimeline({ label, index, segments, outages, changes, from, to }: TimelineParts): string {
  const span = to - from;
  const x = (at: number): number => (span > 0 ? round(((at - from) / span) * WIDTH) : 0);
  const hatch = `hatch-${index}`;
  const parts = segments.map((segment) => {
    const status = segment.status.status;
    const left = x(segment.from);
    const width = round(x(segment.to) - left);
    const text =
      width >= status.length * CHAR_WIDTH + 8
        ? `<text x="${round(left + width / 2)}" y="${BAR_TOP + BAR_HEIGHT / 2 + 4}" text-anchor="middle" font-size="12" fill="${TEXT_COLOURS[status]}">${status}</text>`
        : '';
    const overlay = segment.status.stale
      ? `<rect x="${left}" y="${BAR_TOP}" width="${width}" height="${BAR_HEIGHT}" fill="url(#${hatch})"/>`
      : '';
    return `<g class="seg" data-status="${status}"><title>${escapeHtml(segmentTip(segment))}</title><rect x="${left}" y="${BAR_TOP}" width="${width}" height="${BAR_HEIGHT}" fill="${STATUS_COLOURS[status]}"/>${overlay}${text}</g>`;
  });
  const hatched = outages.map((outage) => {
    const left = x(outage.from);
    const tip = `cluster unreachable, from ${formatTime(new Date(outage.from))} to ${formatTime(new Date(outage.to))}`;
    return `<rect class="unreachable" x="${left}" y="${BAR_TOP}" width="${round(x(outage.to) - left)}" height="${BAR_HEIGHT}" fill="url(#${hatch})"><title>${escapeHtml(tip)}</title></rect>`;
  });
  return [
    `<svg class="timeline" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(`Status timeline of ${label}`)}">`,
    `<defs><pattern id="${hatch}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#000000" stroke-opacity="0.45" stroke-width="3"/></pattern></defs>`,
    `<rect x="0" y="${BAR_TOP}" width="${WIDTH}" height="${BAR_HEIGHT}" fill="#ffffff" stroke="#bbbbbb"/>`,
    ...parts,
    ...hatched,
    ...groupChanges(changes, x).map(renderChangeMarker),
    renderAxis(from, to, x),
    '</svg>',
  ].join('\n');
}

/** Status and times; for a status other than Current, the resource behind it and its message. */
function segmentTip(segment: Segment): string {
  const { status, stale, cause } = segment.status;
  const stalePart = stale ? ' (stale: cluster not readable, last known status)' : '';
  const [resource, message] = causeCells(status === 'Current' ? null : (cause ?? null));
  const causePart = resource === '' ? '' : `\ncaused by ${resource}${message === '' ? '' : `: ${message}`}`;
  return `${status}, from ${formatTime(new Date(segment.from))} to ${formatTime(new Date(segment.to))}${stalePart}${causePart}`;
}

/** Changes drawn as one marker: those closer together than a marker is wide, at the first one's place. */
interface ChangeGroup {
  at: number;
  changes: AuditedManifestChange[];
}

/** How close (in timeline units) two markers may be before they are drawn as one. */
const MARKER_WIDTH = 12;

/** Groups the changes (in time order) whose markers would overlap, so none hides another. */
function groupChanges(changes: readonly AuditedManifestChange[], x: (at: number) => number): ChangeGroup[] {
  const groups: ChangeGroup[] = [];
  for (const change of changes) {
    const at = x(change.at.getTime());
    const last = groups[groups.length - 1];
    if (last !== undefined && at - last.at < MARKER_WIDTH) last.changes.push(change);
    else groups.push({ at, changes: [change] });
  }
  return groups;
}

function describeChange(change: AuditedManifestChange): string {
  const lines = [`${manifestChangeKind(change)} at ${formatTime(change.at)}`];
  if (change.added.length > 0) lines.push(`added: ${change.added.join(', ')}`);
  if (change.removed.length > 0) lines.push(`removed: ${change.removed.join(', ')}`);
  if (change.revisionsChanged.length > 0) lines.push(`revisions changed: ${change.revisionsChanged.join(', ')}`);
  return lines.join('\n');
}

/**
 * A triangle above the bar and a dashed line through it: filled when a new manifest version is
 * among the changes, hollow for member revisions alone; a count beside it when it stands for more
 * than one change, each described in its title.
 */
function renderChangeMarker({ at, changes }: ChangeGroup): string {
  const inventory = changes.some((change) => change.inventoryChanged);
  const fill = inventory ? '#222222' : '#ffffff';
  const points = `${round(at - MARKER_WIDTH / 2)},1 ${round(at + MARKER_WIDTH / 2)},1 ${at},${MARKER_ROW - 1}`;
  const count =
    changes.length > 1
      ? `<text x="${round(at + MARKER_WIDTH / 2 + 2)}" y="${MARKER_ROW - 3}" font-size="10" fill="#222222">${changes.length}</text>`
      : '';
  const title = escapeHtml(changes.map(describeChange).join('\n\n'));
  return `<g class="change" data-kind="${inventory ? 'inventory' : 'revision'}" data-changes="${changes.length}"><title>${title}</title><line x1="${at}" y1="${MARKER_ROW}" x2="${at}" y2="${BAR_BOTTOM}" stroke="#222222" stroke-width="1.5" stroke-dasharray="3 2"/><polygon points="${points}" fill="${fill}" stroke="#222222" stroke-width="1.5"/>${count}</g>`;
}

function renderAxis(from: number, to: number, x: (at: number) => number): string {
  const ticks = timeAxisTicks(from, to, MAX_TICKS).map((tick) => {
    const at = x(tick.at);
    const anchor = at < EDGE_LABEL_ROOM ? 'start' : at > WIDTH - EDGE_LABEL_ROOM ? 'end' : 'middle';
    return `<g class="tick"><line x1="${at}" y1="${BAR_BOTTOM}" x2="${at}" y2="${BAR_BOTTOM + TICK_LENGTH}" stroke="#555555"/><text x="${at}" y="${HEIGHT - 2}" font-size="11" fill="#333333" text-anchor="${anchor}">${escapeHtml(tick.label)}</text></g>`;
  });
  return [
    `<g class="axis"><line x1="0" y1="${BAR_BOTTOM}" x2="${WIDTH}" y2="${BAR_BOTTOM}" stroke="#555555"/>`,
    ...ticks,
    '</g>',
  ].join('\n');
}

function renderLegend(phase: PhaseAudit, segments: readonly Segment[], hasHatched: boolean): string {
  const shown = segments.map((segment) => segment.status.status);
  const items = RESOURCE_STATUSES_IN_REPORT.filter((status) => shown.includes(status)).map(
    (status) =>
      `<li><span class="swatch" style="background:${STATUS_COLOURS[status]}"></span>${status} ${escapeHtml(formatDuration(phase.timeInStatus[status]))}</li>`,
  );
  if (hasHatched) {
    items.push(
      `<li><span class="swatch hatched"></span>Unreachable (hatched) ${escapeHtml(formatDuration(phase.unreachableMs))}</li>`,
    );
  }
  if (phase.inventoryChanges > 0)
    items.push(
      `<li><span class="marker" aria-hidden="true">&#9660;</span>New manifest version ${phase.inventoryChanges}</li>`,
    );
  const revisionOnly = phase.manifestChanges.filter(
    (change) => !change.inventoryChanged && change.revisionsChanged.length > 0,
  ).length;
  if (revisionOnly > 0)
    items.push(`<li><span class="marker" aria-hidden="true">&#9661;</span>Member revisions only ${revisionOnly}</li>`);
  return `<ul class="legend">${items.join('')}</ul>`;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
