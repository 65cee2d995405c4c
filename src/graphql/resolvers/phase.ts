/** Resolvers of Phase and the types hanging off it (resources, snapshots, intervals, manifests). */
import {
  getArgumentValues,
  getNamedType,
  isObjectType,
  type FieldNode,
  type GraphQLField,
  type GraphQLResolveInfo,
} from 'graphql';
import type {
  PhaseHistoryArgs,
  PhaseResourcesArgs,
  Resolvers,
  ResourceFilter as ResourceFilterInput,
} from '../../generated/graphql.ts';
import { canSee } from '../../auth/principal.ts';
import { listManifestVersions } from '../../services/read-manifests.ts';
import type { IntervalCursor, IntervalDetailOption, ResourceFilter } from '../../store/read-history.ts';
import type { PhaseHistoryAsk, PhaseIntervalDetail, PhaseIntervalRecord } from '../../store/read-types.ts';
import type { GraphqlContext } from '../context.ts';
import {
  decodeCursor,
  encodeCursor,
  isCursorInstant,
  isRowIdText,
  pageSize,
  parseSeq,
  toConnection,
} from '../cursor.ts';
import { badUserInput } from '../errors.ts';
import { fieldsNamedBelow, selectsAnyBelow } from '../selection.ts';
import {
  toAppliedSummary,
  toConditions,
  toCounts,
  toCustomHealth,
  toManifest,
  toStatus,
  toStatusChange,
} from './shapes.ts';
import { observedAt, storedStaleReason, type ObservationState } from '../../history/observation.ts';
import { phaseStaleness } from '../../services/read-staleness.ts';
import { FULL_ACCESS, type Page } from '../../store/read-types.ts';
import type { PhaseIntervalParent } from './parents.ts';
import { resourceChildren } from './children.ts';
import { resourceLiveStatus } from './live-status.ts';

function toResourceFilter(input: ResourceFilterInput | null | undefined): ResourceFilter {
  const filter: ResourceFilter = {};
  if (input?.kind != null) filter.kind = input.kind;
  if (input?.namespace != null) filter.namespace = input.namespace;
  if (input?.status != null) filter.status = input.status;
  return filter;
}

function isKeyCursor(value: unknown): value is { k: string } {
  return typeof value === 'object' && value !== null && typeof (value as { k?: unknown }).k === 'string';
}

/**
 * A page cursor of intervals: the start of the last one and its id. A status interval's id is its
 * start in epoch milliseconds (the database never sees it); a manifest's is its row id (it does).
 */
function intervalCursor(after: string | null | undefined, isId: (id: unknown) => boolean): IntervalCursor | undefined {
  if (typeof after !== 'string') return undefined;
  const c = decodeCursor(after, (value: unknown): value is { f: string; i: string } => {
    const v = value as { f?: unknown; i?: unknown } | null;
    return typeof v === 'object' && v !== null && isCursorInstant(v.f) && isId(v.i);
  });
  return { from: new Date(c.f), id: c.i };
}

function isConditionCursor(value: unknown): value is { f: string; t: string } {
  const v = value as { f?: unknown; t?: unknown } | null;
  return typeof v === 'object' && v !== null && isCursorInstant(v.f) && typeof v.t === 'string';
}

const isStatusIntervalId = (id: unknown) => typeof id === 'string' && /^\d{1,16}$/.test(id);

/** PhaseInterval fields read from the interval's status detail. */
const INTERVAL_DETAIL_FIELDS = new Set(['message', 'summary', 'worstResource']);

function detailOf(interval: PhaseIntervalRecord): PhaseIntervalDetail {
  // The history resolver reads the detail whenever the query may select one of these fields.
  if (interval.detail === undefined)
    throw new Error('a phase interval was read without its detail, yet a detail field was asked');
  return interval.detail;
}

/** The page a `history` field asks; throws BAD_USER_INPUT for arguments it refuses. */
interface HistoryRead {
  /** The arguments as given (`to` omitted is now, whenever read) and whether the detail is read. */
  key: string;
  range: { from: Date; to: Date };
  first: number;
  after: IntervalCursor | undefined;
  detail: boolean;
}

function toHistoryRead(args: PhaseHistoryArgs, { detail }: IntervalDetailOption): HistoryRead {
  const from = args.from;
  const to = args.to ?? new Date();
  if (to.getTime() < from.getTime()) throw badUserInput('history: to is before from');
  const first = pageSize(args.first, 100);
  const after = intervalCursor(args.after, isStatusIntervalId);
  const key = JSON.stringify([
    from.getTime(),
    args.to == null ? null : args.to.getTime(),
    first,
    args.after ?? null,
    detail,
  ]);
  return { key, range: { from, to }, first, after, detail };
}

