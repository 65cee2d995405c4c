/**
 * Renders harness results: one table per entry (figure, value, ratio to its baseline), as plain text
 * for the terminal or Markdown for BENCHMARKS.md, and the JSON document written to bench/results/.
 */
import { formatValue } from './cli.ts';
import type { MachineInfo } from './machine.ts';
import { formatMarkdownTable, formatTable } from './table.ts';
import type { BenchSize, EntryResult, RatioResult } from './types.ts';

/** The JSON document of one harness run. */
export interface RunReport {
  date: string;
  command: string;
  size: BenchSize;
  machine: MachineInfo;
  totalSeconds: number;
  /** 1-minute load average when the run ended. */
  loadAverageEnd: number;
  entries: EntryResult[];
}

/** A ratio as it reads in a table, e.g. `0.42 × JSON.parse objects/s`. */
export function formatRatio(ratio: RatioResult): string {
  if (ratio.ratio === undefined) {
    const missing =
      ratio.value === undefined
        ? `figure '${ratio.figure}' not reported`
        : `baseline ${ratio.baseline} '${ratio.baselineFigure}' not measured`;
    return `n/a (${missing})`;
  }
  const r = ratio.ratio;
  const digits = r >= 100 ? 0 : r >= 10 ? 1 : r >= 0.1 ? 2 : 4;
  const base =
    ratio.baselineValue === undefined
      ? ''
      : ` (${formatValue(ratio.baselineValue)}${ratio.baselineWhen === 'just before' ? ', measured just before' : ''})`;
  return `${r.toFixed(digits)} ${ratio.label}${base}`;
}

function rowsOf(entry: EntryResult): string[][] {
  const rows: string[][] = [];
  const ratios = new Map((entry.ratios ?? []).map((r) => [r.figure, r]));
  for (const [name, value] of Object.entries(entry.figures ?? {})) {
    const ratio = ratios.get(name);
    rows.push([name, formatValue(value), ratio ? formatRatio(ratio) : '']);
    ratios.delete(name);
  }
  for (const ratio of ratios.values()) rows.push([ratio.figure, '(missing)', formatRatio(ratio)]);
  for (const [name, value] of Object.entries(entry.derived ?? {})) rows.push([`→ ${name}`, formatValue(value), '']);
  return rows;
}

function heading(entry: EntryResult): string {
  const what = entry.kind === 'baseline' ? 'baseline' : 'scenario';
  if (entry.status === 'ok')
    return `${what} ${entry.id}: ${entry.title} (${entry.seconds} s, load ${entry.loadAverage1m ?? '?'})`;
  return `${what} ${entry.id}: ${entry.status}${entry.error ? ` — ${entry.error.split('\n')[0] ?? ''}` : ''}`;
}

/** Plain-text report of every entry. */
export function renderText(report: RunReport): string {
  const parts = [
    `phaselog benchmarks, ${report.date}, size ${report.size}, ${report.totalSeconds} s`,
    describeMachineLine(report),
    '',
  ];
  for (const entry of report.entries) {
    parts.push(heading(entry));
    if (entry.status === 'ok') parts.push(formatTable(['figure', 'value', 'ratio (same run)'], rowsOf(entry)));
    else if (entry.error && entry.status !== 'not built yet')
      parts.push(
        entry.error
          .split('\n')
          .slice(1, 6)
          .map((l) => `    ${l.trim()}`)
          .join('\n'),
      );
    parts.push('');
  }
  return parts.join('\n');
}

/** Markdown report of every entry (headings, one table each, not-built entries listed at the end). */
export function renderMarkdown(report: RunReport): string {
  const parts = [
    `Measured ${report.date} with \`${report.command}\` (size ${report.size}, ${report.totalSeconds} s). ${describeMachineLine(report)}`,
    '',
  ];
  for (const entry of report.entries.filter((e) => e.status === 'ok')) {
    parts.push(`### ${entry.kind === 'baseline' ? 'Baseline' : 'Scenario'} \`${entry.id}\`: ${entry.title}`, '');
    parts.push(formatMarkdownTable(['figure', 'value', 'ratio (same run)'], rowsOf(entry)), '');
  }
  const others = report.entries.filter((e) => e.status !== 'ok');
  if (others.length > 0) {
    parts.push('### Not measured in this run', '');
    for (const e of others)
      parts.push(`- \`${e.id}\` (${e.file}): ${e.status}${e.error ? ` — ${e.error.split('\n')[0] ?? ''}` : ''}`);
    parts.push('');
  }
  return parts.join('\n');
}

function describeMachineLine(report: RunReport): string {
  const m = report.machine;
  return `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}, load average ${m.loadAverage1m} at start, ${report.loadAverageEnd} at the end.`;
}
