/** `phaselog status [phase] [-o table|json|yaml] [--watch]`: phases now, like `flux get`. */
import type { CommandContext } from '../context.ts';
import { formatAgo, renderData, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { displayName, resolvePhase } from '../phase-arg.ts';
import { CliError } from '../errors.ts';

interface PhaseRow {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  source: string;
  status: string | null;
  message: string;
  since: string | null;
  stale: boolean;
  staleReason: string | null;
  lastGoodReadAt: string | null;
  summary: Record<string, number>;
}

const PHASE_FIELDS = 'id cluster namespace name source status message since stale staleReason lastGoodReadAt summary { current inProgress failed terminating notFound unknown total }';

const LIST = `query Phases($filter: PhaseFilter, $after: String) {
  phases(filter: $filter, first: 100, after: $after) { edges { node { ${PHASE_FIELDS} } } pageInfo { hasNextPage endCursor } }
}`;

const ONE = `query Phase($id: ID!) {
  phase(id: $id) {
    ${PHASE_FIELDS}
    resources(first: 100) { edges { node { kind namespace name status reason message since } } }
  }
}`;

const WATCH = `subscription Watch($filter: StatusChangeFilter) {
  phaseStatusChanged(filter: $filter) { seq at cluster phase { namespace name } fromStatus toStatus message }
}`;

/** ` (stale)` for an unreachable cluster, ` (unobserved)` or ` (retired)` for a cluster nobody reads. */
export function staleNote(p: { stale: boolean; staleReason?: string | null }): string {
  if (!p.stale) return '';
  return p.staleReason === 'UNOBSERVED' ? ' (unobserved)' : p.staleReason === 'RETIRED' ? ' (retired)' : ' (stale)';
}

function statusCell(p: PhaseRow): string {
  return `${p.status ?? '-'}${staleNote(p)}`;
}

export interface StatusOptions {
  phase?: string;
  output: OutputFormat;
  watch: boolean;
  cluster?: string;
}

export async function runStatus(ctx: CommandContext, options: StatusOptions): Promise<number> {
  const now = ctx.now();
  if (options.phase) {
    const found = await resolvePhase(ctx.api, options.phase);
    const data = await ctx.api.query<{ phase: (PhaseRow & { resources: { edges: { node: Record<string, string | null> }[] } }) | null }>(ONE, { id: found.id });
    if (!data.phase) throw new CliError(`phase ${displayName(found)} disappeared`, 4);
    const phase = data.phase;
    if (options.output !== 'table') ctx.out(renderData(phase, options.output));
    else {
      ctx.out(renderTable(['NAME', 'CLUSTER', 'STATUS', 'SINCE', 'MESSAGE'], [[`${phase.namespace}/${phase.name}`, phase.cluster, statusCell(phase), formatAgo(phase.since, now), phase.message]]));
      ctx.out('\n');
      ctx.out(
        renderTable(
          ['RESOURCE', 'STATUS', 'SINCE', 'MESSAGE'],
          phase.resources.edges.map(({ node: r }) => [`${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`, `${r.status}${r.reason && r.status === 'Unknown' ? ` (${r.reason})` : ''}`, formatAgo(r.since, now), r.message ?? '']),
        ),
      );
    }
    if (options.watch) return watch(ctx, { phaseId: found.id });
    return 0;
  }

  const rows: PhaseRow[] = [];
  let after: string | null = null;
  do {
    const page: { phases: { edges: { node: PhaseRow }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await ctx.api.query(LIST, {
      filter: options.cluster ? { cluster: options.cluster } : {},
      after,
    });
    rows.push(...page.phases.edges.map((e) => e.node));
    after = page.phases.pageInfo.hasNextPage ? page.phases.pageInfo.endCursor : null;
  } while (after);
  if (options.output !== 'table') ctx.out(renderData(rows, options.output));
  else if (rows.length === 0) ctx.out('no phases recorded yet\n');
  else ctx.out(renderTable(['NAME', 'CLUSTER', 'STATUS', 'SINCE', 'MESSAGE'], rows.map((p) => [`${p.namespace}/${p.name}`, p.cluster, statusCell(p), formatAgo(p.since, now), p.message])));
  if (options.watch) return watch(ctx, options.cluster ? { cluster: options.cluster } : {});
  return 0;
}

interface ChangeEvent {
  phaseStatusChanged: { seq: string; at: string; cluster: string; phase: { namespace: string; name: string } | null; fromStatus: string | null; toStatus: string | null; message: string };
}

/** Print each phase status change as it happens, until Ctrl-C. */
function watch(ctx: CommandContext, filter: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const stop = ctx.api.subscribe<ChangeEvent>(
      WATCH,
      { filter },
      ({ phaseStatusChanged: c }) => {
        const name = c.phase ? `${c.phase.namespace}/${c.phase.name}` : '-';
        ctx.out(`${c.at}  ${c.cluster}  ${name}  ${c.fromStatus ?? '-'} -> ${c.toStatus ?? '-'}  ${c.message}\n`);
      },
      (error) => {
        process.stderr.write(`phaselog: ${error.message}\n`);
        resolve(error.exitCode);
      },
    );
    const finish = () => {
      stop();
      resolve(0);
    };
    process.once('SIGINT', finish);
    process.once('SIGTERM', finish);
  });
}
