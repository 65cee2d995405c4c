/**
 * Reports: the `auditReport` query for a range and a selection, shown inline (typed totals and
 * phases, worst first, and each departure from Current with its cause), downloadable in the four
 * formats `phaselog report` writes, and the stored (scheduled) reports. The form lives in the URL.
 */
import { useMemo, useState, type FormEvent } from 'react';
import { parseDuration } from '../src/duration.ts';
import { ApiError, gql, useQuery } from './api.ts';
import { CliHint } from './cli-hint.tsx';
import { Link, navigate, phasePath, withParams, type Place } from './router.tsx';
import { formatSpan, formatTime, StatusBadge } from './status.tsx';

interface Cause {
  resource: string;
  status: string | null;
  message: string;
}

interface Incident {
  from: string;
  to: string | null;
  durationMs: number;
  reachedFailed: boolean;
  cause: Cause | null;
}

interface ReportPhase {
  cluster: string;
  namespace: string;
  name: string;
  source: string;
  availability: number | null;
  unreachableMs: number;
  unobservedMs: number;
  statusAtEnd: string | null;
  failures: number;
  statusChanges: number;
  flapping: boolean;
  recovery: {
    incidents: Incident[];
    recovered: number;
    meanTimeOutOfCurrentMs: number | null;
    longestTimeOutOfCurrentMs: number | null;
  };
  restore: { restored: number; meanTimeToRestoreMs: number | null; longestTimeToRestoreMs: number | null };
  inventoryChanges: number;
  revisionChanges: number;
}

interface Totals {
  phases: number;
  clusters: number;
  availability: number | null;
  failures: number;
  restored: number;
  meanTimeToRestoreMs: number | null;
  incidents: number;
  meanTimeOutOfCurrentMs: number | null;
  flappingPhases: number;
  outages: number;
  inventoryChanges: number;
  revisionChanges: number;
}

const REPORT = `query Report($from: DateTime!, $to: DateTime, $filter: AuditFilter) {
  auditReport(from: $from, to: $to, filter: $filter) {
    totals { phases clusters availability failures restored meanTimeToRestoreMs incidents meanTimeOutOfCurrentMs flappingPhases outages inventoryChanges revisionChanges }
    phases {
      cluster namespace name source availability unreachableMs unobservedMs statusAtEnd failures statusChanges flapping inventoryChanges revisionChanges
      recovery { recovered meanTimeOutOfCurrentMs longestTimeOutOfCurrentMs incidents { from to durationMs reachedFailed cause { resource status message } } }
      restore { restored meanTimeToRestoreMs longestTimeToRestoreMs }
    }
  }
}`;

const RENDERED = `query Rendered($from: DateTime!, $to: DateTime, $filter: AuditFilter, $format: ReportFormat) {
  auditReport(from: $from, to: $to, filter: $filter, format: $format) { contentType content }
}`;

const STORED = `{ storedReports(first: 50) { id createdAt format params } }`;
const STORED_ONE = `query Stored($id: ID!) { storedReport(id: $id) { id createdAt format content } }`;

/** Each format as the CLI names it, with its file extension and the type a download gets. */
const FORMATS = [
  { format: 'JSON', label: 'JSON', cli: 'json', ext: 'json', type: 'application/json' },
  { format: 'CSV', label: 'CSV', cli: 'csv', ext: 'csv', type: 'text/csv' },
  { format: 'MARKDOWN', label: 'Markdown', cli: 'markdown', ext: 'md', type: 'text/markdown' },
  { format: 'HTML', label: 'HTML', cli: 'html', ext: 'html', type: 'text/html' },
] as const;

