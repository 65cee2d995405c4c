/**
 * `phaselog status [phase]`: phases now (or at `--at`), like `flux get` / `kubectl get`, and with
 * `--watch` their status changes as they happen. The watch reads the change log's head before the
 * list and subscribes after it, so no change falls between the two; a reconnect resumes after the
 * last change received, and `--after SEQ` resumes a stream a consumer stopped reading.
 */
import { stringify } from 'yaml';
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import {
  columnWidths,
  formatAgo,
  formatRef,
  isDataFormat,
  paintStatus,
  parseTime,
  phaseName,
  renderData,
  renderList,
  renderStreamItem,
  renderTable,
} from '../format.ts';
import type { OutputFormat } from '../format.ts';
import { resolvePhase } from '../phase-arg.ts';
import { collectPages } from '../paging.ts';
import { severityOf } from '../../status/severity.ts';
import type { ResourceStatus } from '../../status/types.ts';
import type { PhaseAnswer, StatusCounts } from '../../graphql/answers.ts';
import type { Connection } from '../paging.ts';
import { readTrees, renderTree, renderTreeData } from './status-tree.ts';

const SUMMARY = 'summary { current inProgress failed terminating notFound unknown total }';
const PHASE_FIELDS = `id cluster namespace name source labels status message since stale staleReason lastGoodReadAt ${SUMMARY}
  worstResource { group kind namespace name status message }`;
const APPLIED_SUMMARY =
  'appliedSummary { strategy { value count } actuation { value count } reconcile { value count } sync { value count } }';
const AT_FIELDS = `statusAt(at: $at) { status message from stale staleReason ${SUMMARY} ${APPLIED_SUMMARY} }`;
const RESOURCE_FIELDS =
  'group kind namespace name status reason message since applied { strategy actuation reconcile sync }';

const LIST = `query Phases($filter: PhaseFilter, $after: String) {
  phases(filter: $filter, first: 100, after: $after) { edges { node { ${PHASE_FIELDS} } } pageInfo { hasNextPage endCursor } }
}`;
const LIST_AT = `query PhasesAt($filter: PhaseFilter, $after: String, $at: DateTime!) {
  phases(filter: $filter, first: 100, after: $after) { edges { node { ${PHASE_FIELDS} ${AT_FIELDS} } } pageInfo { hasNextPage endCursor } }
}`;
const ONE = `query Phase($id: ID!) { phase(id: $id) { ${PHASE_FIELDS} ${APPLIED_SUMMARY} } }`;
const RESOURCES = `query Resources($id: ID!, $after: String) {
  phase(id: $id) { resources(first: 100, after: $after) { edges { node { ${RESOURCE_FIELDS} } } pageInfo { hasNextPage endCursor } } }
}`;
const ONE_AT = `query PhaseAt($id: ID!, $at: DateTime!) { phase(id: $id) { ${PHASE_FIELDS} ${APPLIED_SUMMARY} ${AT_FIELDS} } }`;
const RESOURCES_AT = `query ResourcesAt($id: ID!, $at: DateTime!, $after: String) {
  phase(id: $id) { statusAt(at: $at) { resources(first: 100, after: $after) { edges { node { ${RESOURCE_FIELDS} } } pageInfo { hasNextPage endCursor } } } }
}`;
const REVISION_FIELDS = `${RESOURCE_FIELDS} conditions revision { hash at content truncated }`;
// Now only: the live status block is not recorded, so `--at` has none.
const RESOURCES_DETAIL = `query ResourcesDetail($id: ID!, $after: String) {
  phase(id: $id) { resources(first: 100, after: $after) { edges { node { ${REVISION_FIELDS} liveStatus { status readAt unknownReason } } } pageInfo { hasNextPage endCursor } } }
}`;
const RESOURCES_DETAIL_AT = `query ResourcesDetailAt($id: ID!, $at: DateTime!, $after: String) {
  phase(id: $id) { statusAt(at: $at) { resources(first: 100, after: $after) { edges { node { ${REVISION_FIELDS} } } pageInfo { hasNextPage endCursor } } } }
}`;
const HEAD = `query Head($filter: StatusChangeFilter) { statusChangeHead(filter: $filter) }`;
const WATCH = `subscription Watch($filter: StatusChangeFilter, $after: String) {
  phaseStatusChanged(filter: $filter, after: $after) { seq at cluster phaseId phase { namespace name } fromStatus toStatus message }
}`;
const CONDITIONS = `query PhaseConditions($id: ID!) { phase(id: $id) { conditions { type source status reason message lastTransitionTime stale } } }`;

