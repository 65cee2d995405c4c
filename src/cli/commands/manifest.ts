/**
 * `phaselog manifest <phase> [--at TIME] [--diff]`: what the phase's inventory listed, and how it
 * changed: with --diff, each version's added, removed and revised members with the unified diff of
 * their stored (redacted) revisions (render-diff.ts).
 */
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { formatAgo, isDataFormat, parseTime, renderData, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { displayName, resolvePhase } from '../phase-arg.ts';
import type { PhaseScope } from '../phase-arg.ts';
import { renderManifestDiff, type DiffVersion } from '../render-diff.ts';

interface Entry {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  version: string | null;
}

const AT = `query Manifest($id: ID!, $at: DateTime) {
  phase(id: $id) { manifest(at: $at) { hash from to entryCount entries { group kind namespace name version } } }
}`;

const VERSIONS = `query Manifests($id: ID!, $context: Int) {
  phase(id: $id) { manifests(first: 20) { edges { node {
    manifest { hash from to entryCount } previousHash
    changes { key group kind namespace name change withheld before { hash at } after { hash at } diff(context: $context) }
  } } } }
}`;

/** Options of {@link runManifest}. */
export interface ManifestOptions extends PhaseScope {
  phase?: string;
  at?: string;
  diff: boolean;
  output: OutputFormat;
  /** ANSI colours in the --diff text. @default the context's choice (a terminal and no NO_COLOR) */
  color?: boolean;
  /** Lines of context around each change in --diff, 0 to 1000 (the API refuses others). @default 3 */
  context?: number;
  /** Print the table's header lines. @default true */
  headers?: boolean;
}

export async function runManifest(ctx: CommandContext, options: ManifestOptions): Promise<number> {
  const phase = await resolvePhase(ctx.api, options.phase, options);
  if (options.diff) {
    // `changes` holds what added, removed and revisionsChanged list, with content: asking for those too would double the query's cost.
    const data = await ctx.api.query<{ phase: { manifests: { edges: { node: DiffVersion }[] } } | null }>(VERSIONS, {
      id: phase.id,
      context: options.context ?? 3,
    });
    const versions = data.phase?.manifests.edges.map((e) => e.node) ?? [];
    if (isDataFormat(options.output)) ctx.out(renderData(versions, options.output));
    else ctx.out(renderManifestDiff(versions, { color: options.color ?? ctx.decorated }));
    return 0;
  }
  const at = options.at ? parseTime(options.at, ctx.now()).toISOString() : null;
  const data = await ctx.api.query<{
    phase: { manifest: { hash: string; from: string; to: string | null; entries: Entry[] } | null } | null;
  }>(AT, { id: phase.id, at });
  const manifest = data.phase?.manifest;
  if (!manifest)
    throw new CliError(`${displayName(phase)} had no recorded manifest ${at ? `at ${at}` : 'yet'}`, EXIT.notFound);
  if (isDataFormat(options.output)) ctx.out(renderData(manifest, options.output));
  else {
    const now = ctx.now();
    const until = manifest.to ? `until ${formatAgo(manifest.to, now)}` : 'still in effect';
    if (options.headers !== false)
      ctx.out(
        `# ${displayName(phase)}: manifest ${manifest.hash.slice(0, 12)}, from ${formatAgo(manifest.from, now)} (${manifest.from}), ${until}\n`,
      );
    const rows = manifest.entries.map((e) => [
      e.group || '(core)',
      e.kind,
      e.namespace || '-',
      e.name,
      e.version ?? '-',
    ]);
    ctx.out(
      renderTable(['GROUP', 'KIND', 'NAMESPACE', 'NAME', 'VERSION'], rows, { headers: options.headers !== false }),
    );
  }
  return 0;
}
