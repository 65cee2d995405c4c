/**
 * Audit reports over stored history: read the range, compute the figures (pure, src/reports) and
 * render them in the format asked for.
 */
import { computeAuditReport, renderCsv, renderHtml, renderJson, renderMarkdown } from '../reports/index.ts';
import type { AuditReport } from '../reports/index.ts';
import { readAuditInput } from '../store/read-audit.ts';
import type { AuditSelection } from '../store/read-audit.ts';
import type { AccessScope } from '../store/read-types.ts';
import type { Db } from '../store/db.ts';

export type ReportFormat = 'json' | 'csv' | 'markdown' | 'html';

export const REPORT_FORMATS: readonly ReportFormat[] = ['json', 'csv', 'markdown', 'html'];

export interface RenderedReport {
  format: ReportFormat;
  contentType: string;
  content: string;
  report: AuditReport;
}

const CONTENT_TYPES: Record<ReportFormat, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
};

/** Compute and render an audit report for [from, to). A `to` in the future is cut to `now`. */
export async function createAuditReport(
  db: Db,
  request: { from: Date; to: Date; selection: AuditSelection; access: AccessScope; format: ReportFormat; now: Date },
): Promise<RenderedReport> {
  const to = request.to > request.now ? request.now : request.to;
  const input = await readAuditInput(db, { from: request.from, to }, request.selection, request.access);
  const report = computeAuditReport(input);
  const render = {
    json: () => renderJson(report),
    csv: () => renderCsv(report),
    markdown: () => renderMarkdown(report),
    html: () => renderHtml(report, input),
  };
  return {
    format: request.format,
    contentType: CONTENT_TYPES[request.format],
    content: render[request.format](),
    report,
  };
}