/** `health=False` as the API's condition filter. */
export function parseConditionFilter(value: string): { type: string; status: string } {
  const match = /^([A-Za-z][A-Za-z0-9._/-]*)=(True|False|Unknown)$/.exec(value);
  if (match === null)
    throw new CliError(
      `--condition ${JSON.stringify(value)}: expected type=True|False|Unknown, e.g. health=False`,
      EXIT.usage,
    );
  return { type: match[1] as string, status: match[2] as string };
}

/** A phase condition as `status <phase>` shows it: derived (Ready, ...) or from a check. */
interface ConditionItem {
  type: string;
  source: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string | null;
  stale: boolean;
}

async function readConditions(ctx: CommandContext, id: string): Promise<ConditionItem[]> {
  return (
    (await ctx.api.query<{ phase: { conditions: ConditionItem[] } | null }>(CONDITIONS, { id })).phase?.conditions ?? []
  );
}

function conditionRow(ctx: CommandContext, c: ConditionItem): string[] {
  const status =
    c.status === 'True'
      ? ctx.paint('green', c.status)
      : c.status === 'False'
        ? ctx.paint('red', c.status)
        : ctx.paint('yellow', c.status);
  return [
    c.type,
    c.source,
    c.stale ? `${status} (stale)` : status,
    formatAgo(c.lastTransitionTime, ctx.now()),
    c.message === '' ? c.reason : `${c.reason}: ${c.message}`,
  ];
}

const LABELS = `query PhaseLabels($id: ID!) { phase(id: $id) { source labels } }`;

interface ResourceRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** What the tool that applied a member recorded about it (Resource.applied). */
interface ApiApplied {
  strategy: string | null;
  actuation: string | null;
  reconcile: string | null;
  sync: string | null;
}

/** Members per value of each applier status field (Phase.appliedSummary). */
type ApiAppliedSummary = Record<keyof ApiApplied, { value: string; count: number }[]>;

interface ApiResource extends ResourceRef {
  status: string;
  reason: string | null;
  message: string;
  since: string | null;
  applied: ApiApplied | null;
  /** Asked for by `-o detail` only: kstatus' result conditions, as recorded. */
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  /** Asked for by `-o detail` only. */
  revision?: { hash: string | null; at: string; content: string | null; truncated: boolean } | null;
  /** Asked for by `-o detail` now only: the object's `status` block as the cluster has it. */
  liveStatus?: { status: unknown; readAt: string | null; unknownReason: string | null } | null;
}

interface ApiPhase extends PhaseAnswer {
  summary: StatusCounts;
  worstResource: (ResourceRef & { status: string; message: string }) | null;
  /** Asked for when one phase is shown. */
  appliedSummary?: ApiAppliedSummary | null;
  statusAt?: {
    status: string;
    message: string;
    from: string;
    stale: boolean;
    staleReason: string | null;
    summary: StatusCounts;
    appliedSummary?: ApiAppliedSummary | null;
  } | null;
}

/** A phase as `-o json|yaml` prints it: flat, the status as of `--at` when given. */
type PhaseItem = Omit<ApiPhase, 'id' | 'worstResource' | 'statusAt'> & {
  kind: 'Phase';
  /** The worst resource's ref. */
  worstResource: string | null;
  at?: string;
  resources?: ResourceItem[];
  seq?: string;
};

/** A resource as `-o json|yaml` prints it: its fields and its ref. */
type ResourceItem = ApiResource & { ref: string };

interface ChangeItem {
  kind: 'StatusChange';
  seq: string;
  at: string;
  cluster: string;
  phase: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  message: string;
}

/** The six statuses in the order help and errors list them (from good to gone). */
export const STATUSES = [
  'Current',
  'InProgress',
  'Failed',
  'Terminating',
  'NotFound',
  'Unknown',
] as const satisfies readonly ResourceStatus[];

/** A status as the user typed it (`failed`, `inprogress`) in the API's spelling. */
export function parseStatus(value: string): string {
  const found = STATUSES.find((s) => s.toLowerCase() === value.trim().toLowerCase());
  if (!found) throw new CliError(`unknown status "${value}" (use ${STATUSES.join(', ')})`, EXIT.usage);
  return found;
}

/**
 * A label selector as the API filters phases: equality only (`app=web,tier==front`). Set-based and
 * negative selectors are refused rather than silently ignored.
 */
export function parseSelector(selector: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of selector.split(',')) {
    const match = /^\s*([A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?)\s*==?\s*([-A-Za-z0-9_.]*)\s*$/.exec(part);
    if (!match)
      throw new CliError(
        `selector "${selector}": only key=value terms are supported (e.g. -l app=web,tier=front)`,
        EXIT.usage,
      );
    labels[match[1] as string] = match[3] as string;
  }
  return labels;
}

