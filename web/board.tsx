/**
 * The fleet board: every phase in every cluster, as a matrix (phase × cluster) or a list by
 * severity, with filters kept in the URL and statuses updated live from phaseStatusChanged.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { gql, useQuery } from './api.ts';
import type { PhaseAnswer } from '../src/graphql/answers.ts';
import { CliHint } from './cli-hint.tsx';
import { LiveIndicator, useLiveChanges, type PhaseChange } from './live.tsx';
import { Link, navigate, phasePath, withParams, type Place } from './router.tsx';
import { severity, staleText, StatusBadge, STATUSES, TimeAgo, formatTime } from './status.tsx';

export interface BoardPhase extends PhaseAnswer {
  worstResource: { kind: string; namespace: string; name: string; status: string; message: string } | null;
}

export interface BoardCluster {
  name: string;
  state: string;
  reachable: boolean | null;
  lastGoodReadAt: string | null;
}

const BOARD = `query Board($filter: PhaseFilter) {
  clusters { name state reachable lastGoodReadAt }
  phases(filter: $filter, orderBy: SEVERITY, first: 1000) {
    edges { node { id cluster namespace name source status message since stale staleReason lastGoodReadAt labels
      worstResource { kind namespace name status message } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** The same fields for only the phases a burst of changes named. */
const CHANGED = `query Changed($filter: PhaseFilter) {
  phases(filter: $filter, first: 1000) {
    edges { node { id cluster namespace name source status message since stale staleReason lastGoodReadAt labels
      worstResource { kind namespace name status message } } }
  }
}`;