/**
 * The history page that the query selects below the phase being resolved (`info` is the field
 * giving the phase), for the lookup to read with the phase in one statement. Undefined when there
 * is no such page to read ahead: no `history` field, several (each is read on its own), or
 * arguments the history resolver will refuse (it answers the error, as without the read-ahead).
 */
export function historyAskBelow(info: GraphQLResolveInfo): PhaseHistoryAsk | undefined {
  const below = historyFieldBelow(info);
  if (below === null) return undefined;
  try {
    const args = getArgumentValues(below.field, below.node, info.variableValues) as PhaseHistoryArgs;
    const read = toHistoryRead(args, { detail: below.detail });
    return {
      key: read.key,
      range: read.range,
      first: read.first,
      ...(read.after === undefined ? {} : { after: read.after.from }),
      detail: read.detail,
    };
  } catch {
    return undefined;
  }
}

/** The one `history` field below a phase field, what it is and whether it asks for the detail. */
interface HistoryBelow {
  field: GraphQLField<unknown, unknown>;
  node: FieldNode;
  detail: boolean;
}

/**
 * What a phase field's selection holds depends only on the document (parsed once and kept by
 * Apollo), so it is worked out once per field node; only the arguments' values vary per request.
 */
const historyBelowByNode = new WeakMap<FieldNode, HistoryBelow | null>();

function historyFieldBelow(info: GraphQLResolveInfo): HistoryBelow | null {
  const phaseNode = info.fieldNodes[0];
  if (phaseNode === undefined) return null;
  let below = historyBelowByNode.get(phaseNode);
  if (below === undefined) {
    below = findHistoryBelow(info);
    // Several nodes of one field (the same response key repeated) are a rarer shape: not kept.
    if (info.fieldNodes.length === 1) historyBelowByNode.set(phaseNode, below);
  }
  return below;
}

function findHistoryBelow(info: GraphQLResolveInfo): HistoryBelow | null {
  const nodes = fieldsNamedBelow(info, 'history');
  const node = nodes?.[0];
  if (
    nodes === undefined ||
    node === undefined ||
    nodes.some((n) => (n.alias ?? n.name).value !== (node.alias ?? node.name).value)
  )
    return null;
  const phaseType = getNamedType(info.returnType);
  const field = isObjectType(phaseType) ? phaseType.getFields()['history'] : undefined;
  if (field === undefined) return null;
  // As the history resolver will see it: all the field's nodes (same response key) in its info.
  return {
    field,
    node,
    detail: selectsAnyBelow(
      { fieldNodes: nodes, fragments: info.fragments },
      ['edges', 'node'],
      INTERVAL_DETAIL_FIELDS,
    ),
  };
}

/**
 * A history page with the open interval of a cluster not observed now ended where its observation
 * ended, and the rest shown as a stale interval of the last status (what the next tick will record):
 * history never shows an unobserved span as the status read last. When the page has no room for
 * the extra interval, or the observation ended before the interval began, the open interval itself
 * is marked stale.
 */
function withUnobservedTail(
  page: Page<PhaseIntervalParent>,
  observation: ObservationState,
  first: number,
  until: Date,
): Page<PhaseIntervalParent> {
  if (observation.state === 'OBSERVED') return page;
  const last = page.items[page.items.length - 1];
  if (last === undefined || last.to !== null || page.hasMore) return page;
  const reason = observation.state;
  const since = observation.since;
  // The window ends before the observation did: all of it was vouched for.
  if (since !== null && since >= until) return page;
  const head = page.items.slice(0, -1);
  if (since === null || since <= last.from || page.items.length >= first)
    return { ...page, items: [...head, { ...last, stale: true, staleReason: reason }] };
  return {
    ...page,
    items: [
      ...head,
      { ...last, to: since },
      { ...last, id: String(since.getTime()), from: since, stale: true, staleReason: reason },
    ],
  };
}

async function resourcePage(
  ctx: GraphqlContext,
  phase: { id: number; cluster: string },
  args: PhaseResourcesArgs,
  at?: Date,
) {
  const first = pageSize(args.first, 100);
  const after = typeof args.after === 'string' ? decodeCursor(args.after, isKeyCursor).k : undefined;
  const page = await ctx.read.history.listResources(phase.id, {
    filter: toResourceFilter(args.filter),
    first,
    ...(at ? { at } : {}),
    ...(after !== undefined ? { after } : {}),
  });
  const view = { cluster: phase.cluster, at: at ?? new Date(), live: at === undefined };
  return toConnection({ ...page, items: page.items.map((r) => ({ ...r, view })) }, (r) => encodeCursor({ k: r.key }));
}