/** ` (stale)` for an unreachable cluster, ` (unobserved)` or ` (retired)` for a cluster nobody reads. */
export function staleNote(p: { stale: boolean; staleReason?: string | null }): string {
  if (!p.stale) return '';
  return p.staleReason === 'UNOBSERVED' ? ' (unobserved)' : p.staleReason === 'RETIRED' ? ' (retired)' : ' (stale)';
}

/**
 * EMCO's status modes beside kubectl's formats: `summary` (counts only), `all` (every resource: the
 * table, which is the default), `detail` (each resource's stored object revision and recorded
 * status, and now its live status block) and `rsync` (each member's applier status, with counts).
 */
export const STATUS_MODES = ['summary', 'all', 'detail', 'rsync'] as const;
export type StatusOutput = OutputFormat | (typeof STATUS_MODES)[number];
/** What is printed once `all` is read as the table it is. */
type Shown = Omit<StatusOptions, 'output'> & { output: Exclude<StatusOutput, 'all'> };

export interface StatusOptions {
  phase?: string;
  output: StatusOutput;
  headers: boolean;
  watch: boolean;
  /** Resume a watch after this change seq (skips the initial list). */
  after?: string;
  clusters: string[];
  namespace?: string;
  selector?: string;
  statuses: string[];
  /** `--condition type=Status`: only phases whose condition has that status now. */
  conditions?: string[];
  source?: string;
  at?: string;
  /** `severity` (most severe first, the default) or `name`. */
  sort?: 'severity' | 'name';
  /** One phase's resources with the objects they own (ReplicaSets, Pods), live. */
  tree?: boolean;
}

function toItem(p: ApiPhase, at: Date | undefined): PhaseItem {
  const then = at ? p.statusAt : undefined;
  const worst = p.worstResource;
  return {
    kind: 'Phase',
    cluster: p.cluster,
    namespace: p.namespace,
    name: p.name,
    source: p.source,
    labels: p.labels,
    status: at ? (then?.status ?? null) : p.status,
    since: at ? (then?.from ?? null) : p.since,
    message: at ? (then?.message ?? 'no status recorded at that time') : p.message,
    stale: at ? (then?.stale ?? false) : p.stale,
    staleReason: at ? (then?.staleReason ?? null) : p.staleReason,
    lastGoodReadAt: p.lastGoodReadAt,
    summary: at ? (then?.summary ?? p.summary) : p.summary,
    worstResource: at || !worst ? null : formatRef(worst),
    // Asked for one phase only: a list of phases leaves it out.
    ...(p.appliedSummary !== undefined
      ? { appliedSummary: at ? (then?.appliedSummary ?? null) : p.appliedSummary }
      : {}),
    ...(at ? { at: at.toISOString() } : {}),
  };
}

function toResourceItem(r: ApiResource): ResourceItem {
  return { ref: formatRef(r), ...r };
}

const PHASE_HEADERS = ['NAME', 'CLUSTER', 'STATUS', 'SINCE', 'MESSAGE'];
const WIDE_HEADERS = [
  'NAME',
  'CLUSTER',
  'STATUS',
  'SINCE',
  'CURRENT',
  'SOURCE',
  'WORST RESOURCE',
  'LAST GOOD READ',
  'MESSAGE',
];

function phaseRow(ctx: CommandContext, p: PhaseItem, wide: boolean): string[] {
  const now = ctx.now();
  const status = paintStatus(p.status, ctx.paint, ctx.decorated, staleNote(p));
  const name = `${p.namespace}/${p.name}`;
  if (!wide) return [name, p.cluster, status, formatAgo(p.since, now), p.message];
  return [
    name,
    p.cluster,
    status,
    formatAgo(p.since, now),
    `${p.summary.current}/${p.summary.total}`,
    p.source,
    p.worstResource ?? '-',
    formatAgo(p.lastGoodReadAt, now),
    p.message,
  ];
}

/**
 * A member's applier status in one column: `actuation/reconcile` as cli-utils and kpt record them
 * (`Delete` first for an object the applier deletes), or Argo CD's sync status; `-` for none.
 */
function formatApplied(a: ApiApplied | null): string {
  if (a === null) return '-';
  const parts: string[] = [];
  if (a.strategy !== null && a.strategy !== 'Apply') parts.push(a.strategy);
  if (a.actuation !== null || a.reconcile !== null) parts.push(`${a.actuation ?? '-'}/${a.reconcile ?? '-'}`);
  if (a.sync !== null) parts.push(a.sync);
  return parts.length === 0 ? '-' : parts.join(' ');
}

