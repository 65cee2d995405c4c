/**
 * Phases declared in phaselog.yaml rather than found in a cluster: a list of resources, or a label
 * selector over some kinds. Parsed with the same inventory parsers as everything else.
 */
import { z } from 'zod';
import { parseConfigPhase } from './inventory/config-phase.ts';
import { parseSelectorPhase } from './inventory/selector.ts';
import type { Phase } from './inventory/types.ts';

/** One entry of `phases:`. */
export const declaredPhaseSchema = z
  .strictObject({
    /** The cluster the phase lives in (a cluster name from `clusters:` or a kubeconfig context). */
    cluster: z.string().min(1),
    name: z.string().min(1),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    /** A list phase: `<namespace>_<name>_<group>_<kind>` strings or `{group, kind, namespace, name}`. */
    resources: z.array(z.unknown()).optional(),
    /** A selector phase: `{matchLabels, matchExpressions}` over `kinds` (`apps/Deployment`, `Service`). */
    selector: z.unknown().optional(),
    kinds: z.array(z.unknown()).optional(),
    /** Namespaces a selector phase looks in; all when omitted. */
    namespaces: z.array(z.string()).optional(),
  })
  .superRefine((entry, ctx) => {
    if ((entry.resources === undefined) === (entry.selector === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'set either resources (a list phase) or selector with kinds (a selector phase)' });
      return;
    }
    const parsed = entry.selector !== undefined ? parseSelectorPhase(entry) : parseConfigPhase(entry);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error.message });
    else if (parsed.phase.errors.length) ctx.addIssue({ code: 'custom', message: parsed.phase.errors.map((e) => e.message).join('; ') });
  });

export const declaredPhasesSchema = z.array(declaredPhaseSchema).superRefine((entries, ctx) => {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const key = `${entry.cluster}/${entry.namespace ?? ''}/${entry.name}`;
    if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `phase ${key} is declared twice` });
    seen.add(key);
  });
});

export type DeclaredPhase = z.infer<typeof declaredPhaseSchema>;

/** Declared phases by cluster name (the config was validated, so every entry parses). */
export function groupDeclaredPhases(entries: readonly DeclaredPhase[]): Map<string, Phase[]> {
  const byCluster = new Map<string, Phase[]>();
  for (const entry of entries) {
    const parsed = entry.selector !== undefined ? parseSelectorPhase(entry) : parseConfigPhase(entry);
    if (!parsed.ok) continue;
    byCluster.set(entry.cluster, [...(byCluster.get(entry.cluster) ?? []), parsed.phase]);
  }
  return byCluster;
}