export const phaseResolvers: Pick<
  Resolvers,
  'Phase' | 'PhaseSnapshot' | 'PhaseInterval' | 'PhaseCondition' | 'Resource' | 'ManifestVersion'
> = {
  Phase: {
    id: (p) => String(p.id),
    status: (p) => (p.current === null ? null : toStatus(p.current.status)),
    message: (p) => p.current?.message ?? '',
    summary: (p) => toCounts(p.current?.summary ?? {}),
    appliedSummary: async (p, _args, ctx) => toAppliedSummary(await ctx.loaders.appliedCounts.load(p.id)),
    conditions: async (p, _args, ctx) =>
      toConditions(p.current?.conditions ?? [], await ctx.loaders.phaseConditions.load(p.id)),
    stale: (p) => phaseStaleness(p, new Date()).reason !== null,
    staleReason: (p) => phaseStaleness(p, new Date()).reason,
    lastGoodReadAt: (p) =>
      p.current?.stale ? (p.current.staleSince ?? p.clusterLastGoodReadAt) : p.clusterLastGoodReadAt,
    // What the phase's read already brought is answered as it is, without a promise per field
    // (a page of 1,000 phases would otherwise make graphql-js await every node); else a DataLoader.
    since: (p, _args, ctx) =>
      p.current === null ? null : p.since !== undefined ? p.since : ctx.loaders.phaseSince.load(p.id),
    worstResource: (p, _args, ctx) => {
      if (!p.current?.worstResource) return null;
      const view = { cluster: p.cluster, at: new Date(), live: true };
      if (p.worstResource !== undefined) return p.worstResource && { ...p.worstResource, view };
      return ctx.loaders.currentResource
        .load({ phaseId: p.id, key: p.current.worstResource })
        .then((r) => r && { ...r, view });
    },
    resources: (p, args, ctx) => resourcePage(ctx, p, args),
    statusAt: async (p, { at }, ctx) => {
      const interval = await ctx.read.history.phaseStatusAt(p.id, at);
      if (interval === null) return null;
      // The open interval is vouched for only while the cluster was observed.
      const { observation } = phaseStaleness(p, new Date());
      if (interval.to === null && !observedAt(observation, at) && observation.state !== 'OBSERVED') {
        const from =
          observation.since !== null && observation.since > interval.from ? observation.since : interval.from;
        return {
          phaseId: p.id,
          cluster: p.cluster,
          at,
          interval: { ...interval, stale: true, from },
          staleReason: observation.state,
        };
      }
      return { phaseId: p.id, cluster: p.cluster, at, interval, staleReason: storedStaleReason(interval) };
    },
    history: async (p, args, ctx, info) => {
      const read = toHistoryRead(args, { detail: selectsAnyBelow(info, ['edges', 'node'], INTERVAL_DETAIL_FIELDS) });
      // The page the phase's lookup read along with it (historyAskBelow), when it is this one.
      const stored =
        p.history?.key === read.key ? p.history.page : await ctx.read.history.listPhaseIntervals(p.id, read);
      const page = withUnobservedTail(stored, phaseStaleness(p, new Date()).observation, read.first, read.range.to);
      return toConnection(page, (i) => encodeCursor({ f: i.from.toISOString(), i: i.id }));
    },
    conditionHistory: async (p, args, ctx) => {
      const to = args.to ?? new Date();
      if (to.getTime() < args.from.getTime()) throw badUserInput('conditionHistory: to is before from');
      const first = pageSize(args.first, 100);
      const after = typeof args.after === 'string' ? decodeCursor(args.after, isConditionCursor) : undefined;
      // The phase is already one the caller may see; its conditions come with it.
      const rows = await ctx.read.conditions.conditionIntervals(
        p.id,
        { from: args.from, to },
        {
          first: first + 1,
          ...(args.type != null ? { type: args.type } : {}),
          ...(after ? { after: { from: new Date(after.f), type: after.t } } : {}),
        },
      );
      return toConnection({ items: rows.slice(0, first), hasMore: rows.length > first }, (i) =>
        encodeCursor({ f: i.from.toISOString(), t: i.type }),
      );
    },
    changes: async (p, args, ctx) => {
      if (args.from && args.to && args.from.getTime() > args.to.getTime())
        throw badUserInput('changes: to is before from');
      const filter = { phaseId: p.id, ...(args.from ? { from: args.from } : {}), ...(args.to ? { to: args.to } : {}) };
      // The phase is already one the caller may see.
      const page = await ctx.read.history.listStatusChanges(
        FULL_ACCESS,
        filter,
        pageSize(args.first, 100),
        parseSeq(args.after),
      );
      return {
        pageInfo: toConnection(page, (c) => c.seq.toString()).pageInfo,
        edges: page.items.map((c) => ({ cursor: c.seq.toString(), node: toStatusChange(c) })),
      };
    },
    manifest: async (p, args, ctx) => {
      const record = await ctx.read.history.manifestAt(p.id, args.at ?? new Date());
      return record === null ? null : toManifest(record);
    },
    manifests: async (p, args, ctx) => {
      // The phase is one the caller may see; a member of another namespace may not be.
      const mayRead = (namespace: string) => canSee(ctx.principal, p.cluster, namespace === '' ? null : namespace);
      const page = await listManifestVersions(
        ctx.read.history,
        p.id,
        pageSize(args.first, 20),
        intervalCursor(args.after, isRowIdText),
        mayRead,
      );
      return toConnection(page, (v) => encodeCursor({ f: v.record.from.toISOString(), i: String(v.record.id) }));
    },
  },
  PhaseSnapshot: {
    at: (s) => s.at,
    status: (s) => toStatus(s.interval.status),
    message: (s) => s.interval.message,
    summary: (s) => toCounts(s.interval.summary),
    appliedSummary: async (s, _args, ctx) => toAppliedSummary(await ctx.read.history.countApplied([s.phaseId], s.at)),
    conditions: async (s, _args, ctx) =>
      toConditions(s.interval.conditions, await ctx.read.conditions.conditionsAt(s.phaseId, s.at)),
    stale: (s) => s.interval.stale,
    staleReason: (s) => s.staleReason,
    from: (s) => s.interval.from,
    to: (s) => s.interval.to,
    resources: (s, args, ctx) => resourcePage(ctx, { id: s.phaseId, cluster: s.cluster }, args, s.at),
  },
  PhaseInterval: {
    staleReason: (i) => (i.staleReason !== undefined ? i.staleReason : storedStaleReason(i)),
    message: (i) => detailOf(i).message,
    summary: (i) => toCounts(detailOf(i).summary),
    worstResource: (i) => detailOf(i).worstResource,
  },
  PhaseCondition: {
    // Conditions keep Kubernetes' RFC 3339 strings; the DateTime scalar takes Dates.
    lastTransitionTime: (c) =>
      c.lastTransitionTime === null || c.lastTransitionTime === '' ? null : new Date(c.lastTransitionTime),
  },
  Resource: {
    group: (r) => r.key.split('/')[0] ?? '',
    kind: (r) => r.key.split('/')[1] ?? '',
    namespace: (r) => r.key.split('/')[2] ?? '',
    name: (r) => r.key.split('/').slice(3).join('/'),
    customHealth: (r) => toCustomHealth(r.customHealth),
    since: (r, _args, ctx) =>
      r.since ??
      ctx.loaders.resourceSince.load({ phaseId: r.phaseId, key: r.key, at: r.from }).then((since) => since ?? r.from),
    // Only resources read as a phase's (which the caller may see) carry a view; a member of a
    // namespace the token may not read is withheld, as in ManifestVersion.changes.
    revision: (r, _args, ctx) => {
      if (r.revisionId === null || r.view === undefined) return null;
      const namespace = r.key.split('/')[2] ?? '';
      return {
        revisionId: r.revisionId,
        at: r.view.at,
        withheld: !canSee(ctx.principal, r.view.cluster, namespace === '' ? null : namespace),
      };
    },
    children: (r, _args, ctx) => resourceChildren(r, ctx),
    liveStatus: (r, _args, ctx) => resourceLiveStatus(r, ctx),
  },
  ManifestVersion: {
    manifest: (v) => toManifest(v.record),
    previousHash: (v) => v.record.previous?.hash ?? null,
    revisionsChanged: (v) =>
      v.revisionsChanged.map((c) => ({
        key: c.key,
        fromRevision: c.fromRevision === null ? null : String(c.fromRevision),
        toRevision: c.toRevision === null ? null : String(c.toRevision),
      })),
  },
};