function resourceRow(ctx: CommandContext, r: ResourceItem, wide: boolean, applied: boolean): string[] {
  const reason = r.reason && r.status === 'Unknown' ? ` (${r.reason})` : '';
  const row = [r.ref, paintStatus(r.status, ctx.paint, ctx.decorated, reason), formatAgo(r.since, ctx.now())];
  if (applied) row.push(formatApplied(r.applied));
  return wide ? [...row, r.reason ?? '-', r.message] : [...row, r.message];
}

/** The resource table's headers; APPLIED only when a member has an applier status. */
function resourceHeaders(wide: boolean, applied: boolean): string[] {
  return [
    'RESOURCE',
    'STATUS',
    'SINCE',
    ...(applied ? ['APPLIED'] : []),
    ...(wide ? ['REASON', 'MESSAGE'] : ['MESSAGE']),
  ];
}

const RSYNC_HEADERS = ['RESOURCE', 'STATUS', 'STRATEGY', 'ACTUATION', 'RECONCILE', 'SYNC'];

/**
 * `-o rsync` (EMCO's rsync-status): the phase, each member's applier status field by field beside
 * its kstatus status, then how many members have each value.
 */
function renderRsync(
  ctx: CommandContext,
  item: PhaseItem,
  resources: ResourceItem[],
  headers: boolean,
): { out: string; note?: string } {
  const rows = resources.map((r) => [
    r.ref,
    paintStatus(r.status, ctx.paint, ctx.decorated),
    r.applied?.strategy ?? '-',
    r.applied?.actuation ?? '-',
    r.applied?.reconcile ?? '-',
    r.applied?.sync ?? '-',
  ]);
  const summary = item.appliedSummary ?? null;
  const counts =
    summary === null
      ? []
      : (['strategy', 'actuation', 'reconcile', 'sync'] as const).flatMap((field) =>
          summary[field].map((c) => [field, c.value, String(c.count)]),
        );
  let out = renderTable(PHASE_HEADERS, [phaseRow(ctx, item, false)], { headers });
  out += '\n' + renderTable(RSYNC_HEADERS, rows, { headers });
  if (counts.length > 0) out += '\n' + renderTable(['FIELD', 'VALUE', 'MEMBERS'], counts, { headers });
  return counts.length > 0
    ? { out }
    : {
        out,
        note: `${phaseName(item)}: no member has an applier status (its ${item.source} inventory records none)\n`,
      };
}

export async function runStatus(ctx: CommandContext, given: StatusOptions): Promise<number> {
  const options: Shown = { ...given, output: given.output === 'all' ? 'table' : given.output };
  const at = options.at ? parseTime(options.at, ctx.now()) : undefined;
  if ((options.output === 'summary' || options.output === 'detail' || options.output === 'rsync') && options.watch)
    throw new CliError(`-o ${options.output} prints once; it cannot be combined with --watch`, EXIT.usage);
  if (options.output === 'rsync' && !options.phase)
    throw new CliError(
      "-o rsync shows one phase's members with their applier status: name a phase (phaselog status <phase> -o rsync)",
      EXIT.usage,
    );
  if (options.output === 'detail' && !options.phase)
    throw new CliError(
      "-o detail shows one phase's stored object revisions: name a phase (phaselog status <phase> -o detail)",
      EXIT.usage,
    );
  if (at && options.watch)
    throw new CliError('--at shows a past moment; it cannot be combined with --watch', EXIT.usage);
  if (options.after !== undefined && !options.watch)
    throw new CliError('--after resumes a watch: use it with --watch', EXIT.usage);
  if (options.after !== undefined && !/^\d+$/.test(options.after))
    throw new CliError(
      `--after needs a change seq (a number from a previous watch); got "${options.after}"`,
      EXIT.usage,
    );
  if (options.phase && (options.statuses.length || options.selector || options.source)) {
    throw new CliError(
      '--status, --selector and --source filter the list of phases; they do not apply to one named phase',
      EXIT.usage,
    );
  }
  if (options.phase && options.clusters.length > 1)
    throw new CliError('name one cluster with --cluster when naming a phase', EXIT.usage);
  if (options.tree) {
    if (!options.phase)
      throw new CliError('--tree shows one phase: name it (phaselog status <phase> --tree)', EXIT.usage);
    if (at)
      throw new CliError(
        '--tree shows owned objects now (trees are live, not recorded); it cannot be combined with --at',
        EXIT.usage,
      );
    if (options.watch) throw new CliError('--tree prints once; it cannot be combined with --watch', EXIT.usage);
    if (
      options.output === 'summary' ||
      options.output === 'detail' ||
      options.output === 'rsync' ||
      options.output === 'name'
    )
      throw new CliError(`--tree does not combine with -o ${options.output}`, EXIT.usage);
  }
  return options.phase ? showPhase(ctx, options, at) : listPhases(ctx, options, at);
}

