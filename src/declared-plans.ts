/**
 * Plans declared in phaselog.yaml (`plans:`): an ordered list of phases deployed one after another
 * (airshipctl's PhasePlan), each phase named as the CLI names it: `cluster/namespace/name` or
 * `cluster/name`. A phase that does not exist (yet) is not a configuration error: the plan shows that
 * step as NotFound. Plans may also be declared by labels on inventory objects (src/history/plans.ts).
 */
import { z } from 'zod';
import { isPlanName, parsePlanPhaseRef, MAX_PLAN_PHASES } from './history/plans.ts';

/** One entry of `plans:`. */
export const declaredPlanSchema = z.strictObject({
  /** The plan's name, as `phaselog plan status <name>` and the API's `plan(name:)` take it. */
  name: z
    .string()
    .refine(
      isPlanName,
      'a plan name is letters, digits, ".", "_" or "-" (at most 63), starting with a letter or digit',
    ),
  /** Its phases in order: `cluster/namespace/name` or `cluster/name`. */
  phases: z
    .array(z.string())
    .min(1, 'a plan needs at least one phase')
    .max(MAX_PLAN_PHASES, `a plan has at most ${MAX_PLAN_PHASES} phases`)
    .superRefine((phases, ctx) => {
      const seen = new Set<string>();
      phases.forEach((phase, index) => {
        if (parsePlanPhaseRef(phase) === undefined)
          ctx.addIssue({
            code: 'custom',
            path: [index],
            message: `"${phase}" is not a phase: use cluster/namespace/name or cluster/name`,
          });
        else if (seen.has(phase))
          ctx.addIssue({ code: 'custom', path: [index], message: `phase ${phase} is listed twice` });
        seen.add(phase);
      });
    }),
});

export const declaredPlansSchema = z.array(declaredPlanSchema).superRefine((plans, ctx) => {
  const seen = new Set<string>();
  plans.forEach((plan, index) => {
    if (seen.has(plan.name))
      ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `plan ${plan.name} is declared twice` });
    seen.add(plan.name);
  });
});

export type DeclaredPlan = z.infer<typeof declaredPlanSchema>;
