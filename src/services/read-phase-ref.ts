/** Resolves a phase reference (an id, or cluster + namespace + name [+ source]) within what a caller may see. */
import type { PhaseReader } from '../store/read-phases.ts';
import type { AccessScope, PhaseRecord } from '../store/read-types.ts';

/** Names one phase. */
export interface PhaseRef {
  id?: string | null;
  cluster?: string | null;
  namespace?: string | null;
  name?: string | null;
  source?: string | null;
}

/** Outcome of {@link resolvePhaseRef}; hidden phases are NOT_FOUND, so restrictions leak nothing. */
export type ResolvedPhase = { ok: true; phase: PhaseRecord } | { ok: false; kind: 'NOT_FOUND' | 'BAD_REF' | 'AMBIGUOUS'; message: string };

export async function resolvePhaseRef(phases: PhaseReader, scope: AccessScope, ref: PhaseRef): Promise<ResolvedPhase> {
  const byName = ref.cluster != null || ref.namespace != null || ref.name != null;
  if (ref.id != null) {
    if (byName) return { ok: false, kind: 'BAD_REF', message: 'name a phase by id or by cluster, namespace and name, not both' };
    if (!/^\d{1,9}$/.test(ref.id)) return { ok: false, kind: 'NOT_FOUND', message: `no phase with id ${JSON.stringify(ref.id)}` };
    const [phase] = await phases.getPhasesByIds(scope, [Number(ref.id)]);
    return phase === undefined ? { ok: false, kind: 'NOT_FOUND', message: `no phase with id ${ref.id}` } : { ok: true, phase };
  }
  if (ref.cluster == null || ref.namespace == null || ref.name == null) {
    return { ok: false, kind: 'BAD_REF', message: 'name a phase by id, or by all of cluster, namespace and name' };
  }
  const found = await phases.findPhases(scope, { cluster: ref.cluster, namespace: ref.namespace, name: ref.name, ...(ref.source != null ? { source: ref.source } : {}) });
  const label = `${ref.cluster}/${ref.namespace}/${ref.name}`;
  if (found.length === 0) return { ok: false, kind: 'NOT_FOUND', message: `no phase ${label}${ref.source != null ? ` from ${ref.source}` : ''}` };
  const live = found.filter((p) => p.deletedAt === null);
  const candidates = live.length > 0 ? live : found;
  if (candidates.length > 1) {
    return { ok: false, kind: 'AMBIGUOUS', message: `several phases are named ${label} (sources: ${candidates.map((p) => p.source).join(', ')}); give source` };
  }
  return { ok: true, phase: candidates[0] as PhaseRecord };
}
