/** Resolvers of Phase and the types hanging off it (resources, snapshots, intervals, manifests). */
import type { PhaseResourcesArgs, Resolvers, ResourceFilter as ResourceFilterInput } from '../../generated/graphql.ts';
import { listManifestVersions } from '../../services/read-manifests.ts';
import type { IntervalCursor, ResourceFilter } from '../../store/read-history.ts';
import type { PhaseIntervalDetail, PhaseIntervalRecord } from '../../store/read-types.ts';
import type { GraphqlContext } from '../context.ts';
import { decodeCursor, encodeCursor, pageSize, parseSeq, toConnection } from '../cursor.ts';
import { badUserInput } from '../errors.ts';
import { selectsAnyBelow } from '../selection.ts';
import { toConditions, toCounts, toCustomHealth, toManifest, toStatus, toStatusChange } from './shapes.ts';

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

function isIntervalCursor(value: unknown): value is { f: string; i: string } {
  const v = value as { f?: unknown; i?: unknown } | null;
  return typeof v === 'object' && v !== null && typeof v.f === 'string' && !Number.isNaN(Date.parse(v.f)) && typeof v.i === 'string' && /^\d+$/.test(v.i);
}

function intervalCursor(after: string | null | undefined): IntervalCursor | undefined {
  if (typeof after !== 'string') return undefined;
  const c = decodeCursor(after, isIntervalCursor);
  return { from: new Date(c.f), id: c.i };
}

/** PhaseInterval fields read from the interval's status detail. */
const INTERVAL_DETAIL_FIELDS = new Set(['message', 'summary', 'worstResource']);

function detailOf(interval: PhaseIntervalRecord): PhaseIntervalDetail {
  // The history resolver reads the detail whenever the query may select one of these fields.
  if (interval.detail === undefined) throw new Error('a phase interval was read without its detail, yet a detail field was asked');
  return interval.detail;
}

async function resourcePage(ctx: GraphqlContext, phaseId: number, args: PhaseResourcesArgs, at?: Date) {
  const first = pageSize(args.first, 100);
  const after = typeof args.after === 'string' ? decodeCursor(args.after, isKeyCursor).k : undefined;
  const page = await ctx.read.history.listResources(phaseId, { filter: toResourceFilter(args.filter), first, ...(at ? { at } : {}), ...(after !== undefined ? { after } : {}) });
  return toConnection(page, (r) => encodeCursor({ k: r.key }));
}


export const phaseResolvers: Pick<Resolvers, 'Phase' | 'PhaseSnapshot' | 'PhaseInterval' | 'PhaseCondition' | 'Resource' | 'ManifestVersion'> = {
  Phase: {
    id: (p) => String(p.id),
    status: (p) => (p.current === null ? null : toStatus(p.current.status)),
    message: (p) => p.current?.message ?? '',
    summary: (p) => toCounts(p.current?.summary ?? {}),
    conditions: (p) => toConditions(p.current?.conditions ?? []),
    stale: (p) => p.current?.stale ?? false,
    lastGoodReadAt: (p) => (p.current?.stale ? (p.current.staleSince ?? p.clusterLastGoodReadAt) : p.clusterLastGoodReadAt),
    // What the phase's read already brought is answered as it is, without a promise per field
    // (a page of 1,000 phases would otherwise make graphql-js await every node); else a DataLoader.
    since: (p, _args, ctx) => (p.current === null ? null : p.since !== undefined ? p.since : ctx.loaders.phaseSince.load(p.id)),
    worstResource: (p, _args, ctx) => {
      if (!p.current?.worstResource) return null;
      if (p.worstResource !== undefined) return p.worstResource;
      return ctx.loaders.currentResource.load({ phaseId: p.id, key: p.current.worstResource });
    },
    resources: (p, args, ctx) => resourcePage(ctx, p.id, args),
    statusAt: async (p, { at }, ctx) => {
      const interval = await ctx.read.history.phaseStatusAt(p.id, at);
      return interval === null ? null : { phaseId: p.id, at, interval };
    },
    history: async (p, args, ctx, info) => {
      const from = args.from;
      const to = args.to ?? new Date();
      if (to.getTime() < from.getTime()) throw badUserInput('history: to is before from');
      const detail = selectsAnyBelow(info, ['edges', 'node'], INTERVAL_DETAIL_FIELDS);
      const page = await ctx.read.history.listPhaseIntervals(p.id, { from, to }, pageSize(args.first, 100), intervalCursor(args.after), { detail });
      return toConnection(page, (i) => encodeCursor({ f: i.from.toISOString(), i: i.id }));
    },
    changes: async (p, args, ctx) => {
      const filter = { phaseId: p.id, ...(args.from ? { from: args.from } : {}), ...(args.to ? { to: args.to } : {}) };
      // The phase is already one the caller may see.
      const page = await ctx.read.history.listStatusChanges({ clusters: [], namespaces: [] }, filter, pageSize(args.first, 100), parseSeq(args.after));
      return { pageInfo: toConnection(page, (c) => c.seq.toString()).pageInfo, edges: page.items.map((c) => ({ cursor: c.seq.toString(), node: toStatusChange(c) })) };
    },
    manifest: async (p, args, ctx) => {
      const record = await ctx.read.history.manifestAt(p.id, args.at ?? new Date());
      return record === null ? null : toManifest(record);
    },
    manifests: async (p, args, ctx) => {
      const page = await listManifestVersions(ctx.read.history, p.id, pageSize(args.first, 20), intervalCursor(args.after));
      return toConnection(page, (v) => encodeCursor({ f: v.record.from.toISOString(), i: String(v.record.id) }));
    },
  },
  PhaseSnapshot: {
    at: (s) => s.at,
    status: (s) => toStatus(s.interval.status),
    message: (s) => s.interval.message,
    summary: (s) => toCounts(s.interval.summary),
    conditions: (s) => toConditions(s.interval.conditions),
    stale: (s) => s.interval.stale,
    from: (s) => s.interval.from,
    to: (s) => s.interval.to,
    resources: (s, args, ctx) => resourcePage(ctx, s.phaseId, args, s.at),
  },
  PhaseInterval: {
    message: (i) => detailOf(i).message,
    summary: (i) => toCounts(detailOf(i).summary),
    worstResource: (i) => detailOf(i).worstResource,
  },
  PhaseCondition: {
    // Conditions keep Kubernetes' RFC 3339 strings; the DateTime scalar takes Dates.
    lastTransitionTime: (c) => (c.lastTransitionTime ? new Date(c.lastTransitionTime) : null),
  },
  Resource: {
    group: (r) => r.key.split('/')[0] ?? '',
    kind: (r) => r.key.split('/')[1] ?? '',
    namespace: (r) => r.key.split('/')[2] ?? '',
    name: (r) => r.key.split('/').slice(3).join('/'),
    customHealth: (r) => toCustomHealth(r.customHealth),
    since: (r, _args, ctx) => r.since ?? ctx.loaders.resourceSince.load({ phaseId: r.phaseId, key: r.key, at: r.from }).then((since) => since ?? r.from),
  },
  ManifestVersion: {
    manifest: (v) => toManifest(v.record),
    previousHash: (v) => v.record.previous?.hash ?? null,
    revisionsChanged: (v) => v.revisionsChanged.map((c) => ({ key: c.key, fromRevision: c.fromRevision === null ? null : String(c.fromRevision), toRevision: c.toRevision === null ? null : String(c.toRevision) })),
  },
};
