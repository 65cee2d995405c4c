/**
 * Phases declared in phaselog.yaml rather than found in a cluster: a list of resources, or a label
 * selector over some kinds. Parsed with the same inventory parsers as everything else.
 */
import { z } from 'zod';
import { parseConfigPhase } from './inventory/config-phase.ts';
import { parseSelectorPhase } from './inventory/selector.ts';
import { readGroupKind } from './inventory/group-kind.ts';
import type { OwnerKindSpec } from './inventory/owner-phase.ts';
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
      ctx.addIssue({
        code: 'custom',
        message: 'set either resources (a list phase) or selector with kinds (a selector phase)',
      });
      return;
    }
    const parsed = entry.selector !== undefined ? parseSelectorPhase(entry) : parseConfigPhase(entry);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error.message });
    else if (parsed.phase.errors.length)
      ctx.addIssue({ code: 'custom', message: parsed.phase.errors.map((e) => e.message).join('; ') });
  });

export const declaredPhasesSchema = z.array(declaredPhaseSchema).superRefine((entries, ctx) => {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const key = `${entry.cluster}/${entry.namespace ?? ''}/${entry.name}`;
    if (seen.has(key))
      ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `phase ${key} is declared twice` });
    seen.add(key);
  });
});

export type DeclaredPhase = z.infer<typeof declaredPhaseSchema>;

/** A kind as config spells it: `group/Kind`, or `Kind` for the core group. */
const groupKindSchema = z.string().transform((value, ctx) => {
  const parsed = readGroupKind(value);
  if (parsed === undefined || !/^[A-Z][A-Za-z0-9]*$/.test(parsed.kind) || !/^[a-z0-9.-]*$/.test(parsed.group)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${value}" is not a kind: write group/Kind (batch/Job, argoproj.io/Workflow) or Kind for the core group (Pod)`,
    });
    return z.NEVER;
  }
  return parsed;
});

/** One entry of `phases.owners`: each object of `kind` is a phase of it and what it owns. */
export const ownerPhaseKindSchema = z
  .strictObject({
    /** The owner kind, `group/Kind` (a custom resource such as `openstacklcm.airshipit.org/OsPhase`). */
    kind: groupKindSchema,
    /** Kinds whose objects join an owner's phase when their ownerReferences lead to it. */
    ownedKinds: z.array(groupKindSchema).min(1, 'name at least one owned kind (batch/Job, Pod, ...)'),
    /** The owner's condition that says it is ready (recorded as `owner/<type>`). @default Ready */
    readyCondition: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9._-]{0,62}$/, 'a condition type: a letter, then letters, digits, ".", "_" or "-"')
      .default('Ready'),
  })
  .superRefine((entry, ctx) => {
    if (entry.ownedKinds.some((k) => k.group === entry.kind.group && k.kind === entry.kind.kind)) {
      ctx.addIssue({
        code: 'custom',
        path: ['ownedKinds'],
        message: 'an owner kind cannot own its own kind here: nested owners are phases of their own',
      });
    }
  });

/**
 * `phases:` is a list of declared phases, or `{ declared: [...], owners: [...] }` when owner kinds
 * are configured too; both read as the second form.
 */
const phasesObjectSchema = z.strictObject({
  declared: declaredPhasesSchema.default([]),
  owners: z
    .array(ownerPhaseKindSchema)
    .default([])
    .superRefine((entries, ctx) => {
      const seen = new Set<string>();
      entries.forEach((entry, index) => {
        const key = `${entry.kind.group}/${entry.kind.kind}`;
        if (seen.has(key))
          ctx.addIssue({ code: 'custom', path: [index, 'kind'], message: `owner kind ${key} is configured twice` });
        seen.add(key);
      });
    }),
});

// Parsed by form rather than as a union, so an error names the key as the user wrote it
// (`phases.0.name` in the list form, `phases.owners.0.kind` in the other).
export const phasesConfigSchema = z.unknown().transform((value, ctx): z.infer<typeof phasesObjectSchema> => {
  const listForm = value === undefined || Array.isArray(value);
  const parsed = listForm ? declaredPhasesSchema.safeParse(value ?? []) : phasesObjectSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }
  return Array.isArray(parsed.data) ? { declared: parsed.data, owners: [] } : parsed.data;
});

export type PhasesConfig = z.infer<typeof phasesConfigSchema>;

/** The declared phases of a `phases:` setting. */
export function declaredPhasesOf(phases: PhasesConfig): DeclaredPhase[] {
  return phases.declared;
}

/** The owner kinds of a `phases:` setting. */
export function ownerKindsOf(phases: PhasesConfig): OwnerKindSpec[] {
  return phases.owners;
}

/** Declared phases by cluster name (the config was validated, so every entry parses). */
export function groupDeclaredPhases(phases: PhasesConfig): Map<string, Phase[]> {
  const byCluster = new Map<string, Phase[]>();
  for (const entry of declaredPhasesOf(phases)) {
    const parsed = entry.selector !== undefined ? parseSelectorPhase(entry) : parseConfigPhase(entry);
    if (!parsed.ok) continue;
    byCluster.set(entry.cluster, [...(byCluster.get(entry.cluster) ?? []), parsed.phase]);
  }
  return byCluster;
}