/** Every page of a phase's resources, then or now; with `revisions`, each with its stored revision. */
async function readResources(
  ctx: CommandContext,
  id: string,
  at: Date | undefined,
  revisions = false,
): Promise<ApiResource[]> {
  if (!at)
    return collectPages<ApiResource>(
      ctx.api,
      revisions ? RESOURCES_DETAIL : RESOURCES,
      { id },
      (d: { phase: { resources: Connection<ApiResource> } | null }) => d.phase?.resources,
    );
  return collectPages<ApiResource>(
    ctx.api,
    revisions ? RESOURCES_DETAIL_AT : RESOURCES_AT,
    { id, at: at.toISOString() },
    (d: { phase: { statusAt: { resources: Connection<ApiResource> } | null } | null }) => d.phase?.statusAt?.resources,
  );
}

const SUMMARY_HEADERS = [
  'NAME',
  'CLUSTER',
  'STATUS',
  'CURRENT',
  'INPROGRESS',
  'FAILED',
  'TERMINATING',
  'NOTFOUND',
  'UNKNOWN',
  'TOTAL',
];

function summaryRow(ctx: CommandContext, p: PhaseItem): string[] {
  const c = p.summary;
  return [
    `${p.namespace}/${p.name}`,
    p.cluster,
    paintStatus(p.status, ctx.paint, ctx.decorated, staleNote(p)),
    ...[c.current, c.inProgress, c.failed, c.terminating, c.notFound, c.unknown, c.total].map(String),
  ];
}

/**
 * What phaselog recorded of a resource's status (then, or now), as comment lines above its stored
 * object: status and reason, message, kstatus' result conditions, the applier's status. Stored
 * revisions hold metadata and spec only, so this is the status block `-o detail` can show.
 */
function recordedStatus(r: ApiResource, now: boolean): string {
  const lines = [
    `# status (${now ? 'recorded now' : 'recorded then'}): ${r.status}${r.reason ? ` (${r.reason})` : ''}`,
  ];
  if (r.message !== '') lines.push(`#   message: ${r.message.replace(/\n/g, ' ')}`);
  for (const c of r.conditions ?? [])
    lines.push(
      `#   condition ${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message.replace(/\n/g, ' ')}` : ''}`,
    );
  if (r.applied !== null) {
    const fields = (['strategy', 'actuation', 'reconcile', 'sync'] as const)
      .filter((f) => r.applied?.[f] != null)
      .map((f) => `${f} ${r.applied?.[f] ?? ''}`);
    lines.push(`#   applied: ${fields.join(', ')}`);
  }
  return lines.join('\n');
}

/** Why a live status block is missing, in words (Resource.liveStatus.unknownReason). */
const LIVE_STATUS_REASONS: Readonly<Record<string, string>> = {
  WITHHELD: "its namespace is outside this token's scope",
  NOT_FOUND: 'the object is gone from the cluster',
  NOT_OWNED: 'no worker reads this cluster now',
  TIMEOUT: "the cluster's worker did not answer in time",
  UNREACHABLE: 'the cluster cannot be reached',
  UNAUTHORIZED: "the cluster refused its worker's credentials",
  FORBIDDEN: 'its worker may not read this object',
  KIND_NOT_FOUND: 'the cluster does not serve this kind',
  THROTTLED: 'the cluster is throttling its worker',
  SERVER_ERROR: 'the cluster answered with an error',
  TOO_LARGE: 'the status block is over 64 KiB',
  BUSY: "the cluster's worker is answering too many requests",
  UNAVAILABLE: 'the API cannot reach the workers (Redis)',
};

/**
 * The object's live status block (Resource.liveStatus), as commented YAML lines, so that each
 * document stays the stored revision; or a line saying why there is none.
 */
function liveStatusLines(r: ApiResource): string {
  const live = r.liveStatus;
  if (live === undefined || live === null) return '';
  if (live.status === null || live.status === undefined) {
    const reason = live.unknownReason ?? 'UNKNOWN';
    return `# live status: not available (${reason}${LIVE_STATUS_REASONS[reason] ? `: ${LIVE_STATUS_REASONS[reason]}` : ''})\n`;
  }
  const body =
    typeof live.status === 'object' && Object.keys(live.status).length === 0
      ? ['#   {}']
      : stringify(live.status, { lineWidth: 0 })
          .trimEnd()
          .split('\n')
          .map((line) => `#   ${line}`);
  return `# live status (read ${live.readAt ?? 'now'}):\n${body.join('\n')}\n`;
}

