/**
 * How the CLI names a phase: `cluster/namespace/name`, `cluster/name`, or just `name` when that is
 * unique across clusters. An ambiguous or unknown name is a clear error listing what matched.
 */
import type { ApiClient } from './api-client.ts';
import { CliError, EXIT } from './errors.ts';
import { phaseName } from './format.ts';

export interface PhaseSummary {
  id: string;
  cluster: string;
  namespace: string;
  name: string;
  source: string;
}

const FIND = `query FindPhases($filter: PhaseFilter) {
  phases(filter: $filter, first: 100) { edges { node { id cluster namespace name source } } }
}`;

export const displayName = phaseName;

/** Where `--cluster` / `-n` narrow the search for a phase named by its name alone. */
export interface PhaseScope {
  cluster?: string | undefined;
  namespace?: string | undefined;
}

/**
 * Resolve a phase argument to one phase, or throw a CliError (usage, not found, ambiguous). `--cluster`
 * and `-n` fill in what the argument leaves out, and must agree with what it says.
 */
export async function resolvePhase(
  api: ApiClient,
  arg: string | undefined,
  scope: PhaseScope = {},
): Promise<PhaseSummary> {
  if (!arg) throw new CliError('name a phase: cluster/namespace/name, cluster/name or name', EXIT.usage);
  const parts = arg.split('/');
  if (parts.length > 3 || parts.some((p) => p === '')) {
    throw new CliError(`"${arg}" is not a phase name: use cluster/namespace/name, cluster/name or name`, EXIT.usage);
  }
  const name = parts.at(-1) as string;
  const named = {
    cluster: parts.length >= 2 ? parts[0] : undefined,
    namespace: parts.length === 3 ? parts[1] : undefined,
  };
  for (const field of ['cluster', 'namespace'] as const) {
    const given = scope[field];
    if (given !== undefined && named[field] !== undefined && given !== named[field]) {
      throw new CliError(
        `"${arg}" names ${field} ${named[field]}, but ${field === 'cluster' ? '--cluster' : '--namespace'} says ${given}`,
        EXIT.usage,
      );
    }
  }
  const cluster = named.cluster ?? scope.cluster;
  const namespace = named.namespace ?? scope.namespace;
  const data = await api.query<{ phases: { edges: { node: PhaseSummary }[] } }>(FIND, {
    filter: { search: name, ...(cluster ? { cluster } : {}), ...(namespace ? { namespace } : {}) },
  });
  const matches = data.phases.edges.map((e) => e.node).filter((p) => p.name === name);
  if (matches.length === 1) return matches[0] as PhaseSummary;
  if (matches.length === 0) {
    const similar = data.phases.edges.map((e) => displayName(e.node)).slice(0, 5);
    throw new CliError(
      `no phase "${arg}"${similar.length ? ` (did you mean ${similar.join(', ')}?)` : ''}; \`phaselog status\` lists them`,
      EXIT.notFound,
    );
  }
  throw new CliError(
    `"${arg}" names ${matches.length} phases: ${matches.map(displayName).join(', ')}; add the cluster and namespace`,
    EXIT.usage,
  );
}
