/**
 * `phaselog plan list|status|history`: phase plans (ordered lists of phases, from phaselog.yaml or
 * `phaselog.dev/plan` labels) as the API derives them: where the plan is, each phase in order with
 * its step number, and the plan's status intervals.
 */
import type { CommandContext } from '../context.ts';
import { staleNote } from './status.ts';
import { formatDuration } from '../../duration.ts';
import { CliError, EXIT } from '../errors.ts';
import { formatAgo, isDataFormat, paintStatus, parseTime, renderData, renderList, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import type { StatusCounts } from '../../graphql/answers.ts';

const COUNTS = 'summary { current inProgress failed terminating notFound unknown total }';
const PLAN = `query Plan($name: String!) {
  plan(name: $name) {
    name source status step stepCount message stale staleReason warnings
    phases { step ref status message phase { id cluster namespace name source since lastGoodReadAt stale staleReason ${COUNTS} } }
  }
}`;
const PLANS = '{ plans { name source status step stepCount message stale staleReason } }';
const HISTORY = `query PlanHistory($name: String!, $from: DateTime!, $to: DateTime) {
  plan(name: $name) { history(from: $from, to: $to, first: 100) { status step stepCount message stale staleReason from to } }
}`;

interface PlanHead {
  name: string;
  source: string;
  status: string;
  step: number | null;
  stepCount: number;
  message: string;
  stale: boolean;
  staleReason: string | null;
}

interface PlanView extends PlanHead {
  warnings: string[];
  phases: {
    step: number;
    ref: string;
    status: string;
    message: string;
    phase: {
      id: string;
      cluster: string;
      namespace: string;
      name: string;
      source: string;
      since: string | null;
      lastGoodReadAt: string | null;
      stale: boolean;
      staleReason: string | null;
      summary: StatusCounts;
    } | null;
  }[];
}

interface PlanInterval {
  status: string;
  step: number | null;
  stepCount: number;
  message: string;
  stale: boolean;
  staleReason: string | null;
  from: string;
  to: string | null;
}

/** The formats `plan status` prints: kubectl's, and `summary` (resource counts per phase). */
export const PLAN_STATUS_FORMATS = ['table', 'wide', 'json', 'yaml', 'summary'] as const;
export type PlanStatusOutput = (typeof PLAN_STATUS_FORMATS)[number];

export interface PlanStatusOptions {
  plan: string;
  output: PlanStatusOutput;
  headers: boolean;
}

async function readPlan(ctx: CommandContext, name: string): Promise<PlanView> {
  const { plan } = await ctx.api.query<{ plan: PlanView | null }>(PLAN, { name });
  if (plan === null) throw new CliError(`no plan "${name}"; \`phaselog plan list\` lists them`, EXIT.notFound);
  return plan;
}

/** `site-prod: ◐ InProgress (step 2 of 3): at step 2 of 3: ...` */
function headLine(ctx: CommandContext, plan: PlanHead): string {
  const where =
    plan.step === null ? `${plan.stepCount} of ${plan.stepCount}` : `step ${plan.step} of ${plan.stepCount}`;
  return `${plan.name}: ${paintStatus(plan.status, ctx.paint, ctx.decorated, staleNote(plan))} (${where}): ${plan.message}\n`;
}

export async function runPlanStatus(ctx: CommandContext, options: PlanStatusOptions): Promise<number> {
  const plan = await readPlan(ctx, options.plan);
  for (const warning of plan.warnings) ctx.err(`warning: plan ${plan.name}: ${warning}\n`);
  if (isDataFormat(options.output)) {
    ctx.out(renderData({ kind: 'Plan', ...plan }, options.output));
    return EXIT.ok;
  }
  const now = ctx.now();
  ctx.out(headLine(ctx, plan));
  const status = (p: PlanView['phases'][number]) =>
    paintStatus(p.status, ctx.paint, ctx.decorated, p.phase ? staleNote(p.phase) : '');
  if (options.output === 'summary') {
    const rows = plan.phases.map((p) => {
      const c = p.phase?.summary;
      const counts = c
        ? [c.current, c.inProgress, c.failed, c.terminating, c.notFound, c.unknown, c.total].map(String)
        : ['-', '-', '-', '-', '-', '-', '-'];
      return [String(p.step), p.ref, status(p), ...counts];
    });
    ctx.out(
      renderTable(
        ['STEP', 'PHASE', 'STATUS', 'CURRENT', 'INPROGRESS', 'FAILED', 'TERMINATING', 'NOTFOUND', 'UNKNOWN', 'TOTAL'],
        rows,
        { headers: options.headers },
      ),
    );
    return EXIT.ok;
  }
  const wide = options.output === 'wide';
  const rows = plan.phases.map((p) => {
    const since = formatAgo(p.phase?.since, now);
    const ready = p.phase ? `${p.phase.summary.current}/${p.phase.summary.total}` : '-';
    return wide
      ? [
          String(p.step),
          p.ref,
          status(p),
          since,
          ready,
          p.phase?.source ?? '-',
          formatAgo(p.phase?.lastGoodReadAt, now),
          p.message,
        ]
      : [String(p.step), p.ref, status(p), since, ready, p.message];
  });
  ctx.out(
    renderTable(
      wide
        ? ['STEP', 'PHASE', 'STATUS', 'SINCE', 'READY', 'SOURCE', 'LAST READ', 'MESSAGE']
        : ['STEP', 'PHASE', 'STATUS', 'SINCE', 'READY', 'MESSAGE'],
      rows,
      { headers: options.headers },
    ),
  );
  return EXIT.ok;
}

export interface PlanListOptions {
  output: OutputFormat;
  headers: boolean;
}

export async function runPlanList(ctx: CommandContext, options: PlanListOptions): Promise<number> {
  const { plans } = await ctx.api.query<{ plans: PlanHead[] }>(PLANS);
  if (options.output === 'name') {
    ctx.out(plans.map((p) => `${p.name}\n`).join(''));
    return EXIT.ok;
  }
  if (isDataFormat(options.output)) {
    ctx.out(
      renderList(
        plans.map((p) => ({ kind: 'Plan', ...p })),
        options.output,
      ),
    );
    return EXIT.ok;
  }
  const wide = options.output === 'wide';
  const rows = plans.map((p) => {
    const step = p.step === null ? `${p.stepCount}/${p.stepCount}` : `${p.step}/${p.stepCount}`;
    const row = [p.name, paintStatus(p.status, ctx.paint, ctx.decorated, staleNote(p)), step];
    return wide ? [...row, p.source, p.message] : [...row, p.message];
  });
  ctx.out(
    renderTable(wide ? ['NAME', 'STATUS', 'STEP', 'SOURCE', 'MESSAGE'] : ['NAME', 'STATUS', 'STEP', 'MESSAGE'], rows, {
      headers: options.headers,
    }),
  );
  return EXIT.ok;
}

export interface PlanHistoryOptions {
  plan: string;
  from?: string;
  to?: string;
  output: OutputFormat;
  headers: boolean;
}

export async function runPlanHistory(ctx: CommandContext, options: PlanHistoryOptions): Promise<number> {
  if (options.output === 'name')
    throw new CliError('-o name lists plans (phaselog plan list -o name); history has no names to print', EXIT.usage);
  const now = ctx.now();
  let from = parseTime(options.from ?? '7d', now);
  const to = options.to ? parseTime(options.to, now) : undefined;
  if (to && to <= from) throw new CliError('--to must be after --from', EXIT.usage);
  // Pages of 100: the next starts where the last interval of the page before ended.
  const intervals: PlanInterval[] = [];
  for (;;) {
    const { plan } = await ctx.api.query<{ plan: { history: PlanInterval[] } | null }>(HISTORY, {
      name: options.plan,
      from: from.toISOString(),
      to: to?.toISOString() ?? null,
    });
    if (plan === null)
      throw new CliError(`no plan "${options.plan}"; \`phaselog plan list\` lists them`, EXIT.notFound);
    const page = plan.history;
    const last = page[page.length - 1];
    intervals.push(...page);
    if (page.length < 100 || last?.to == null || (to !== undefined && Date.parse(last.to) >= to.getTime())) break;
    from = new Date(last.to);
  }
  if (isDataFormat(options.output)) {
    ctx.out(
      renderList(
        intervals.map((i) => ({ kind: 'PlanInterval', ...i })),
        options.output,
      ),
    );
    return EXIT.ok;
  }
  const wide = options.output === 'wide';
  const rows = intervals.map((i) => {
    const duration = formatDuration((i.to ? Date.parse(i.to) : now.getTime()) - Date.parse(i.from));
    const step = i.step === null ? `${i.stepCount}/${i.stepCount}` : `${i.step}/${i.stepCount}`;
    const row = [
      formatAgo(i.from, now),
      i.to ? formatAgo(i.to, now) : 'now',
      duration,
      paintStatus(i.status, ctx.paint, ctx.decorated, staleNote(i)),
      step,
    ];
    return wide ? [...row, i.from, i.to ?? '-', i.message] : [...row, i.message];
  });
  ctx.out(
    renderTable(
      wide
        ? ['FROM', 'TO', 'DURATION', 'STATUS', 'STEP', 'START', 'END', 'MESSAGE']
        : ['FROM', 'TO', 'DURATION', 'STATUS', 'STEP', 'MESSAGE'],
      rows,
      { headers: options.headers },
    ),
  );
  return EXIT.ok;
}
