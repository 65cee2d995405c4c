/**
 * `phaselog gate <phase> --status Current --for 10m [--condition health=True[:5m]]... [--wait
 * [--timeout 30m]]`, or `phaselog gate --plan <plan> --for 10m [--wait ...]`: exit 0 when the phase has held the status (and each condition its status) for
 * the window, else 1. With `--wait` it keeps asking until the gate passes or
 * the timeout ends (like `kubectl wait`), showing progress on stderr; a server that is briefly
 * unreachable (a restart) does not end the wait.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { parseDuration, formatDuration } from '../../duration.ts';
import { formatRef, isDataFormat, paintStatus, parseCliDuration, renderData } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { displayName, resolvePhase } from '../phase-arg.ts';
import type { PhaseScope, PhaseSummary } from '../phase-arg.ts';

const GATE = `query Gate($phase: PhaseRef!, $status: Status!, $for: Duration!, $conditions: [GateConditionInput!]) {
  gate(phase: $phase, status: $status, for: $for, conditions: $conditions) {
    passed reason message status heldSince remaining lastGoodReadAt staleReason
    blockingResources { group kind namespace name status message }
    conditions { type wanted status outcome heldSince remaining message }
  }
}`;

const PLAN_GATE = `query PlanGate($plan: String!, $for: Duration!) {
  planGate(plan: $plan, for: $for) { passed reason message status heldSince remaining staleReason }
}`;

/** One `--condition type=Status[:window]`, as the API takes it. */
export interface GateConditionArg {
  type: string;
  status: string;
  for?: string;
}

/** Parses `health=True`, `version=True:5m`; the status is True, False or Unknown. */
export function parseConditionArg(value: string): GateConditionArg {
  const match = /^([A-Za-z][A-Za-z0-9._-]*)=(True|False|Unknown)(?::(.+))?$/.exec(value);
  if (match === null)
    throw new CliError(
      `--condition ${JSON.stringify(value)}: expected type=True|False|Unknown[:window], e.g. health=True or version=True:5m`,
      EXIT.usage,
    );
  const [, type, status, window] = match as unknown as [string, string, string, string | undefined];
  return {
    type,
    status,
    ...(window !== undefined ? { for: `${parseCliDuration(window, `--condition ${type}`)}ms` } : {}),
  };
}

/** How often a waiting gate asks again at most; sooner when the window fills earlier. */
const POLL_MS = 5000;

interface Gate {
  passed: boolean;
  reason: string;
  message: string;
  status: string | null;
  heldSince: string | null;
  remaining: string | number | null;
  lastGoodReadAt: string | null;
  staleReason: string | null;
  blockingResources: {
    group: string;
    kind: string;
    namespace: string;
    name: string;
    status: string;
    message: string;
  }[];
  conditions: {
    type: string;
    wanted: string;
    status: string | null;
    outcome: string;
    heldSince: string | null;
    remaining: string | number | null;
    message: string;
  }[];
}

export interface GateOptions extends PhaseScope {
  phase?: string;
  /** `--plan`: gate on a plan (Current, every phase of it) instead of a phase. */
  plan?: string;
  status: string;
  for?: string;
  wait: boolean;
  timeout?: string;
  /** `--condition` values, parsed. @default [] */
  conditions?: GateConditionArg[];
  output: OutputFormat;
}

function remainingMs(gate: Gate): number | undefined {
  if (gate.remaining === null) return undefined;
  return typeof gate.remaining === 'number' ? gate.remaining : parseDuration(gate.remaining);
}

/** What was gated: a phase, or a plan by name. */
type Subject = { phase: PhaseSummary } | { plan: string };

function report(ctx: CommandContext, subject: Subject, gate: Gate, output: OutputFormat, note = ''): void {
  const label = 'plan' in subject ? `plan ${subject.plan}` : displayName(subject.phase);
  if (isDataFormat(output)) {
    const named = 'plan' in subject ? { plan: subject.plan } : { phase: label };
    ctx.out(
      renderData(
        { ...named, ...gate, blockingResources: gate.blockingResources.map((r) => ({ ref: formatRef(r), ...r })) },
        output,
      ),
    );
    return;
  }
  const verdict = gate.passed ? ctx.paint('green', 'PASS') : ctx.paint('red', 'FAIL');
  ctx.out(`${verdict}  ${label}: ${note}${gate.message}\n`);
  for (const r of gate.blockingResources)
    ctx.out(
      `  ${formatRef(r)}: ${paintStatus(r.status, ctx.paint, ctx.decorated)}${r.message ? `: ${r.message}` : ''}\n`,
    );
  for (const c of gate.conditions) {
    const mark = c.outcome === 'HELD' ? ctx.paint('green', 'ok') : ctx.paint('red', c.outcome);
    ctx.out(`  condition ${c.type}=${c.wanted}: ${mark}: ${c.message}\n`);
  }
}

