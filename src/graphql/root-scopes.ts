/**
 * Who may call each root field, declared in one typed map and checked in one place. Fail closed: a
 * root field the map does not declare stops the server at start-up ({@link assertRootFieldsDeclared}),
 * and should a schema reach a request without that check, the field is refused there
 * ({@link guardRootFields}), never answered with a default scope.
 */
import { defaultFieldResolver } from 'graphql';
import type { GraphQLField, GraphQLFieldResolver, GraphQLObjectType, GraphQLSchema } from 'graphql';
import { hasScope, type Principal } from '../auth/principal.ts';
import { isRestricted } from '../store/access-rule.ts';
import type { TokenScope } from '../auth/tokens.ts';
import type { MutationResolvers, QueryResolvers, SubscriptionResolvers } from '../generated/graphql.ts';
import { StartupError } from '../runtime/errors.ts';
import { forbidden } from './errors.ts';

/**
 * How a root field treats a token restricted to clusters or namespaces:
 * - `none`: it says nothing about clusters (server facts);
 * - `narrowed`: it answers only what the restriction lets the token see (its store or service
 *   applies the token's access, token management included);
 * - `unrestricted-only`: what it answers may cover any cluster, so restricted tokens are refused.
 */
export type RootFieldRestriction = 'none' | 'narrowed' | 'unrestricted-only';

/** What calling one root field takes. */
export interface RootFieldRule {
  /** The scope the token needs (`admin` implies `read`). */
  scope: TokenScope;
  restriction: RootFieldRestriction;
}

/** A rule for every root field of schema.graphql: a field added to the SDL and not here does not compile. */
export interface RootFieldRules {
  Query: Readonly<Record<keyof QueryResolvers, RootFieldRule>>;
  Mutation: Readonly<Record<keyof MutationResolvers, RootFieldRule>>;
  Subscription: Readonly<Record<keyof SubscriptionResolvers, RootFieldRule>>;
}

const read = (restriction: RootFieldRestriction): RootFieldRule => ({ scope: 'read', restriction });
const admin = (restriction: RootFieldRestriction): RootFieldRule => ({ scope: 'admin', restriction });

/** phaselog's root fields and who may call them. */
export const ROOT_FIELD_RULES: RootFieldRules = {
  Query: {
    about: read('none'),
    // Only the caller's own token, restrictions included.
    viewer: read('none'),
    clusters: read('narrowed'),
    phases: read('narrowed'),
    phase: read('narrowed'),
    statusChanges: read('narrowed'),
    statusChangeHead: read('narrowed'),
    gate: read('narrowed'),
    auditReport: read('narrowed'),
    storedReports: read('unrestricted-only'),
    storedReport: read('unrestricted-only'),
    // Token management shows and touches only tokens at most as narrow as the caller (auth/tokens.ts).
    tokens: admin('narrowed'),
    // A delivery is about a change: its store applies the change log's access rule.
    notificationDeliveries: read('narrowed'),
    // A plan is shown only to a token that may see every one of its phases (services/read-plans.ts).
    plans: read('narrowed'),
    plan: read('narrowed'),
    planGate: read('narrowed'),
  },
  Mutation: {
    createToken: admin('narrowed'),
    revokeToken: admin('narrowed'),
    refreshCluster: admin('narrowed'),
    refreshPhase: admin('narrowed'),
  },
  Subscription: {
    phaseStatusChanged: read('narrowed'),
    clusterStatusChanged: read('narrowed'),
    resourceStatusChanged: read('narrowed'),
    phaseConditionChanged: read('narrowed'),
    planStatusChanged: read('narrowed'),
  },
};

type RootTypeName = keyof RootFieldRules;

function rootTypes(schema: GraphQLSchema): [RootTypeName, GraphQLObjectType][] {
  const types: [RootTypeName, GraphQLObjectType | null | undefined][] = [
    ['Query', schema.getQueryType()],
    ['Mutation', schema.getMutationType()],
    ['Subscription', schema.getSubscriptionType()],
  ];
  return types.filter((entry): entry is [RootTypeName, GraphQLObjectType] => entry[1] != null);
}

function ruleOf(rules: RootFieldRules, typeName: RootTypeName, field: string): RootFieldRule | undefined {
  const declared = rules[typeName] as Readonly<Record<string, RootFieldRule>>;
  return Object.hasOwn(declared, field) ? declared[field] : undefined;
}

/** `Type.field` of every root field of `schema` that `rules` does not declare. */
export function undeclaredRootFields(schema: GraphQLSchema, rules: RootFieldRules = ROOT_FIELD_RULES): string[] {
  return rootTypes(schema).flatMap(([typeName, type]) =>
    Object.keys(type.getFields())
      .filter((name) => ruleOf(rules, typeName, name) === undefined)
      .map((name) => `${typeName}.${name}`),
  );
}

/** Refuses to start with a root field nobody declared a scope for. */
export function assertRootFieldsDeclared(schema: GraphQLSchema, rules: RootFieldRules = ROOT_FIELD_RULES): void {
  const undeclared = undeclaredRootFields(schema, rules);
  if (undeclared.length > 0) {
    throw new StartupError(
      `root fields without a declared scope (add them to ROOT_FIELD_RULES in src/graphql/root-scopes.ts): ${undeclared.join(', ')}`,
    );
  }
}

/** Why `principal` may not call a field with `rule` (`undefined`: undeclared), or null when it may. */
export function refusalOf(principal: Principal, field: string, rule: RootFieldRule | undefined): string | null {
  if (rule === undefined) return `${field} has no declared scope and is refused`;
  if (!hasScope(principal, rule.scope)) return `${field} needs a token with the ${rule.scope} scope`;
  if (rule.restriction === 'unrestricted-only' && isRestricted(principal.access))
    return `${field} may cover any cluster: it needs a token without cluster or namespace restrictions`;
  return null;
}

type AnyResolver = GraphQLFieldResolver<unknown, { principal: Principal }>;

function guarded(field: string, rule: RootFieldRule | undefined, run: AnyResolver): AnyResolver {
  return (parent, args, ctx, info) => {
    const refusal = refusalOf(ctx.principal, field, rule);
    if (refusal !== null) throw forbidden(refusal);
    return run(parent, args, ctx, info);
  };
}

/**
 * Puts the scope check in front of every root field of `schema`: its resolver, and for a
 * subscription its `subscribe` (the check runs once, when the subscription starts). Fields come
 * from the schema, not from the resolvers map, so a field without a resolver is checked too.
 * The schema is changed in place: it is the one just built for this server, and the wrapping
 * then reaches graphql-js, graphql-jit and graphql-ws alike.
 */
export function guardRootFields(schema: GraphQLSchema, rules: RootFieldRules = ROOT_FIELD_RULES): GraphQLSchema {
  for (const [typeName, type] of rootTypes(schema)) {
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, { principal: Principal }>[]) {
      const key = `${typeName}.${field.name}`;
      const rule = ruleOf(rules, typeName, field.name);
      if (typeName === 'Subscription') {
        field.subscribe = guarded(key, rule, field.subscribe ?? defaultFieldResolver);
      } else {
        field.resolve = guarded(key, rule, field.resolve ?? defaultFieldResolver);
      }
    }
  }
  return schema;
}
