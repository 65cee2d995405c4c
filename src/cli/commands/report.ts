/**
 * `phaselog report --from T [--to T] [--format json|csv|markdown|html] [--out FILE]`: an audit report
 * over recorded history, computed by the server (GraphQL `auditReport`). On a terminal, a progress
 * line on stderr shows the time spent while the server works through a long range.
 */
import { writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { parseTime } from '../format.ts';

const FORMATS = ['json', 'csv', 'markdown', 'html'] as const;

const REPORT = `query Report($from: DateTime!, $to: DateTime, $filter: AuditFilter, $format: ReportFormat) {
  auditReport(from: $from, to: $to, filter: $filter, format: $format) { format contentType content totals { phases failures restored incidents } }
}`;

export interface ReportOptions {
  from?: string;
  to?: string;
  format?: string;
  out?: string;
  clusters: string[];
  namespaces: string[];
  phases: string[];
}

function startProgress(label: string): () => void {
  if (!process.stderr.isTTY) return () => {};
  const started = Date.now();
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let n = 0;
  const timer = setInterval(() => {
    process.stderr.write(`\r${frames[n++ % frames.length]} ${label} ${((Date.now() - started) / 1000).toFixed(1)}s`);
  }, 100);
  return () => {
    clearInterval(timer);
    process.stderr.write('\r\x1b[K');
  };
}

const EXTENSIONS: Record<string, (typeof FORMATS)[number]> = {
  '.json': 'json',
  '.csv': 'csv',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.html': 'html',
  '.htm': 'html',
};

/** The format a file name asks for; a name that asks for none phaselog writes is refused, not filled with JSON. */
function formatOfFile(out: string | undefined): (typeof FORMATS)[number] {
  if (out === undefined) return 'json';
  const extension = extname(out).toLowerCase();
  const format = EXTENSIONS[extension];
  if (format) return format;
  throw new CliError(
    `cannot tell the report format from "${out}": name a .json, .csv, .md or .html file, or give --format`,
    EXIT.usage,
  );
}

export async function runReport(ctx: CommandContext, options: ReportOptions): Promise<number> {
  if (!options.from) throw new CliError('report needs --from (e.g. --from 30d, --from 2026-10-01)', EXIT.usage);
  const format = (options.format ?? formatOfFile(options.out)) as (typeof FORMATS)[number];
  if (!FORMATS.includes(format)) throw new CliError(`--format must be one of ${FORMATS.join(', ')}`, EXIT.usage);
  const now = ctx.now();
  const from = parseTime(options.from, now);
  const to = options.to ? parseTime(options.to, now) : now;
  if (to <= from) throw new CliError('--to must be after --from', EXIT.usage);
  const stop = startProgress(`computing the report for ${from.toISOString()} to ${to.toISOString()}`);
  let answer;
  try {
    answer = await ctx.api.query<{
      auditReport: {
        content: string;
        totals: { phases: number; failures: number; restored: number; incidents: number };
      };
    }>(REPORT, {
      from: from.toISOString(),
      to: to.toISOString(),
      format: format.toUpperCase(),
      filter: { clusters: options.clusters, namespaces: options.namespaces, phases: options.phases },
    });
  } finally {
    stop();
  }
  if (options.out) {
    writeFileSync(options.out, answer.auditReport.content);
    const { totals } = answer.auditReport;
    process.stderr.write(
      `wrote ${format} report on ${totals.phases} phases to ${options.out}: ${totals.failures} failures (${totals.restored} restored), ${totals.incidents} departures from Current\n`,
    );
  } else
    ctx.out(answer.auditReport.content.endsWith('\n') ? answer.auditReport.content : `${answer.auditReport.content}\n`);
  return EXIT.ok;
}