export async function runGate(ctx: CommandContext, options: GateOptions): Promise<number> {
  if (!options.for)
    throw new CliError('gate needs --for, the window the status must have held (e.g. --for 10m)', EXIT.usage);
  const windowMs = parseCliDuration(options.for, '--for');
  if (options.output === 'name' || options.output === 'wide')
    throw new CliError(`-o ${options.output} does not apply to gate (use table, json or yaml)`, EXIT.usage);
  if (options.timeout !== undefined && !options.wait)
    throw new CliError('--timeout bounds --wait: use it with --wait', EXIT.usage);
  const timeoutMs =
    options.timeout === undefined ? windowMs + 15 * 60_000 : parseCliDuration(options.timeout, '--timeout');
  const conditions = options.conditions ?? [];
  let subject: Subject;
  let ask: () => Promise<Gate>;
  if (options.plan !== undefined) {
    if (options.phase !== undefined) throw new CliError('name a phase or --plan, not both', EXIT.usage);
    if (conditions.length > 0 || options.status !== 'Current')
      throw new CliError(
        'a plan gate asks for Current on every phase of the plan: --status and --condition apply to phases only',
        EXIT.usage,
      );
    if (options.cluster !== undefined || options.namespace !== undefined)
      throw new CliError('--cluster and -n narrow a phase name; a plan is named by its name alone', EXIT.usage);
    const plan = options.plan;
    subject = { plan };
    ask = async () => {
      const result = await ctx.api.query<{
        planGate: Omit<Gate, 'lastGoodReadAt' | 'blockingResources' | 'conditions'>;
      }>(PLAN_GATE, { plan, for: `${windowMs}ms` });
      return { ...result.planGate, lastGoodReadAt: null, blockingResources: [], conditions: [] };
    };
  } else {
    if (options.phase === undefined)
      throw new CliError(
        'name a phase (cluster/namespace/name, cluster/name or name) or a plan with --plan <name>',
        EXIT.usage,
      );
    const phase = await resolvePhase(ctx.api, options.phase, options);
    subject = { phase };
    ask = async () =>
      (
        await ctx.api.query<{ gate: Gate }>(GATE, {
          phase: { id: phase.id },
          status: options.status,
          for: `${windowMs}ms`,
          conditions,
        })
      ).gate;
  }
  if (!options.wait) {
    const gate = await ask();
    report(ctx, subject, gate, options.output);
    return gate.passed ? EXIT.ok : EXIT.gateFailed;
  }

  const started = Date.now();
  const deadline = started + timeoutMs;
  const progress = createProgress(ctx);
  let last: Gate | undefined;
  for (;;) {
    try {
      last = await ask();
    } catch (error) {
      // Only an unreachable or failing server is worth waiting out; a wrong name or token is not.
      if (!(error instanceof CliError) || error.exitCode !== EXIT.server) throw error;
      progress.line(`waiting: ${error.message}`, 'unreachable');
    }
    if (last?.passed) {
      progress.done();
      report(ctx, subject, last, options.output);
      return EXIT.ok;
    }
    const left = deadline - Date.now();
    if (left <= 0) break;
    if (last)
      progress.line(
        `waiting (${formatDuration(Date.now() - started)} of at most ${formatDuration(timeoutMs)}): ${last.message}`,
        `${last.reason}/${last.status}`,
      );
    const toFill =
      last?.reason === 'NOT_HELD_LONG_ENOUGH' || last?.reason === 'CONDITION_NOT_HELD' ? remainingMs(last) : undefined;
    await sleep(Math.max(100, Math.min(POLL_MS, left, toFill === undefined ? POLL_MS : toFill + 100)));
  }
  progress.done();
  if (!last) throw new CliError(`gave up after ${formatDuration(timeoutMs)}: the server never answered`, EXIT.server);
  report(ctx, subject, last, options.output, `timed out after ${formatDuration(timeoutMs)}: `);
  return EXIT.gateFailed;
}

/**
 * Progress on stderr: one line redrawn in place on a terminal; elsewhere (CI logs) a new line only
 * when `state` changes, not on every poll.
 */
function createProgress(ctx: CommandContext): { line(text: string, state: string): void; done(): void } {
  let shown: string | undefined;
  return {
    line(text, state) {
      if (ctx.errIsTerminal) ctx.err(`\r\x1b[K${text.slice(0, (process.stderr.columns || 120) - 1)}`);
      else if (state !== shown) ctx.err(`${text}\n`);
      shown = state;
    },
    done() {
      if (ctx.errIsTerminal && shown !== undefined) ctx.err('\r\x1b[K');
    },
  };
}
