/** Resolvers of Phase and the types hanging off it (resources, snapshots, intervals, manifests). */
import type { IResolvers } from '@graphql-tools/utils';
import { listManifestVersions, type ManifestVersion } from '../../services/read-manifests.ts';
import type { IntervalCursor, ResourceFilter } from '../../store/read-history.ts';
import type { PhaseRecord, PhaseStatusRecord, ResourceRecord } from '../../store/read-types.ts';
import type { GraphqlContext } from '../context.ts';
import { decodeCursor, encodeCursor, pageSize, parseSeq, toConnection } from '../cursor.ts';
import { badUserInput } from '../errors.ts';
import { toCounts, toManifest, toStatusChange } from './shapes.ts';

/** Arguments of Phase and PhaseSnapshot fields, as the SDL declares them. */
interface PageArgs {
  first?: number | null;
  after?: string | null;
}
interface ResourcesArgs extends PageArgs {
  filter?: ResourceFilterInput | null;
}
interface WindowArgs extends PageArgs {
  from?: Date | null;
  to?: Date | null;
}

/** A phase as of a moment: its interval and the moment. */
interface SnapshotParent {
  phaseId: number;
  at: Date;
  interval: PhaseStatusRecord;
}

interface ResourceFilterInput {
  kind?: string | null;
  namespace?: string | null;
  status?: string[] | null;
}

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

async function resourcePage(ctx: GraphqlContext, phaseId: number, args: ResourcesArgs, at?: Date) {
  const first = pageSize(args.first, 100);
  const after = typeof args.after === 'string' ? decodeCursor(args.after, isKeyCursor).k : undefined;
  const page = await ctx.read.history.listResources(phaseId, { filter: toResourceFilter(args.filter), first, ...(at ? { at } : {}), ...(after !== undefined ? { after } : {}) });
  return toConnection(page, (r) => encodeCursor({ k: r.key }));
}


export const phaseResolvers: IResolvers<unknown, GraphqlContext> = {
  Phase: {
    id: (p: PhaseRecord) => String(p.id),
    status: (p: PhaseRecord) => p.current?.status ?? null,
    message: (p: PhaseRecord) => p.current?.message ?? '',
    summary: (p: PhaseRecord) => toCounts(p.current?.summary ?? {}),
    conditions: (p: PhaseRecord) => p.current?.conditions ?? [],
    stale: (p: PhaseRecord) => p.current?.stale ?? false,
    lastGoodReadAt: (p: PhaseRecord) => (p.current?.stale ? (p.current.staleSince ?? p.clusterLastGoodReadAt) : p.clusterLastGoodReadAt),
    since: (p: PhaseRecord, _args, ctx) => (p.current === null ? null : ctx.loaders.phaseSince.load(p.id)),
    worstResource: (p: PhaseRecord, _args, ctx) =>
      p.current?.worstResource ? ctx.loaders.currentResource.load({ phaseId: p.id, key: p.current.worstResource }) : null,
    resources: (p: PhaseRecord, args: ResourcesArgs, ctx) => resourcePage(ctx, p.id, args),
    statusAt: async (p: PhaseRecord, { at }: { at: Date }, ctx): Promise<SnapshotParent | null> => {
      const interval = await ctx.read.history.phaseStatusAt(p.id, at);
      return interval === null ? null : { phaseId: p.id, at, interval };
    },
    history: async (p: PhaseRecord, args: WindowArgs & { from: Date }, ctx) => {
      const from = args.from;
      const to = args.to ?? new Date();
      if (to.getTime() < from.getTime()) throw badUserInput('history: to is before from');
      const page = await ctx.read.history.listPhaseIntervals(p.id, { from, to }, pageSize(args.first, 100), intervalCursor(args.after));
      return toConnection(page, (i) => encodeCursor({ f: i.from.toISOString(), i: i.id }));
    },
    changes: async (p: PhaseRecord, args: WindowArgs, ctx) => {
      const filter = { phaseId: p.id, ...(args.from ? { from: args.from } : {}), ...(args.to ? { to: args.to } : {}) };
      // The phase is already one the caller may see.
      const page = await ctx.read.history.listStatusChanges({ clusters: [], namespaces: [] }, filter, pageSize(args.first, 100), parseSeq(args.after));
      return { pageInfo: toConnection(page, (c) => c.seq.toString()).pageInfo, edges: page.items.map((c) => ({ cursor: c.seq.toString(), node: toStatusChange(c) })) };
    },
    manifest: async (p: PhaseRecord, args: { at?: Date | null }, ctx) => {
      const record = await ctx.read.history.manifestAt(p.id, args.at ?? new Date());
      return record === null ? null : toManifest(record);
    },
    manifests: async (p: PhaseRecord, args: PageArgs, ctx) => {
      const page = await listManifestVersions(ctx.read.history, p.id, pageSize(args.first, 20), intervalCursor(args.after));
      return toConnection(page, (v) => encodeCursor({ f: v.record.from.toISOString(), i: String(v.record.id) }));
    },
  },
  PhaseSnapshot: {
    at: (s: SnapshotParent) => s.at,
    status: (s: SnapshotParent) => s.interval.status,
    message: (s: SnapshotParent) => s.interval.message,
    summary: (s: SnapshotParent) => toCounts(s.interval.summary),
    conditions: (s: SnapshotParent) => s.interval.conditions,
    stale: (s: SnapshotParent) => s.interval.stale,
    from: (s: SnapshotParent) => s.interval.from,
    to: (s: SnapshotParent) => s.interval.to,
    resources: (s: SnapshotParent, args: ResourcesArgs, ctx) => resourcePage(ctx, s.phaseId, args, s.at),
  },
  PhaseInterval: {
    summary: (i: PhaseStatusRecord) => toCounts(i.summary),
  },
  Resource: {
    group: (r: ResourceRecord) => r.key.split('/')[0] ?? '',
    kind: (r: ResourceRecord) => r.key.split('/')[1] ?? '',
    namespace: (r: ResourceRecord) => r.key.split('/')[2] ?? '',
    name: (r: ResourceRecord) => r.key.split('/').slice(3).join('/'),
    customHealth: (r: ResourceRecord) => r.customHealth,
    since: async (r: ResourceRecord, _args, ctx) => (await ctx.loaders.resourceSince.load({ phaseId: r.phaseId, key: r.key, at: r.from })) ?? r.from,
  },
  ManifestVersion: {
    manifest: (v: ManifestVersion) => toManifest(v.record),
    previousHash: (v: ManifestVersion) => v.record.previous?.hash ?? null,
    revisionsChanged: (v: ManifestVersion) => v.revisionsChanged.map((c) => ({ key: c.key, fromRevision: c.fromRevision === null ? null : String(c.fromRevision), toRevision: c.toRevision === null ? null : String(c.toRevision) })),
  },
};
