/** Query resolvers: each makes one call into a store, service or loader and shapes the result. */
import type {
  PhaseFilter as PhaseFilterInput,
  QueryResolvers,
  StatusChangeFilter as StatusChangeFilterInput,
} from '../../generated/graphql.ts';
import { canSee } from '../../auth/principal.ts';
import { listTokens } from '../../auth/tokens.ts';
import { checkGate } from '../../services/read-gate.ts';
import { CONDITION_STATUSES } from '../../history/condition-changes.ts';
import { resolvePhaseRef, type PhaseRef } from '../../services/read-phase-ref.ts';
import type { PhaseCursor, PhaseFilter } from '../../store/read-phases.ts';
import { phaseCursorOf } from '../../store/read-phases.ts';
import type { StatusChangeFilter } from '../../store/read-history.ts';
import type { GraphqlContext } from '../context.ts';
import {
  decodeCursor,
  encodeCursor,
  isRowId,
  MAX_PHASES_PAGE_SIZE,
  pageSize,
  parseSeq,
  toConnection,
} from '../cursor.ts';
import { badUserInput, notFound } from '../errors.ts';
import { historyAskBelow } from './phase.ts';
import { toApiToken, toGateResult, toNotificationDelivery, toStatusChange } from './shapes.ts';

function isPhaseCursor(value: unknown): value is PhaseCursor {
  const v = value as Partial<PhaseCursor> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.severity === 'number' &&
    Number.isInteger(v.severity) &&
    v.severity >= 0 &&
    v.severity <= 100 &&
    typeof v.cluster === 'string' &&
    typeof v.namespace === 'string' &&
    typeof v.name === 'string' &&
    isRowId(v.id)
  );
}

/** The most conditions one gate may require. */
const MAX_GATE_CONDITIONS = 20;

/** The most phase ids one filter may name: a page of phases. */
const MAX_PHASE_IDS = 1000;

function toPhaseFilter(input: PhaseFilterInput | null | undefined): PhaseFilter {
  const filter: PhaseFilter = {};
  if (!input) return filter;
  if (input.cluster != null) filter.cluster = input.cluster;
  if (input.namespace != null) filter.namespace = input.namespace;
  if (input.source != null) filter.source = input.source;
  if (input.status != null) filter.status = input.status;
  if (input.search != null) filter.search = input.search;
  if (input.includeDeleted != null) filter.includeDeleted = input.includeDeleted;
  if (input.ids != null) {
    if (input.ids.length > MAX_PHASE_IDS)
      throw badUserInput(`filter.ids takes at most ${MAX_PHASE_IDS} ids, got ${input.ids.length}`);
    // An id that cannot name a phase matches none, as phase(id:) answers null for it.
    filter.ids = input.ids.filter((id) => /^\d{1,9}$/.test(id)).map(Number);
  }
  if (input.labels != null) {
    const labels = input.labels;
    if (
      typeof labels !== 'object' ||
      Array.isArray(labels) ||
      !Object.values(labels).every((v) => typeof v === 'string')
    ) {
      throw badUserInput('filter.labels must be an object of string values, e.g. {"team": "shop"}');
    }
    filter.labels = labels as Record<string, string>;
  }
  if (input.conditions != null) {
    if (input.conditions.length > 20)
      throw badUserInput(`filter.conditions takes at most 20 conditions, got ${input.conditions.length}`);
    filter.conditions = input.conditions.map((c) => ({ type: c.type, status: c.status }));
  }
  return filter;
}

/** A notificationDeliveries cursor: a delivery's row id, as its endCursor gives it. */
function parseDeliveryCursor(after: string | null | undefined): bigint | undefined {
  if (after === null || after === undefined) return undefined;
  if (!/^\d{1,18}$/.test(after))
    throw badUserInput(`after must be an endCursor of notificationDeliveries, got ${JSON.stringify(after)}`);
  return BigInt(after);
}

/** A StatusChangeFilter from SDL input. */
export function toChangeFilter(input: StatusChangeFilterInput | null | undefined): StatusChangeFilter {
  const filter: StatusChangeFilter = {};
  if (!input) return filter;
  if (input.cluster != null) filter.cluster = input.cluster;
  if (input.namespace != null) filter.namespace = input.namespace;
  if (input.phaseId != null) {
    if (!/^\d{1,9}$/.test(input.phaseId))
      throw badUserInput(`filter.phaseId is not a phase id: ${JSON.stringify(input.phaseId)}`);
    filter.phaseId = Number(input.phaseId);
  }
  if (input.scopes != null) filter.scopes = input.scopes;
  if (input.toStatus != null) filter.toStatus = input.toStatus;
  if (input.conditionTypes != null) filter.conditionTypes = input.conditionTypes;
  return filter;
}

