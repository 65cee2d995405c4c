/** `phaselog gate <phase> --status Current --for 10m`: exit 0 when the phase held the status, else 1. */
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { parseDuration } from '../../duration.ts';
import { renderData } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { displayName, resolvePhase } from '../phase-arg.ts';

const STATUSES = ['Current', 'InProgress', 'Failed', 'Terminating', 'NotFound', 'Unknown'];

const GATE = `query Gate($phase: PhaseRef!, $status: Status!, $for: Duration!) {
  gate(phase: $phase, status: $status, for: $for) {
    passed reason message status heldSince remaining lastGoodReadAt
    blockingResources { kind namespace name status message }
  }
}`;

interface GateAnswer {
  gate: { passed: boolean; reason: string; message: string; status: string | null; heldSince: string | null; remaining: string | null; blockingResources: { kind: string; namespace: string; name: string; status: string; message: string }[] };
}

export async function runGate(ctx: CommandContext, options: { phase?: string; status: string; for?: string; output: OutputFormat }): Promise<number> {
  if (!STATUSES.includes(options.status)) throw new CliError(`--status must be one of ${STATUSES.join(', ')}`, EXIT.usage);
  if (!options.for || parseDuration(options.for) === undefined) throw new CliError(`--for needs a duration such as 10m or 1h (got ${options.for ?? 'nothing'})`, EXIT.usage);
  const phase = await resolvePhase(ctx.api, options.phase);
  const { gate } = await ctx.api.query<GateAnswer>(GATE, { phase: { id: phase.id }, status: options.status, for: options.for });
  if (options.output !== 'table') ctx.out(renderData({ phase: displayName(phase), ...gate }, options.output));
  else {
    ctx.out(`${gate.passed ? 'PASS' : 'FAIL'}  ${displayName(phase)}: ${gate.message}\n`);
    for (const r of gate.blockingResources) ctx.out(`  ${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}: ${r.status}${r.message ? `: ${r.message}` : ''}\n`);
  }
  return gate.passed ? EXIT.ok : EXIT.gateFailed;
}
