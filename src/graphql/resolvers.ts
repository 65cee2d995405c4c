/**
 * Resolvers: one call into a store, service or loader each, shaping nothing but the result. Every
 * root field's scope is declared and checked in root-scopes.ts (schema.ts puts the check in front
 * of each); restrictions to clusters/namespaces are applied by the stores themselves. Types come
 * from schema.graphql through graphql-codegen (`npm run codegen`, see codegen.ts).
 */
import type { Resolvers } from '../generated/graphql.ts';
import { clusterResolvers } from './resolvers/cluster.ts';
import { mutationResolvers } from './resolvers/mutation.ts';
import { phaseResolvers } from './resolvers/phase.ts';
import { planResolvers } from './resolvers/plan.ts';
import { queryResolvers } from './resolvers/query.ts';
import { reportResolvers } from './resolvers/reports.ts';
import { revisionResolvers } from './resolvers/revisions.ts';
import { subscriptionResolvers } from './resolvers/subscription.ts';
import { DateTimeScalar, DurationScalar, JsonScalar } from './scalars.ts';

export function createResolvers(): Resolvers {
  return {
    DateTime: DateTimeScalar,
    JSON: JsonScalar,
    Duration: DurationScalar,
    Query: { ...queryResolvers.Query, ...reportResolvers.Query, ...planResolvers.Query },
    Mutation: mutationResolvers.Mutation,
    Subscription: { ...subscriptionResolvers.Subscription, ...planResolvers.Subscription },
    Plan: planResolvers.Plan,
    PlanStep: planResolvers.PlanStep,
    PlanGateResult: planResolvers.PlanGateResult,
    ...phaseResolvers,
    ...revisionResolvers,
    ...clusterResolvers,
  };
}