/** A time as `phaselog report --from` takes it: a duration ago (1h, 7d), `now`, a date or RFC 3339. */
export function resolveTime(value: string, now: number): Date | undefined {
  const text = value.trim();
  if (text === 'now') return new Date(now);
  const ago = /^\d+$/.test(text) ? undefined : parseDuration(text);
  if (ago !== undefined) return new Date(now - ago);
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) return undefined;
  const date = new Date(text.length === 10 ? `${text}T00:00:00Z` : text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A comma-separated form field as a list (empty: no narrowing). */
function list(value: string | null): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

interface Selection {
  from: string;
  to: string;
  clusters: string[];
  namespaces: string[];
  phases: string[];
}

function selectionOf(place: Place): Selection | undefined {
  const from = place.params.get('from');
  if (!from) return undefined;
  return {
    from,
    to: place.params.get('to') ?? '',
    clusters: list(place.params.get('cluster')),
    namespaces: list(place.params.get('namespace')),
    phases: list(place.params.get('phase')),
  };
}

function cliCommand(selection: Selection): string {
  const quote = (s: string) => (/^[\w./:+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const parts = ['phaselog report', `--from ${quote(selection.from)}`];
  if (selection.to) parts.push(`--to ${quote(selection.to)}`);
  for (const c of selection.clusters) parts.push(`--cluster ${quote(c)}`);
  for (const n of selection.namespaces) parts.push(`--namespace ${quote(n)}`);
  for (const p of selection.phases) parts.push(`--phase ${quote(p)}`);
  parts.push('--out report.html');
  return parts.join(' ');
}

const percent = (value: number | null) =>
  value === null ? '–' : `${value.toFixed(value >= 99.95 || value < 0.05 ? 0 : 2)}%`;
// Sub-second spans happen (a quick restore): "0s" would read as none.
const span = (ms: number | null) => (ms === null ? '–' : ms > 0 && ms < 1000 ? '<1s' : formatSpan(ms));

/** Saves `content` as a file the browser downloads (no round trip: the text is here already). */
function saveFile(content: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = fileName;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  // The download has its own copy once started; the object URL can go after this task.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function ReportForm({ place, selection }: { place: Place; selection: Selection | undefined }) {
  const [from, setFrom] = useState(selection?.from ?? '24h');
  const [to, setTo] = useState(selection?.to ?? '');
  const [cluster, setCluster] = useState(selection?.clusters.join(', ') ?? '');
  const [namespace, setNamespace] = useState(selection?.namespaces.join(', ') ?? '');
  const [phase, setPhase] = useState(selection?.phases.join(', ') ?? '');
  const [problem, setProblem] = useState<string | undefined>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const now = Date.now();
    const start = resolveTime(from, now);
    const end = to.trim() ? resolveTime(to, now) : new Date(now);
    if (!start || !end)
      return setProblem(
        'Times are a duration ago (90m, 24h, 7d), "now", a date (2026-11-17) or RFC 3339 (2026-11-17T14:00:00Z).',
      );
    if (end <= start) return setProblem('"To" must be after "from".');
    setProblem(undefined);
    // `run` changes on each submit so that asking again for "the last hour" reads the new last hour.
    navigate(
      withParams(place, {
        from: from.trim(),
        to: to.trim(),
        cluster,
        namespace,
        phase,
        run: String(now),
        stored: undefined,
      }),
    );
  };
  return (
    <form className="filters report-form" onSubmit={submit} aria-label="Report range and selection">
      <label>
        From <input value={from} onChange={(e) => setFrom(e.target.value)} size={22} aria-describedby="time-help" />
      </label>
      <label>
        To{' '}
        <input
          value={to}
          onChange={(e) => setTo(e.target.value)}
          size={22}
          placeholder="now"
          aria-describedby="time-help"
        />
      </label>
      <label>
        Clusters <input value={cluster} onChange={(e) => setCluster(e.target.value)} size={14} placeholder="all" />
      </label>
      <label>
        Namespaces{' '}
        <input value={namespace} onChange={(e) => setNamespace(e.target.value)} size={14} placeholder="all" />
      </label>
      <label>
        Phase names <input value={phase} onChange={(e) => setPhase(e.target.value)} size={14} placeholder="all" />
      </label>
      <button type="submit">Run report</button>
      <p id="time-help" className="muted help">
        Times: a duration ago (1h, 24h, 7d), a date (2026-11-17) or RFC 3339, in UTC. Lists: comma-separated.
      </p>
      {problem ? (
        <p role="alert" className="error">
          {problem}
        </p>
      ) : null}
    </form>
  );
}

function TotalsView({ totals }: { totals: Totals }) {
  const items: [string, string][] = [
    ['Phases', `${totals.phases} on ${totals.clusters} clusters`],
    ['Availability', percent(totals.availability)],
    ['Failures', `${totals.failures} (${totals.restored} restored)`],
    ['Mean time to restore', span(totals.meanTimeToRestoreMs)],
    ['Departures from Current', String(totals.incidents)],
    ['Mean time out of Current', span(totals.meanTimeOutOfCurrentMs)],
    ['Flapping phases', String(totals.flappingPhases)],
    ['Cluster outages', String(totals.outages)],
    ['Inventory changes', String(totals.inventoryChanges)],
    ['Revision changes', String(totals.revisionChanges)],
  ];
  return (
    <dl className="totals">
      {items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function PhasesTable({ phases }: { phases: ReportPhase[] }) {
  return (
    <div className="scroll">
      <table className="list report-phases" aria-label="Phases, worst first">
        <thead>
          <tr>
            <th scope="col">Phase</th>
            <th scope="col">Status at end</th>
            <th scope="col">Availability</th>
            <th scope="col">Failures</th>
            <th scope="col">Time to restore (mean / longest)</th>
            <th scope="col">Out of Current (mean / longest)</th>
            <th scope="col">Status changes</th>
            <th scope="col">Inventory changes</th>
            <th scope="col">Revision changes</th>
            <th scope="col">Unreachable / unobserved</th>
          </tr>
        </thead>
        <tbody>
          {phases.map((p) => (
            <tr key={`${p.cluster}/${p.namespace}/${p.name}`} data-phase={`${p.cluster}/${p.namespace}/${p.name}`}>
              <th scope="row">
                <Link href={phasePath(p)}>{`${p.cluster}/${p.namespace}/${p.name}`}</Link>
                <div className="muted">
                  {p.source}
                  {p.flapping ? ' · flapping' : ''}
                </div>
              </th>
              <td>
                <StatusBadge status={p.statusAtEnd} />
              </td>
              <td>{percent(p.availability)}</td>
              <td>
                {p.failures}
                {p.failures ? ` (${p.restore.restored} restored)` : ''}
              </td>
              <td>
                {span(p.restore.meanTimeToRestoreMs)} / {span(p.restore.longestTimeToRestoreMs)}
              </td>
              <td>
                {span(p.recovery.meanTimeOutOfCurrentMs)} / {span(p.recovery.longestTimeOutOfCurrentMs)}
              </td>
              <td>{p.statusChanges}</td>
              <td>{p.inventoryChanges}</td>
              <td>{p.revisionChanges}</td>
              <td>
                {p.unreachableMs || p.unobservedMs ? `${span(p.unreachableMs)} / ${span(p.unobservedMs)}` : 'none'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function IncidentsList({ phases }: { phases: ReportPhase[] }) {
  const incidents = phases
    .flatMap((p) => p.recovery.incidents.map((incident) => ({ phase: p, incident })))
    .sort((a, b) => b.incident.from.localeCompare(a.incident.from));
  if (incidents.length === 0) return <p>No phase left Current in this range.</p>;
  return (
    <div className="scroll">
      <table className="list" aria-label="Departures from Current, newest first">
        <thead>
          <tr>
            <th scope="col">Phase</th>
            <th scope="col">Left Current</th>
            <th scope="col">For</th>
            <th scope="col">Worst</th>
            <th scope="col">Cause</th>
          </tr>
        </thead>
        <tbody>
          {incidents.map(({ phase, incident }) => (
            <tr key={`${phase.cluster}/${phase.namespace}/${phase.name}@${incident.from}`}>
              <th scope="row">
                <Link
                  href={withParams({ path: phasePath(phase), params: new URLSearchParams() }, { at: incident.from })}
                >{`${phase.cluster}/${phase.namespace}/${phase.name}`}</Link>
              </th>
              <td>{formatTime(incident.from)}</td>
              <td>
                {span(incident.durationMs)}
                {incident.to ? '' : ' (not over)'}
              </td>
              <td>
                {incident.reachedFailed ? <StatusBadge status="Failed" /> : <span className="muted">not Failed</span>}
              </td>
              <td>
                {incident.cause ? (
                  <>
                    <code>{incident.cause.resource}</code>: {incident.cause.message}
                  </>
                ) : (
                  <span className="muted">no resource recorded</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Downloads({ variables, name }: { variables: Record<string, unknown>; name: string }) {
  const [busy, setBusy] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const download = (choice: (typeof FORMATS)[number]) => {
    setBusy(choice.label);
    setError(undefined);
    gql<{ auditReport: { content: string; contentType: string } }>(RENDERED, { ...variables, format: choice.format })
      .then((data) =>
        saveFile(data.auditReport.content, `${name}.${choice.ext}`, data.auditReport.contentType || choice.type),
      )
      .catch((e: unknown) => setError(e instanceof ApiError ? e.message : String(e)))
      .finally(() => setBusy(undefined));
  };
  return (
    <div className="downloads">
      <span>Download:</span>
      {FORMATS.map((choice) => (
        <button
          key={choice.format}
          type="button"
          onClick={() => download(choice)}
          disabled={busy !== undefined}
          aria-label={`Download the report as ${choice.label}`}
        >
          {busy === choice.label ? `${choice.label}…` : choice.label}
        </button>
      ))}
      {error ? (
        <span role="alert" className="error">
          {error}
        </span>
      ) : null}
    </div>
  );
}

/** Stamp for file names: 2026-11-20T1403Z. */
const stamp = (date: Date) => date.toISOString().slice(0, 16).replace(':', '') + 'Z';

function ReportView({ place, selection }: { place: Place; selection: Selection }) {
  const run = place.params.get('run') ?? '';
  // Relative times resolve once per run (not on every render): "1h" means the hour before it ran.
  const resolved = useMemo(() => {
    const now = Number(run) || Date.now();
    const from = resolveTime(selection.from, now);
    const to = selection.to ? resolveTime(selection.to, now) : new Date(now);
    return from && to && to > from ? { from, to } : undefined;
  }, [selection.from, selection.to, run]);
  const filter = { clusters: selection.clusters, namespaces: selection.namespaces, phases: selection.phases };
  const variables = resolved ? { from: resolved.from.toISOString(), to: resolved.to.toISOString(), filter } : {};
  const { data, error, loading } = useQuery<{ auditReport: { totals: Totals; phases: ReportPhase[] } }>(
    REPORT,
    variables,
    { skip: !resolved },
  );
  if (!resolved)
    return (
      <p role="alert" className="error">
        This link's range is not valid: from “{selection.from}” to “{selection.to || 'now'}”.
      </p>
    );
  return (
    <section aria-labelledby="report-title" aria-busy={loading}>
      <h2 id="report-title">
        Report {formatTime(resolved.from.toISOString())} to {formatTime(resolved.to.toISOString())} UTC
      </h2>
      <CliHint command={cliCommand(selection)} />
      {error ? (
        <p role="alert" className="error">
          Cannot compute the report: {error.message}
        </p>
      ) : null}
      {loading && !data ? <p>Computing the report…</p> : null}
      {data ? (
        <>
          <Downloads variables={variables} name={`phaselog-report-${stamp(resolved.from)}-${stamp(resolved.to)}`} />
          <TotalsView totals={data.auditReport.totals} />
          <h3>Phases, worst first</h3>
          {data.auditReport.phases.length ? (
            <PhasesTable phases={data.auditReport.phases} />
          ) : (
            <p>No phase matches this selection.</p>
          )}
          <h3>Departures from Current and their cause</h3>
          <IncidentsList phases={data.auditReport.phases} />
        </>
      ) : null}
    </section>
  );
}

interface StoredSummary {
  id: string;
  createdAt: string;
  format: string;
  params: Record<string, unknown>;
}

/** A stored report's schedule, range and selection (as the report worker records them), in a line. */
function describeParams(params: Record<string, unknown>): string {
  const text = (key: string) => (typeof params[key] === 'string' ? (params[key] as string) : undefined);
  const names = (key: string) =>
    Array.isArray(params[key]) && params[key].length ? `${key} ${(params[key] as unknown[]).join(', ')}` : undefined;
  const range = text('from') ? `${formatTime(text('from'))} to ${formatTime(text('to'))} UTC` : undefined;
  return [
    text('schedule') ? `schedule ${text('schedule')}` : undefined,
    range,
    names('clusters'),
    names('namespaces'),
    names('phases'),
  ]
    .filter(Boolean)
    .join(' · ');
}

function StoredReports({ place }: { place: Place }) {
  const { data, error } = useQuery<{ storedReports: StoredSummary[] }>(STORED, {});
  const open = place.params.get('stored');
  return (
    <section aria-labelledby="stored-title">
      <h2 id="stored-title">Stored reports</h2>
      {error ? (
        <p role="status" className="banner">
          {error.code === 'FORBIDDEN'
            ? 'Your token is restricted to some clusters or namespaces, and stored reports may cover any cluster: only an unrestricted token may list them.'
            : `Cannot list stored reports: ${error.message}`}
        </p>
      ) : null}
      {data && data.storedReports.length === 0 ? (
        <p>None yet: schedules in phaselog.yaml (reports.schedules) produce them.</p>
      ) : null}
      {data && data.storedReports.length ? (
        <ul className="plain stored">
          {data.storedReports.map((r) => (
            <li key={r.id}>
              <Link href={withParams(place, { stored: r.id })} aria-current={open === r.id ? 'true' : undefined}>
                {formatTime(r.createdAt)} UTC · {r.format}
              </Link>{' '}
              <span className="muted">{describeParams(r.params)}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {open ? <StoredReport id={open} /> : null}
    </section>
  );
}

function StoredReport({ id }: { id: string }) {
  const { data, error } = useQuery<{
    storedReport: { id: string; createdAt: string; format: string; content: string } | null;
  }>(STORED_ONE, { id });
  if (error)
    return (
      <p role="alert" className="error">
        Cannot open report {id}: {error.message}
      </p>
    );
  if (!data) return <p>Opening report {id}…</p>;
  const report = data.storedReport;
  if (!report)
    return (
      <p role="alert" className="error">
        No stored report {id}.
      </p>
    );
  const choice = FORMATS.find((f) => f.format === report.format) ?? FORMATS[0];
  return (
    <article className="stored-open" aria-label={`Stored report of ${formatTime(report.createdAt)} UTC`}>
      <button
        type="button"
        onClick={() => saveFile(report.content, `phaselog-report-${report.id}.${choice.ext}`, choice.type)}
      >
        Download ({choice.label})
      </button>
      {/* The HTML report is a page of its own: shown sandboxed (it runs no script, and may not). */}
      {report.format === 'HTML' ? (
        <iframe title="Stored report" sandbox="" srcDoc={report.content} className="stored-frame" />
      ) : (
        <pre className="diff">{report.content}</pre>
      )}
    </article>
  );
}

export function ReportsPage({ place }: { place: Place }) {
  const selection = selectionOf(place);
  return (
    <main>
      <h1>Reports</h1>
      <p className="muted">
        An audit of recorded history: availability, failures and time to restore, departures from Current, manifest
        changes — the same as <code>phaselog report</code>.
      </p>
      {/* A new key per URL: the form shows what the URL asks, including after back/forward. */}
      <ReportForm key={place.params.toString()} place={place} selection={selection} />
      {selection ? (
        <ReportView place={place} selection={selection} />
      ) : (
        <CliHint command={cliCommand({ from: '24h', to: '', clusters: [], namespaces: [], phases: [] })} />
      )}
      <StoredReports place={place} />
    </main>
  );
}