/** `-o detail`: every resource's stored object revision as YAML documents, each under a comment naming it. */
function renderDetail(ctx: CommandContext, item: PhaseItem, resources: ApiResource[]): string {
  const when = item.at ?? ctx.now().toISOString();
  const head = `# ${phaseName(item)}: ${item.status ?? 'no status'} at ${when} (${item.summary.current}/${item.summary.total} Current)\n`;
  const documents = resources.map((r) => {
    const title = `# ${formatRef(r)}  ${r.status}`;
    const recorded = `${recordedStatus(r, item.at === undefined)}\n${liveStatusLines(r)}`;
    const revision = r.revision;
    if (!revision) return `${title}  (no revision stored: the object was not found or not observed then)\n${recorded}`;
    if (revision.content === null) {
      return revision.hash === null && revision.at
        ? `${title}  (revision withheld: its namespace is outside this token's scope, or retention removed it)\n${recorded}`
        : `${title}\n${recorded}`;
    }
    const cut = revision.truncated ? ' (cut: see the marker line at its end)' : '';
    return `${title}  revision ${revision.hash?.slice(0, 12) ?? '?'}${cut}\n${recorded}${revision.content.endsWith('\n') ? revision.content : `${revision.content}\n`}`;
  });
  return head + (documents.length ? `---\n${documents.join('---\n')}` : '# no resources\n');
}

async function showPhase(ctx: CommandContext, options: Shown, at: Date | undefined): Promise<number> {
  const found = await resolvePhase(ctx.api, options.phase, {
    cluster: options.clusters[0],
    namespace: options.namespace,
  });
  if (options.output === 'summary' || options.output === 'detail' || options.output === 'rsync') {
    const data = await ctx.api.query<{ phase: ApiPhase | null }>(at ? ONE_AT : ONE, {
      id: found.id,
      ...(at ? { at: at.toISOString() } : {}),
    });
    if (!data.phase) throw new CliError(`phase ${phaseName(found)} disappeared`, EXIT.notFound);
    if (at && !data.phase.statusAt)
      throw new CliError(`${phaseName(found)} had no recorded status at ${at.toISOString()}`, EXIT.notFound);
    const item = toItem(data.phase, at);
    if (options.output === 'summary')
      ctx.out(renderTable(SUMMARY_HEADERS, [summaryRow(ctx, item)], { headers: options.headers }));
    else if (options.output === 'rsync') {
      const resources = (await readResources(ctx, found.id, at)).map(toResourceItem);
      const shown = renderRsync(ctx, item, resources, options.headers);
      ctx.out(shown.out);
      if (shown.note !== undefined) ctx.err(shown.note);
    } else ctx.out(renderDetail(ctx, item, await readResources(ctx, found.id, at, true)));
    return EXIT.ok;
  }
  if (options.tree) {
    const data = await ctx.api.query<{ phase: ApiPhase | null }>(ONE, { id: found.id });
    if (!data.phase) throw new CliError(`phase ${phaseName(found)} disappeared`, EXIT.notFound);
    const item = toItem(data.phase, undefined);
    const trees = await readTrees(ctx, found.id);
    if (isDataFormat(options.output)) ctx.out(renderTreeData(item, trees, options.output));
    else {
      ctx.out(renderTable(PHASE_HEADERS, [phaseRow(ctx, item, false)], { headers: options.headers }));
      ctx.out('\n');
      ctx.out(renderTree(ctx, trees));
    }
    return EXIT.ok;
  }
  const head = options.watch && options.after === undefined ? await readHead(ctx, { phaseId: found.id }) : undefined;
  const data = await ctx.api.query<{ phase: ApiPhase | null }>(at ? ONE_AT : ONE, {
    id: found.id,
    ...(at ? { at: at.toISOString() } : {}),
  });
  if (!data.phase) throw new CliError(`phase ${phaseName(found)} disappeared`, EXIT.notFound);
  if (at && !data.phase.statusAt)
    throw new CliError(`${phaseName(found)} had no recorded status at ${at.toISOString()}`, EXIT.notFound);
  const item = toItem(data.phase, at);
  let widths: number[] | undefined;
  if (options.after === undefined) {
    const resources = options.output === 'name' ? [] : (await readResources(ctx, found.id, at)).map(toResourceItem);
    // Conditions now (with `--at`, the phase's statusAt has those of then; not shown here yet).
    const conditions = options.output === 'name' || at ? [] : await readConditions(ctx, found.id);
    if (options.output === 'name') ctx.out(`${phaseName(item)}\n`);
    else if (options.watch && isDataFormat(options.output))
      ctx.out(
        renderStreamItem(
          { ...item, resources, ...(at ? {} : { conditions }), ...(head !== undefined ? { seq: head ?? '0' } : {}) },
          options.output,
        ),
      );
    else if (isDataFormat(options.output))
      ctx.out(renderData({ ...item, resources, ...(at ? {} : { conditions }) }, options.output));
    else {
      const wide = options.output === 'wide';
      const applied = resources.some((r) => r.applied !== null);
      widths = columnWidths(PHASE_HEADERS, [phaseRow(ctx, item, false)]);
      ctx.out(
        renderTable(wide ? WIDE_HEADERS : PHASE_HEADERS, [phaseRow(ctx, item, wide)], { headers: options.headers }),
      );
      ctx.out('\n');
      ctx.out(
        renderTable(
          resourceHeaders(wide, applied),
          resources.map((r) => resourceRow(ctx, r, wide, applied)),
          { headers: options.headers },
        ),
      );
      if (conditions.length > 0) {
        ctx.out('\n');
        ctx.out(
          renderTable(
            ['CONDITION', 'SOURCE', 'STATUS', 'SINCE', 'MESSAGE'],
            conditions.map((c) => conditionRow(ctx, c)),
            { headers: options.headers },
          ),
        );
      }
    }
  }
  if (!options.watch) return EXIT.ok;
  return follow(ctx, options, { phaseId: found.id }, resumePoint(options.after, head), () => true, widths);
}

