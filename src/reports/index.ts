/** phaselog's audit reports: the maths over recorded histories and the renderers. Pure. */
export * from './types.ts';
export { AuditInputError } from './errors.ts';
export type { AuditInputErrorKind } from './errors.ts';
export { computeAuditReport, DEFAULT_FLAPPING_CHANGES_PER_HOUR } from './compute.ts';
export { comparePhasesWorstFirst } from './order.ts';
export { RESOURCE_STATUSES_IN_REPORT } from './statuses.ts';
export { formatDuration, formatPercent, formatTime } from './format.ts';
export { renderJson } from './render-json.ts';
export { csvCell, neutraliseCsvText, quoteCsvField, renderCsv } from './render-csv.ts';
export { escapeMarkdown, renderMarkdown } from './render-markdown.ts';
export { escapeHtml, renderHtml, STATUS_COLOURS } from './render-html.ts';