/** Resolves a PhaseRef or throws NOT_FOUND / BAD_USER_INPUT. */
export async function requirePhase(ctx: GraphqlContext, ref: PhaseRef) {
  const resolved = await resolvePhaseRef(ctx.read.phases, ctx.principal.access, ref);
  if (resolved.ok) return resolved.phase;
  throw resolved.kind === 'NOT_FOUND' ? notFound(resolved.message) : badUserInput(resolved.message);
}

export const queryResolvers: { Query: QueryResolvers } = {
  Query: {
    about: (_parent, _args, ctx) => ctx.about,
    viewer: (_parent, _args, { principal }) => ({
      name: principal.name,
      anonymous: principal.kind === 'anonymous',
      scopes: [...principal.scopes],
      clusters: [...principal.access.clusters],
      namespaces: [...principal.access.namespaces],
    }),
    clusters: async (_parent, _args, ctx) =>
      (await ctx.clusters.listClusters()).filter((c) => canSee(ctx.principal, c.name, null)),
    phases: async (_parent, args, ctx) => {
      const first = pageSize(args.first, 50, MAX_PHASES_PAGE_SIZE);
      const order = args.orderBy ?? 'NAME';
      const after = typeof args.after === 'string' ? decodeCursor(args.after, isPhaseCursor) : undefined;
      const page = await ctx.read.phases.listPhases(ctx.principal.access, {
        filter: toPhaseFilter(args.filter),
        order,
        first,
        ...(after ? { after } : {}),
      });
      return toConnection(page, (phase) => encodeCursor(phaseCursorOf(phase)));
    },
    phase: async (_parent, args, ctx, info) => {
      // A history page below is read in the lookup's statement: one round trip instead of two in a row.
      const history = historyAskBelow(info);
      const resolved = await resolvePhaseRef(
        ctx.read.phases,
        ctx.principal.access,
        args,
        history === undefined ? {} : { history },
      );
      if (resolved.ok) return resolved.phase;
      if (resolved.kind === 'NOT_FOUND') return null;
      throw badUserInput(resolved.message);
    },
    statusChanges: async (_parent, args, ctx) => {
      const first = pageSize(args.first, 100);
      const page = await ctx.read.history.listStatusChanges(
        ctx.principal.access,
        toChangeFilter(args.filter),
        first,
        parseSeq(args.after),
      );
      return {
        ...toConnection(page, (c) => c.seq.toString()),
        edges: page.items.map((c) => ({ cursor: c.seq.toString(), node: toStatusChange(c) })),
      };
    },
    statusChangeHead: async (_parent, args, ctx) => {
      const seq = await ctx.read.history.latestStatusChangeSeq(ctx.principal.access, toChangeFilter(args.filter));
      return seq === null ? null : seq.toString();
    },
    gate: async (_parent, args, ctx) => {
      if ((args.conditions ?? []).length > MAX_GATE_CONDITIONS)
        throw badUserInput(`gate takes at most ${MAX_GATE_CONDITIONS} conditions, got ${args.conditions?.length}`);
      const conditions = (args.conditions ?? []).map((c) => {
        const status = c.status ?? 'True';
        if (!(CONDITION_STATUSES as readonly string[]).includes(status))
          throw badUserInput(
            `gate: condition ${c.type}'s status must be True, False or Unknown, not ${JSON.stringify(status)}`,
          );
        return { type: c.type, status, forMs: c.for ?? args.for };
      });
      const result = await checkGate(ctx.read, ctx.principal.access, args.phase, {
        wanted: args.status ?? 'Current',
        forMs: args.for,
        conditions,
      });
      if (result.ok) return toGateResult(result.gate);
      throw result.kind === 'NOT_FOUND' ? notFound(result.message) : badUserInput(result.message);
    },
    tokens: async (_parent, _args, ctx) => (await listTokens(ctx.read.tokens, ctx.principal.access)).map(toApiToken),
    notificationDeliveries: async (_parent, args, ctx) => {
      const first = pageSize(args.first, 50);
      const filter = args.filter ?? {};
      const page = await ctx.read.notifications.listDeliveries(
        ctx.principal.access,
        {
          ...(filter.route != null ? { route: filter.route } : {}),
          ...(filter.status != null ? { status: filter.status } : {}),
          ...(filter.cluster != null ? { cluster: filter.cluster } : {}),
          ...(filter.namespace != null ? { namespace: filter.namespace } : {}),
        },
        first,
        parseDeliveryCursor(args.after),
      );
      return {
        ...toConnection(page, (d) => d.id.toString()),
        edges: page.items.map((d) => ({ cursor: d.id.toString(), node: toNotificationDelivery(d) })),
      };
    },
  },
};
