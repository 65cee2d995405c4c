import type { AuditReport } from './types.ts';

/**
 * The report as pretty-printed JSON. Dates become RFC 3339 UTC strings (`Date#toJSON`), durations
 * stay milliseconds, percentages stay unrounded, `null` stays `null`.
 */
export function renderJson(report: AuditReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
