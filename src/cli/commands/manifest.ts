/** `phaselog manifest <phase> [--at TIME] [--diff]`: what the phase's inventory listed, and how it changed. */
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { isDataFormat, parseTime, renderData, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { displayName, resolvePhase } from '../phase-arg.ts';

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

const VERSIONS = `query Manifests($id: ID!) {
  phase(id: $id) { manifests(first: 20) { edges { node {
    manifest { hash from to entryCount }
    added { group kind namespace name } removed { group kind namespace name }
    revisionsChanged { key }
  } } } }
}`;

const entryName = (e: Omit<Entry, 'version'>) => `${e.group ? `${e.group}/` : ''}${e.kind}/${e.namespace ? `${e.namespace}/` : ''}${e.name}`;

export async function runManifest(ctx: CommandContext, options: { phase?: string; at?: string; diff: boolean; output: OutputFormat }): Promise<number> {
  const phase = await resolvePhase(ctx.api, options.phase);
  if (options.diff) {
    type Version = { manifest: { hash: string; from: string; entryCount: number }; added: Entry[]; removed: Entry[]; revisionsChanged: { key: string }[] };
    const data = await ctx.api.query<{ phase: { manifests: { edges: { node: Version }[] } } | null }>(VERSIONS, { id: phase.id });
    const versions = data.phase?.manifests.edges.map((e) => e.node) ?? [];
    if (isDataFormat(options.output)) ctx.out(renderData(versions, options.output));
    else
      for (const v of versions) {
        ctx.out(`${v.manifest.from}  ${v.manifest.hash.slice(0, 12)}  ${v.manifest.entryCount} entries\n`);
        for (const e of v.added) ctx.out(`  + ${entryName(e)}\n`);
        for (const e of v.removed) ctx.out(`  - ${entryName(e)}\n`);
        for (const r of v.revisionsChanged) ctx.out(`  ~ ${r.key}\n`);
      }
    return 0;
  }
  const at = options.at ? parseTime(options.at, ctx.now()).toISOString() : null;
  const data = await ctx.api.query<{ phase: { manifest: { hash: string; from: string; to: string | null; entries: Entry[] } | null } | null }>(AT, { id: phase.id, at });
  const manifest = data.phase?.manifest;
  if (!manifest) throw new CliError(`${displayName(phase)} had no recorded manifest ${at ? `at ${at}` : 'yet'}`, EXIT.notFound);
  if (isDataFormat(options.output)) ctx.out(renderData(manifest, options.output));
  else {
    ctx.out(`# ${displayName(phase)}: manifest ${manifest.hash.slice(0, 12)}, in effect from ${manifest.from} to ${manifest.to ?? 'now'}\n`);
    ctx.out(renderTable(['GROUP', 'KIND', 'NAMESPACE', 'NAME', 'VERSION'], manifest.entries.map((e) => [e.group || '(core)', e.kind, e.namespace || '-', e.name, e.version ?? '-'])));
  }
  return 0;
}