/** The phases matching the filters, across every `--cluster` given. */
async function readPhases(ctx: CommandContext, options: Shown, at: Date | undefined): Promise<ApiPhase[]> {
  const base: Record<string, unknown> = {};
  if (options.namespace) base.namespace = options.namespace;
  if (options.source) base.source = options.source;
  if (options.selector) base.labels = parseSelector(options.selector);
  // At a past moment the filter applies to the status then, not the current one the API filters on.
  if (options.statuses.length && !at) base.status = options.statuses;
  if (options.conditions?.length) {
    if (at) throw new CliError('--condition filters on conditions now; it does not combine with --at', EXIT.usage);
    base.conditions = options.conditions.map(parseConditionFilter);
  }
  const filters = options.clusters.length ? options.clusters.map((cluster) => ({ ...base, cluster })) : [base];
  const phases: ApiPhase[] = [];
  for (const filter of filters) {
    phases.push(
      ...(await collectPages<ApiPhase>(
        ctx.api,
        at ? LIST_AT : LIST,
        { filter, ...(at ? { at: at.toISOString() } : {}) },
        (d: { phases: Connection<ApiPhase> }) => d.phases,
      )),
    );
  }
  return phases;
}

async function listPhases(ctx: CommandContext, options: Shown, at: Date | undefined): Promise<number> {
  const changeFilter: Record<string, unknown> = {};
  if (options.clusters.length === 1) changeFilter.cluster = options.clusters[0];
  if (options.namespace) changeFilter.namespace = options.namespace;
  const head = options.watch && options.after === undefined ? await readHead(ctx, changeFilter) : undefined;
  let widths: number[] | undefined;
  if (options.after === undefined) {
    let items = (await readPhases(ctx, options, at)).map((p) => toItem(p, at));
    if (at)
      items = items.filter(
        (p) => p.status !== null && (options.statuses.length === 0 || options.statuses.includes(p.status)),
      );
    // The API's pages come by name; across several clusters and at past times the order is made here.
    if (options.sort !== 'name')
      items = items
        .map((p, i) => ({ p, i }))
        .sort((a, b) => severityOf(a.p.status) - severityOf(b.p.status) || a.i - b.i)
        .map(({ p }) => p);
    if (options.output === 'name') ctx.out(items.map((p) => `${phaseName(p)}\n`).join(''));
    else if (options.output === 'summary') {
      if (items.length === 0) ctx.err(at ? `no phase had a status at ${at.toISOString()}\n` : 'no phases found\n');
      else
        ctx.out(
          renderTable(
            SUMMARY_HEADERS,
            items.map((p) => summaryRow(ctx, p)),
            { headers: options.headers },
          ),
        );
    } else if (options.watch && isDataFormat(options.output))
      for (const item of items) ctx.out(renderStreamItem({ ...item, seq: head ?? '0' }, options.output));
    else if (isDataFormat(options.output)) ctx.out(renderList(items, options.output));
    else if (items.length === 0) ctx.err(at ? `no phase had a status at ${at.toISOString()}\n` : 'no phases found\n');
    else {
      const wide = options.output === 'wide';
      widths = columnWidths(
        PHASE_HEADERS,
        items.map((p) => phaseRow(ctx, p, false)),
      );
      ctx.out(
        renderTable(
          wide ? WIDE_HEADERS : PHASE_HEADERS,
          items.map((p) => phaseRow(ctx, p, wide)),
          { headers: options.headers },
        ),
      );
    }
  }
  if (!options.watch) return EXIT.ok;
  return follow(ctx, options, changeFilter, resumePoint(options.after, head), phaseMatcher(ctx, options), widths);
}

