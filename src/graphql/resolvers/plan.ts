/** Resolvers of phase plans: plans, plan, planGate, Plan's fields and planStatusChanged. */
import type { Resolvers, SubscriptionPlanStatusChangedArgs } from '../../generated/graphql.ts';
import { evaluatePlanGate, PlanHistoryTooLongError } from '../../services/read-plans.ts';
import { subscribePlan, type PlanStatusChangeEvent } from '../../services/plan-feed.ts';
import type { PlanState } from '../../history/plans.ts';
import type { GraphqlContext } from '../context.ts';
import { pageSize, parseSeq } from '../cursor.ts';
import { badUserInput, notFound } from '../errors.ts';
import { toStatus } from './shapes.ts';

/** A derived plan state as the SDL's fields. */
function toPlanState(state: PlanState) {
  return {
    status: toStatus(state.status),
    step: state.step,
    stepCount: state.stepCount,
    message: state.message,
    stale: state.staleReason !== null,
    staleReason: state.staleReason,
  };
}

async function requirePlan(ctx: GraphqlContext, name: string) {
  const plan = await ctx.read.plans.getPlan(ctx.principal.access, name);
  if (plan === null) throw notFound(`no plan ${JSON.stringify(name)}`);
  return plan;
}

export const planResolvers: Pick<Resolvers, 'Plan' | 'PlanStep' | 'PlanGateResult'> & {
  Query: Pick<NonNullable<Resolvers['Query']>, 'plans' | 'plan' | 'planGate'>;
  Subscription: Pick<NonNullable<Resolvers['Subscription']>, 'planStatusChanged'>;
} = {
  Query: {
    plans: (_parent, _args, ctx) => ctx.read.plans.listPlans(ctx.principal.access),
    plan: (_parent, args, ctx) => ctx.read.plans.getPlan(ctx.principal.access, args.name),
    planGate: async (_parent, args, ctx) =>
      evaluatePlanGate(ctx.read.phases, await requirePlan(ctx, args.plan), args.for),
  },
  Subscription: {
    planStatusChanged: {
      subscribe: async (_parent: unknown, args: SubscriptionPlanStatusChangedArgs, ctx: GraphqlContext) => {
        if (ctx.read.changes === undefined) throw new Error('no change feed is wired into this server');
        const plan = await requirePlan(ctx, args.plan);
        return subscribePlan(
          { changes: ctx.read.changes, history: ctx.read.history },
          ctx.principal.access,
          plan,
          parseSeq(args.after),
        );
      },
      resolve: (event: PlanStatusChangeEvent) => ({
        seq: event.seq.toString(),
        at: event.at,
        plan: event.plan,
        fromStatus: toStatus(event.from.status),
        fromStep: event.from.step,
        toStatus: toStatus(event.to.status),
        step: event.to.step,
        message: event.to.message,
      }),
    },
  },
  Plan: {
    status: (p) => toStatus(p.state.status),
    step: (p) => p.state.step,
    stepCount: (p) => p.state.stepCount,
    message: (p) => p.state.message,
    stale: (p) => p.state.staleReason !== null,
    staleReason: (p) => p.state.staleReason,
    phases: (p) => p.steps,
    history: async (p, args, ctx) => {
      if (args.to != null && args.to.getTime() < args.from.getTime()) throw badUserInput('history: to is before from');
      try {
        const page = await ctx.read.plans.history(
          p,
          { from: args.from, ...(args.to != null ? { to: args.to } : {}) },
          pageSize(args.first, 100),
        );
        return page.items.map((i) => ({ ...toPlanState(i), from: i.from, to: i.to }));
      } catch (error) {
        if (error instanceof PlanHistoryTooLongError) throw badUserInput(error.message);
        throw error;
      }
    },
    statusAt: async (p, { at }, ctx) => {
      const state = await ctx.read.plans.statusAt(p, at);
      return state === null ? null : { ...toPlanState(state), at };
    },
  },
  PlanStep: {
    ref: (s) => s.ref.text,
    status: (s) => toStatus(s.status ?? 'NotFound'),
  },
  PlanGateResult: {
    status: (g) => toStatus(g.plan.state.status),
    remaining: (g) => g.remainingMs,
  },
};