interface BoardAnswer {
  clusters: BoardCluster[];
  phases: { edges: { node: BoardPhase }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

/** The board's filters, as the URL holds them. */
interface Filters {
  cluster: string;
  namespace: string;
  status: string[];
  label: string;
  q: string;
}

function filtersOf(place: Place): Filters {
  return {
    cluster: place.params.get('cluster') ?? '',
    namespace: place.params.get('namespace') ?? '',
    status: (place.params.get('status') ?? '').split(',').filter(Boolean),
    label: place.params.get('label') ?? '',
    q: place.params.get('q') ?? '',
  };
}

/** `team=shop,tier=web` as the API's labels filter. */
function labelsOf(text: string): Record<string, string> | undefined {
  const pairs = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => p.split('=').map((s) => s.trim()));
  if (pairs.length === 0) return undefined;
  return Object.fromEntries(pairs.map(([k, v]) => [k ?? '', v ?? '']));
}

/** Status is filtered here, not by the API, so the header counts stay those of the whole selection. */
function apiFilter(filters: Filters): Record<string, unknown> {
  const labels = labelsOf(filters.label);
  return {
    ...(filters.cluster ? { cluster: filters.cluster } : {}),
    ...(filters.namespace ? { namespace: filters.namespace } : {}),
    ...(filters.q ? { search: filters.q } : {}),
    ...(labels ? { labels } : {}),
  };
}

function applyChange(phases: BoardPhase[], change: PhaseChange): BoardPhase[] | undefined {
  const index = phases.findIndex((p) => p.id === change.phaseId);
  if (index === -1) return undefined;
  const next = phases.slice();
  const old = phases[index] as BoardPhase;
  next[index] = {
    ...old,
    status: change.toStatus,
    message: change.message,
    since: change.at,
    stale: false,
    staleReason: null,
  };
  return next;
}

export function Board({ place }: { place: Place }) {
  const filters = filtersOf(place);
  const layout = place.params.get('layout') === 'list' ? 'list' : 'matrix';
  const variables = useMemo(() => ({ filter: apiFilter(filters) }), [JSON.stringify(apiFilter(filters))]);
  const query = useQuery<BoardAnswer>(BOARD, variables);
  const [phases, setPhases] = useState<BoardPhase[]>([]);
  const [lastChange, setLastChange] = useState<PhaseChange | undefined>();
  // Ages ("for 3m") move on between changes too.
  const [, setClock] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setClock((c) => c + 1), 15_000);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (query.data) setPhases(query.data.phases.edges.map((e) => e.node));
  }, [query.data]);

  // A change patches its cell at once; one re-read a moment later fills in what an event does not
  // carry (worst resource, stale marks). Many changes in a burst share that one re-read, of only the
  // phases they named: with a thousand phases on the board, re-reading all of them after every
  // burst is what kept a busy board's main thread occupied.
  const refetchTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const changedIds = useRef(new Set<string>());
  const { reload } = query;
  const refetchSoon = useCallback(
    (phaseId: string | null) => {
      if (phaseId !== null) changedIds.current.add(phaseId);
      refetchTimer.current ??= setTimeout(() => {
        refetchTimer.current = undefined;
        const ids = [...changedIds.current];
        changedIds.current.clear();
        if (ids.length === 0) return;
        gql<{ phases: { edges: { node: BoardPhase }[] } }>(CHANGED, { filter: { ...variables.filter, ids } }).then(
          (data) => {
            const fresh = new Map(data.phases.edges.map((e) => [e.node.id, e.node]));
            // A phase that no longer matches (or was deleted) leaves the board, the others are
            // replaced, and one the board did not list yet (a new inventory) joins it.
            setPhases((current) => {
              const next = current.flatMap((p) =>
                !ids.includes(p.id) ? [p] : fresh.has(p.id) ? [fresh.get(p.id) as BoardPhase] : [],
              );
              const listed = new Set(current.map((p) => p.id));
              return [...next, ...[...fresh.values()].filter((p) => !listed.has(p.id))];
            });
          },
          () => reload(),
        );
      }, 1500);
    },
    [reload, variables],
  );
  useEffect(() => () => clearTimeout(refetchTimer.current), []);
  // Reachability changes are no phase changes: their own subscription re-reads the board when a
  // cluster goes or comes back, so stale marks follow at once.
  useLiveChanges({
    field: 'clusterStatusChanged',
    filter: filters.cluster ? { cluster: filters.cluster } : {},
    onChange: reload,
  });
  const live = useLiveChanges({
    filter: {
      ...(filters.cluster ? { cluster: filters.cluster } : {}),
      ...(filters.namespace ? { namespace: filters.namespace } : {}),
    },
    onChange: (change) => {
      setLastChange(change);
      setPhases((current) => applyChange(current, change) ?? current);
      refetchSoon(change.phaseId);
    },
    onReconnect: reload,
  });

  const counts = useMemo(() => {
    const byStatus = new Map<string, number>();
    for (const p of phases) byStatus.set(p.status ?? 'none', (byStatus.get(p.status ?? 'none') ?? 0) + 1);
    return byStatus;
  }, [phases]);
  const shown = filters.status.length ? phases.filter((p) => filters.status.includes(p.status ?? '')) : phases;
  const clusters = (query.data?.clusters ?? []).filter((c) => !filters.cluster || c.name === filters.cluster);
  const set = (changes: Record<string, string | undefined>) => navigate(withParams(place, changes), { replace: true });
  const toggleStatus = (status: string) => {
    const next = filters.status.includes(status)
      ? filters.status.filter((s) => s !== status)
      : [...filters.status, status];
    navigate(withParams(place, { status: next.join(',') }));
  };

  return (
    <main>
      <div className="title-row">
        <h1>Fleet board</h1>
        <LiveIndicator state={live} />
        {lastChange ? (
          <span className="muted" aria-live="polite">
            last change: {lastChange.phase?.namespace}/{lastChange.phase?.name} in {lastChange.cluster} →{' '}
            {lastChange.toStatus ?? 'gone'} at {formatTime(lastChange.at)}
          </span>
        ) : null}
      </div>
      <section className="counts" aria-label="Phases per status (select to filter)">
        {STATUSES.map((status) => (
          <button
            key={status}
            type="button"
            className={`count s-${status}`}
            aria-pressed={filters.status.includes(status)}
            onClick={() => toggleStatus(status)}
          >
            <StatusBadge status={status} /> <strong>{counts.get(status) ?? 0}</strong>
          </button>
        ))}
        <span className="muted">
          {phases.length} phases · {clusters.length} clusters
        </span>
      </section>
      <form className="filters" role="search" aria-label="Filter phases" onSubmit={(e) => e.preventDefault()}>
        <label>
          Layout{' '}
          <select
            value={layout}
            onChange={(e) => navigate(withParams(place, { layout: e.target.value === 'list' ? 'list' : undefined }))}
          >
            <option value="matrix">Matrix (phase × cluster)</option>
            <option value="list">List by severity</option>
          </select>
        </label>
        <label>
          Cluster{' '}
          <select value={filters.cluster} onChange={(e) => set({ cluster: e.target.value })}>
            <option value="">all</option>
            {(query.data?.clusters ?? []).map((c) => (
              <option key={c.name} value={c.name}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        <TextFilter label="Namespace" value={filters.namespace} onCommit={(v) => set({ namespace: v })} />
        <TextFilter label="Labels (k=v,…)" value={filters.label} onCommit={(v) => set({ label: v })} />
        <TextFilter label="Search" value={filters.q} onCommit={(v) => set({ q: v })} />
      </form>
      {query.error ? (
        <p role="alert" className="error">
          Cannot load the board: {query.error.message}
        </p>
      ) : null}
      {!query.data && !query.error ? <p>Loading…</p> : null}
      {query.data ? (
        layout === 'matrix' ? (
          <Matrix phases={shown} clusters={clusters} />
        ) : (
          <List phases={shown} />
        )
      ) : null}
      <CliHint command={`phaselog status${filters.cluster ? ` --cluster ${filters.cluster}` : ''}`} />
    </main>
  );
}

/** A text input that updates the URL as one types (replace, not push: back skips keystrokes). */
function TextFilter({ label, value, onCommit }: { label: string; value: string; onCommit: (value: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const timer = setTimeout(() => onCommit(text.trim()), 300);
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <label>
      {label} <input type="search" value={text} onChange={(e) => setText(e.target.value)} />
    </label>
  );
}

function ClusterHead({ cluster }: { cluster: BoardCluster }) {
  const marked = cluster.state !== 'OBSERVED';
  return (
    <th scope="col" className={marked ? 'cluster-marked' : undefined}>
      <Link href={`/clusters#${encodeURIComponent(cluster.name)}`}>{cluster.name}</Link>
      {marked ? (
        <div className="cluster-state">
          <span aria-hidden="true">⚠</span> {cluster.state.toLowerCase()}
          <div className="muted">last good read {formatTime(cluster.lastGoodReadAt)}</div>
        </div>
      ) : null}
    </th>
  );
}

function Cell({ phase }: { phase: BoardPhase | undefined }) {
  if (!phase)
    return (
      <td className="cell-empty">
        <span className="sr-only">not deployed here</span>
      </td>
    );
  const tipId = `tip-${phase.id}`;
  const worst = phase.worstResource;
  return (
    <td
      className={`cell s-${phase.status ?? 'none'}${phase.stale ? ' stale' : ''}`}
      data-cluster={phase.cluster}
      data-phase={`${phase.namespace}/${phase.name}`}
      data-status={phase.status ?? ''}
    >
      <Link href={phasePath(phase)} aria-describedby={tipId} className="cell-link">
        <StatusBadge status={phase.status} stale={phase.stale} />
        <span className="since">
          for <TimeAgo iso={phase.since} />
        </span>
      </Link>
      <span role="tooltip" id={tipId} className="tip">
        {worst
          ? `${worst.kind} ${worst.namespace ? worst.namespace + '/' : ''}${worst.name}: ${worst.status} — ${worst.message || phase.message}`
          : phase.message || 'all resources Current'}
        {phase.stale ? ` (${staleText(phase.staleReason, phase.lastGoodReadAt)})` : ''}
      </span>
    </td>
  );
}

const STEPS: Record<string, [number, number]> = {
  ArrowUp: [-1, 0],
  ArrowDown: [1, 0],
  ArrowLeft: [0, -1],
  ArrowRight: [0, 1],
};

/** Arrow keys move between the matrix's cells (Tab still walks them in order), skipping empty ones. */
function moveFocus(event: KeyboardEvent<HTMLTableElement>): void {
  const step = STEPS[event.key];
  const cell = (event.target as HTMLElement).closest('td');
  const row = cell?.parentElement;
  if (!step || !cell || !(row instanceof HTMLTableRowElement) || !row.parentElement) return;
  const rows = [...row.parentElement.children] as HTMLTableRowElement[];
  let r = rows.indexOf(row);
  let c = cell.cellIndex;
  for (;;) {
    r += step[0];
    c += step[1];
    const next = rows[r]?.cells[c];
    if (!next || c < 1) return;
    const link = next.querySelector('a');
    if (link) {
      event.preventDefault();
      link.focus();
      return;
    }
  }
}

function Matrix({ phases, clusters }: { phases: BoardPhase[]; clusters: BoardCluster[] }) {
  const rows = useMemo(() => {
    const byName = new Map<string, Map<string, BoardPhase>>();
    for (const p of phases) {
      const key = `${p.namespace}/${p.name}`;
      const row = byName.get(key) ?? new Map<string, BoardPhase>();
      row.set(p.cluster, p);
      byName.set(key, row);
    }
    return [...byName.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [phases]);
  if (rows.length === 0) return <p>No phase matches.</p>;
  return (
    <div className="scroll">
      <table
        className="matrix"
        aria-label="Phase status per cluster (arrow keys move between cells)"
        onKeyDown={moveFocus}
      >
        <thead>
          <tr>
            <th scope="col">Phase (namespace/name)</th>
            {clusters.map((c) => (
              <ClusterHead key={c.name} cluster={c} />
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, cells]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              {clusters.map((c) => (
                <Cell key={c.name} phase={cells.get(c.name)} />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function List({ phases }: { phases: BoardPhase[] }) {
  const sorted = useMemo(
    () =>
      phases
        .slice()
        .sort(
          (a, b) =>
            severity(a.status) - severity(b.status) ||
            `${a.namespace}/${a.name}/${a.cluster}`.localeCompare(`${b.namespace}/${b.name}/${b.cluster}`),
        ),
    [phases],
  );
  if (sorted.length === 0) return <p>No phase matches.</p>;
  return (
    <table className="list" aria-label="Phases by severity">
      <thead>
        <tr>
          <th scope="col">Phase</th>
          <th scope="col">Cluster</th>
          <th scope="col">Status</th>
          <th scope="col">Since</th>
          <th scope="col">Message</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((p) => (
          <tr
            key={p.id}
            data-cluster={p.cluster}
            data-phase={`${p.namespace}/${p.name}`}
            data-status={p.status ?? ''}
            className={p.stale ? 'stale' : undefined}
          >
            <td>
              <Link href={phasePath(p)}>
                {p.namespace}/{p.name}
              </Link>
            </td>
            <td>{p.cluster}</td>
            <td>
              <StatusBadge status={p.status} stale={p.stale} />
            </td>
            <td>
              <TimeAgo iso={p.since} />
            </td>
            <td>
              {p.message}
              {p.stale ? <div className="muted">{staleText(p.staleReason, p.lastGoodReadAt)}</div> : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
