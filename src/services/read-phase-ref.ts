/** Resolves a phase reference (an id, or cluster + namespace + name [+ source]) within what a caller may see. */
import type { PhaseReader } from '../store/read-phases.ts';
import type { AccessScope, PhaseHistoryAsk, PhaseRecord } from '../store/read-types.ts';

/** Names one phase. */
export interface PhaseRef {
  id?: string | null;
  cluster?: string | null;
  namespace?: string | null;
  name?: string | null;
  source?: string | null;
}

/** Outcome of {@link resolvePhaseRef}; hidden phases are NOT_FOUND, so restrictions leak nothing. */
export type ResolvedPhase =
  { ok: true; phase: PhaseRecord } | { ok: false; kind: 'NOT_FOUND' | 'BAD_REF' | 'AMBIGUOUS'; message: string };

/** Options of {@link resolvePhaseRef}. */
export interface ResolvePhaseOptions {
  /**
   * Also read this page of the phase's history, in the lookup's own statement (`phase.history`).
   * Should that statement fail, the phase is looked up alone, without the page: a failing history
   * read then fails where the history is read, not the lookup.
   */
  history?: PhaseHistoryAsk;
}

export async function resolvePhaseRef(
  phases: PhaseReader,
  scope: AccessScope,
  ref: PhaseRef,
  options: ResolvePhaseOptions = {},
): Promise<ResolvedPhase> {
  const byName = ref.cluster != null || ref.namespace != null || ref.name != null;
  const { history } = options;
  if (ref.id != null) {
    if (byName)
      return { ok: false, kind: 'BAD_REF', message: 'name a phase by id or by cluster, namespace and name, not both' };
    if (!/^\d{1,9}$/.test(ref.id))
      return { ok: false, kind: 'NOT_FOUND', message: `no phase with id ${JSON.stringify(ref.id)}` };
    const id = Number(ref.id);
    const [phase] =
      history === undefined
        ? await phases.getPhasesByIds(scope, [id])
        : await withHistory(
            () => phases.findPhasesWithHistory(scope, { id }, history),
            () => phases.getPhasesByIds(scope, [id]),
          );
    return phase === undefined
      ? { ok: false, kind: 'NOT_FOUND', message: `no phase with id ${ref.id}` }
      : { ok: true, phase };
  }
  if (ref.cluster == null || ref.namespace == null || ref.name == null) {
    return { ok: false, kind: 'BAD_REF', message: 'name a phase by id, or by all of cluster, namespace and name' };
  }
  const identity = {
    cluster: ref.cluster,
    namespace: ref.namespace,
    name: ref.name,
    ...(ref.source != null ? { source: ref.source } : {}),
  };
  const found =
    history === undefined
      ? await phases.findPhases(scope, identity)
      : await withHistory(
          () => phases.findPhasesWithHistory(scope, identity, history),
          () => phases.findPhases(scope, identity),
        );
  const label = `${ref.cluster}/${ref.namespace}/${ref.name}`;
  if (found.length === 0)
    return {
      ok: false,
      kind: 'NOT_FOUND',
      message: `no phase ${label}${ref.source != null ? ` from ${ref.source}` : ''}`,
    };
  const live = found.filter((p) => p.deletedAt === null);
  const candidates = live.length > 0 ? live : found;
  if (candidates.length > 1) {
    return {
      ok: false,
      kind: 'AMBIGUOUS',
      message: `several phases are named ${label} (sources: ${candidates.map((p) => p.source).join(', ')}); give source`,
    };
  }
  return { ok: true, phase: candidates[0] as PhaseRecord };
}

/** The lookup with the history page; the lookup alone should that fail (see {@link ResolvePhaseOptions.history}). */
async function withHistory(
  lookupWithHistory: () => Promise<PhaseRecord[]>,
  lookup: () => Promise<PhaseRecord[]>,
): Promise<PhaseRecord[]> {
  try {
    return await lookupWithHistory();
  } catch {
    return lookup();
  }
}