/**
 * Where the watch's subscription starts: the user's `--after`, else the head read before the list;
 * an empty log's head is seq 0, so the first change ever is replayed rather than missed.
 */
function resumePoint(after: string | undefined, head: string | null | undefined): string | undefined {
  return after ?? (head === undefined ? undefined : (head ?? '0'));
}

async function readHead(ctx: CommandContext, filter: Record<string, unknown>): Promise<string | null> {
  return (await ctx.api.query<{ statusChangeHead: string | null }>(HEAD, { filter })).statusChangeHead;
}

/**
 * Whether a change's phase passes the filters the subscription cannot apply (several clusters,
 * labels, source, status): what each phase carries is read once and remembered.
 */
function phaseMatcher(
  ctx: CommandContext,
  options: Shown,
): (change: ChangeEvent['phaseStatusChanged']) => Promise<boolean> | boolean {
  const known = new Map<string, Promise<{ source: string; labels: Record<string, string> } | null>>();
  const selector = options.selector ? parseSelector(options.selector) : undefined;
  return (change) => {
    if (options.clusters.length > 1 && !options.clusters.includes(change.cluster)) return false;
    if (options.statuses.length && (change.toStatus === null || !options.statuses.includes(change.toStatus)))
      return false;
    if (!selector && !options.source) return true;
    if (!change.phaseId) return false;
    const id = change.phaseId;
    let facts = known.get(id);
    if (!facts) {
      facts = ctx.api
        .query<{ phase: { source: string; labels: Record<string, string> } | null }>(LABELS, { id })
        .then((d) => d.phase);
      known.set(id, facts);
    }
    return facts.then(
      (p) =>
        p !== null &&
        (!options.source || p.source === options.source) &&
        Object.entries(selector ?? {}).every(([k, v]) => p.labels[k] === v),
    );
  };
}

interface ChangeEvent {
  phaseStatusChanged: {
    seq: string;
    at: string;
    cluster: string;
    phaseId: string | null;
    phase: { namespace: string; name: string } | null;
    fromStatus: string | null;
    toStatus: string | null;
    message: string;
  };
}

/** Print each phase status change from `after` on, until Ctrl-C or the connection is lost for good. */
function follow(
  ctx: CommandContext,
  options: Shown,
  filter: Record<string, unknown>,
  after: string | undefined,
  matches: ReturnType<typeof phaseMatcher>,
  widths: readonly number[] = PHASE_HEADERS.map((h) => h.length),
): Promise<number> {
  const format = options.output;
  // Changes print in seq order even when deciding whether one matches needs a lookup.
  let printing = Promise.resolve();
  return new Promise((resolve) => {
    let last = after;
    const stop = ctx.api.subscribe<ChangeEvent>(
      WATCH,
      { filter, ...(after !== undefined ? { after } : {}) },
      {
        resumeFrom: (data) => data.phaseStatusChanged.seq,
        onEvent: ({ phaseStatusChanged: c }) => {
          const verdict = matches(c);
          printing = printing.then(async () => {
            if (!(await verdict)) return;
            last = c.seq;
            const phase = c.phase ? phaseName({ cluster: c.cluster, ...c.phase }) : null;
            if (isDataFormat(format)) {
              const item: ChangeItem = {
                kind: 'StatusChange',
                seq: c.seq,
                at: c.at,
                cluster: c.cluster,
                phase,
                fromStatus: c.fromStatus,
                toStatus: c.toStatus,
                message: c.message,
              };
              ctx.out(renderStreamItem(item, format));
            } else if (format === 'name') ctx.out(`${phase ?? c.cluster}\n`);
            else {
              const move = `${paintStatus(c.fromStatus, ctx.paint, ctx.decorated)} -> ${paintStatus(c.toStatus, ctx.paint, ctx.decorated)}`;
              ctx.out(
                renderTable(
                  PHASE_HEADERS,
                  [
                    [
                      c.phase ? `${c.phase.namespace}/${c.phase.name}` : '-',
                      c.cluster,
                      move,
                      formatAgo(c.at, ctx.now()),
                      c.message,
                    ],
                  ],
                  { headers: false, minWidths: widths },
                ),
              );
            }
          });
        },
        onError: (error) => {
          ctx.err(`phaselog: ${error.message}${last !== undefined ? ` (resume with --after ${last})` : ''}\n`);
          resolve(error.exitCode);
        },
        onReconnecting: () => ctx.err('phaselog: connection lost; reconnecting\n'),
        onReconnected: () => ctx.err(`phaselog: reconnected; resuming after change ${last ?? '(start)'}\n`),
      },
    );
    const finish = () => {
      stop();
      void printing.then(() => resolve(EXIT.ok));
    };
    process.once('SIGINT', finish);
    process.once('SIGTERM', finish);
  });
}
