/**
 * One phase: status now or at a past moment (`?at=`, time travel), its resources, a timeline over
 * a window, its manifest versions, a gate, and its change log. Every view is in the URL.
 */
import { useEffect, useMemo, useState } from 'react';
import { gql, useQuery } from './api.ts';
import { ChangeLog } from './change-log.tsx';
import { CliHint, phaseArg } from './cli-hint.tsx';
import { GateWidget } from './gate.tsx';
import { ManifestVersions } from './manifests.tsx';
import { ResourceTimelines } from './resource-timelines.tsx';
import { ResourcesTable, type ResourceRow } from './resources-table.tsx';
import { LiveIndicator, useLiveChanges } from './live.tsx';
import { Link, navigate, withParams, type Place } from './router.tsx';
import { formatTime, staleText, StatusBadge, TimeAgo } from './status.tsx';
import { Timeline, type TimelineInterval } from './timeline.tsx';
import type { PhaseAnswer, StatusCounts } from '../src/graphql/answers.ts';

/** Condition sources that are the object holding the inventory, not a check (src/inventory/holder.ts). */
const HOLDER_SOURCES: ReadonlySet<string> = new Set(['flux', 'argocd', 'kpt', 'owner']);

const WINDOWS: Record<string, number> = {
  '15m': 900_000,
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};

interface Condition {
  type: string;
  /** derived (Ready, Reconciling, Stalled) or the kind of check: http, cel, webhook. */
  source: string;
  status: string;
  /** A check's condition whose check has not run lately: the last one known. */
  stale: boolean;
  reason: string;
  message: string;
  lastTransitionTime: string | null;
}

interface PhaseView extends PhaseAnswer {
  inventoryId: string;
  firstSeenAt: string;
  deletedAt: string | null;
  summary: StatusCounts;
  conditions: Condition[];
  resources?: { edges: { node: ResourceRow }[] };
  statusAt?: {
    at: string;
    status: string;
    message: string;
    stale: boolean;
    staleReason: string | null;
    from: string;
    to: string | null;
    summary: StatusCounts;
    conditions: Condition[];
    resources: { edges: { node: ResourceRow }[] };
  } | null;
  manifestAt?: { hash: string; entryCount: number; from: string; to: string | null } | null;
  manifest: { hash: string; entryCount: number; from: string } | null;
  manifests: { edges: { node: { manifest: { from: string; hash: string } } }[] };
}

const COUNTS = 'current inProgress failed terminating notFound unknown total';
const CONDITIONS = 'conditions { type source status stale reason message lastTransitionTime }';
const RESOURCES =
  'resources(first: 100) { edges { node { key kind namespace name status reason message since customHealth { engine health message } applied { strategy actuation reconcile sync } } } }';
const PHASE = `query PhasePage($cluster: String!, $namespace: String!, $name: String!, $at: DateTime!, $past: Boolean!) {
  phase(cluster: $cluster, namespace: $namespace, name: $name) {
    id cluster namespace name source inventoryId labels firstSeenAt deletedAt status message since stale staleReason lastGoodReadAt
    summary { ${COUNTS} } ${CONDITIONS}
    ${RESOURCES}
    statusAt(at: $at) @include(if: $past) { at status message stale staleReason from to summary { ${COUNTS} } ${CONDITIONS} ${RESOURCES} }
    manifestAt: manifest(at: $at) @include(if: $past) { hash entryCount from to }
    manifest { hash entryCount from }
    manifests(first: 100) { edges { node { manifest { from hash } } } }
  }
}`;

const HISTORY = `query History($id: ID!, $from: DateTime!, $after: String) {
  phase(id: $id) { history(from: $from, first: 100, after: $after) { edges { node { status message from to stale staleReason } } pageInfo { hasNextPage endCursor } } }
}`;

interface HistoryPage {
  phase: {
    history: { edges: { node: TimelineInterval }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  } | null;
}

/** The phase's intervals over the window, every page (a 30-day window of a flapping phase has many). */
function useHistory(id: string | undefined, from: number, refresh: unknown): TimelineInterval[] | undefined {
  const [intervals, setIntervals] = useState<TimelineInterval[] | undefined>();
  useEffect(() => {
    if (!id) return;
    let cancelled = false;
    void (async () => {
      const all: TimelineInterval[] = [];
      let after: string | null = null;
      for (let page = 0; page < 50; page++) {
        const data: HistoryPage = await gql<HistoryPage>(HISTORY, { id, from: new Date(from).toISOString(), after });
        const history = data.phase?.history;
        if (!history) break;
        all.push(...history.edges.map((e) => e.node));
        if (!history.pageInfo.hasNextPage) break;
        after = history.pageInfo.endCursor;
      }
      if (!cancelled) setIntervals(all);
    })().catch(() => !cancelled && setIntervals([]));
    return () => {
      cancelled = true;
    };
  }, [id, from, refresh]);
  return intervals;
}

function Summary({ counts }: { counts: StatusCounts }) {
  const parts: [string, number][] = [
    ['Current', counts.current],
    ['InProgress', counts.inProgress],
    ['Failed', counts.failed],
    ['Terminating', counts.terminating],
    ['NotFound', counts.notFound],
    ['Unknown', counts.unknown],
  ];
  return (
    <span>
      {counts.total} resources:{' '}
      {parts
        .filter(([, n]) => n > 0)
        .map(([s, n]) => `${n} ${s}`)
        .join(', ') || 'none'}
    </span>
  );
}

function Conditions({ conditions }: { conditions: Condition[] }) {
  if (conditions.length === 0) return null;
  return (
    <table className="list" aria-label="Conditions">
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Source</th>
          <th scope="col">Status</th>
          <th scope="col">Reason</th>
          <th scope="col">Message</th>
          <th scope="col">Last transition (UTC)</th>
        </tr>
      </thead>
      <tbody>
        {conditions.map((c) => (
          <tr key={c.type}>
            <td>{c.type}</td>
            <td>
              {c.source === 'derived'
                ? 'derived'
                : HOLDER_SOURCES.has(c.source)
                  ? `${c.source} (inventory holder)`
                  : `${c.source} check`}
            </td>
            <td>
              {c.status}
              {c.stale ? <span className="muted"> (stale: its check has not run lately)</span> : null}
            </td>
            <td>{c.reason}</td>
            <td>{c.message}</td>
            <td>{formatTime(c.lastTransitionTime)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `2026-11-20T14:03` for a datetime-local input, in UTC. */
const localValue = (ms: number) => new Date(ms).toISOString().slice(0, 19);

export function PhasePage({
  place,
  cluster,
  namespace,
  name,
}: {
  place: Place;
  cluster: string;
  namespace: string;
  name: string;
}) {
  const atParam = place.params.get('at');
  const at = atParam && !Number.isNaN(Date.parse(atParam)) ? Date.parse(atParam) : undefined;
  const [now, setNow] = useState(() => Date.now());
  const variables = useMemo(
    () => ({ cluster, namespace, name, at: new Date(at ?? now).toISOString(), past: at !== undefined }),
    [cluster, namespace, name, at, now],
  );
  const { data, error, loading } = useQuery<{ phase: PhaseView | null }>(PHASE, variables);
  const phase = data?.phase ?? undefined;
  // Live: a change of this phase (or of one of its resources: the phase's message and counts move
  // with it) moves "now" on, which re-reads the page, its timeline and its change log.
  const live = useLiveChanges({
    filter: { cluster, namespace },
    onChange: (change) => {
      if (change.phase?.name === name && at === undefined) setNow(Date.now());
    },
    onReconnect: () => at === undefined && setNow(Date.now()),
  });
  const firstSeen = phase ? Date.parse(phase.firstSeenAt) : undefined;
  // Without a choice in the URL: the smallest window that holds the phase's whole recorded life.
  const fitting =
    firstSeen === undefined ? '24h' : (Object.keys(WINDOWS).find((w) => (WINDOWS[w] ?? 0) >= now - firstSeen) ?? '30d');
  // A custom window (dragged on the timeline, or typed in the URL): ?from=...&to=...
  const customFrom = Date.parse(place.params.get('from') ?? '');
  const customTo = Date.parse(place.params.get('to') ?? '');
  const custom = !Number.isNaN(customFrom) && !Number.isNaN(customTo) && customTo > customFrom;
  const windowName = custom ? 'custom' : (place.params.get('window') ?? fitting);
  const span = custom ? customTo - customFrom : (WINDOWS[windowName] ?? WINDOWS['24h'] ?? 86_400_000);
  // The window ends now, or at the viewed moment when that is older than the window.
  const end = custom ? customTo : at !== undefined && at < now - span ? Math.min(now, at + span / 2) : now;
  const from = end - span;
  const intervals = useHistory(phase?.id, Math.floor(from / 1000) * 1000, now);
  const [pickText, setPickText] = useState(localValue(at ?? now));
  useEffect(() => setPickText(localValue(at ?? now)), [at, now]);

  if (error)
    return (
      <main>
        <h1>
          {namespace}/{name}
        </h1>
        <p role="alert" className="error">
          {error.message}
        </p>
      </main>
    );
  if (!data)
    return (
      <main>
        <h1>
          {namespace}/{name}
        </h1>
        <p>{loading ? 'Loading…' : ''}</p>
      </main>
    );
  if (!phase)
    return (
      <main>
        <h1>
          {namespace}/{name}
        </h1>
        <p>
          No phase {namespace}/{name} in cluster {cluster} that you may see. <Link href="/">Back to the board</Link>.
        </p>
      </main>
    );

  const past = at !== undefined ? phase.statusAt : undefined;
  const shown = past ?? (at === undefined ? phase : undefined);
  const resources = (at !== undefined ? past?.resources : phase.resources)?.edges.map((e) => e.node) ?? [];
  const pick = (moment: Date) => navigate(withParams(place, { at: moment.toISOString() }));
  const markers = phase.manifests.edges.map((e) => ({
    at: e.node.manifest.from,
    label: `manifest ${e.node.manifest.hash.slice(0, 8)}`,
  }));

  return (
    <main className="phase">
      <p className="crumbs">
        <Link href="/">Fleet board</Link> › {phase.cluster} › {phase.namespace}
      </p>
      <div className="title-row">
        <h1>
          {phase.namespace}/{phase.name}{' '}
          <span className="muted">
            in {phase.cluster} · {phase.source}
          </span>
        </h1>
        {at === undefined ? <LiveIndicator state={live} /> : null}
      </div>
      {at !== undefined ? (
        <div className="banner" role="status">
          Viewing {formatTime(new Date(at).toISOString())} UTC —{' '}
          <Link href={withParams(place, { at: undefined })}>back to live</Link>
        </div>
      ) : null}
      <section className="now" aria-label={at !== undefined ? 'Status at the viewed moment' : 'Status now'}>
        {shown ? (
          <>
            <div className="big">
              <StatusBadge status={shown.status} stale={shown.stale} />
            </div>
            <div>
              {at !== undefined && past ? (
                <>
                  from {formatTime(past.from)} to {past.to ? formatTime(past.to) : 'now'}
                </>
              ) : (
                <>
                  since {formatTime(phase.since)} (<TimeAgo iso={phase.since} />)
                </>
              )}
            </div>
            <div className="message">{shown.message}</div>
            <div>
              <Summary counts={shown.summary} />
            </div>
            {shown.stale ? (
              <div className="stale-note">⚠ {staleText(shown.staleReason, phase.lastGoodReadAt)}</div>
            ) : null}
          </>
        ) : (
          <p>The phase had no recorded status at {formatTime(new Date(at ?? now).toISOString())}.</p>
        )}
        <div className="muted">
          manifest{' '}
          {at !== undefined
            ? phase.manifestAt
              ? `${phase.manifestAt.hash.slice(0, 12)} (${phase.manifestAt.entryCount} entries, from ${formatTime(phase.manifestAt.from)})`
              : 'none then'
            : phase.manifest
              ? `${phase.manifest.hash.slice(0, 12)} (${phase.manifest.entryCount} entries)`
              : 'none'}
          {' · '}inventory {phase.inventoryId} · first seen {formatTime(phase.firstSeenAt)}
          {Object.keys(phase.labels).length
            ? ` · labels ${Object.entries(phase.labels)
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')}`
            : ''}
        </div>
      </section>
      <CliHint
        command={
          at !== undefined
            ? `phaselog manifest ${phaseArg(phase)} --at ${new Date(at).toISOString()}`
            : `phaselog status ${phaseArg(phase)}`
        }
      />

      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <div className="filters">
          <span id="window-label">Window</span>
          <div role="group" aria-labelledby="window-label">
            {Object.keys(WINDOWS).map((w) => (
              <button
                key={w}
                type="button"
                aria-pressed={w === windowName}
                onClick={() => navigate(withParams(place, { window: w, from: undefined, to: undefined }))}
              >
                {w}
              </button>
            ))}
          </div>
          <button type="button" onClick={() => setNow(Date.now())}>
            Refresh
          </button>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const t = Date.parse(pickText + 'Z');
              if (!Number.isNaN(t)) pick(new Date(t));
            }}
          >
            <label>
              View moment (UTC){' '}
              <input type="datetime-local" step="1" value={pickText} onChange={(e) => setPickText(e.target.value)} />
            </label>{' '}
            <button type="submit">View</button>
          </form>
        </div>
        {intervals ? (
          <Timeline
            intervals={intervals}
            from={from}
            to={end}
            markers={markers}
            at={at}
            firstSeen={Date.parse(phase.firstSeenAt)}
            onPick={pick}
            onZoom={(a, b) => navigate(withParams(place, { from: a.toISOString(), to: b.toISOString() }))}
            label={`Status of ${phase.namespace}/${phase.name} over ${custom ? `${formatTime(new Date(from).toISOString())} to ${formatTime(new Date(end).toISOString())}` : `the last ${windowName}`}: ${intervals.length} intervals; click a moment to view the phase then`}
          />
        ) : (
          <p>Loading the timeline…</p>
        )}
        <ResourceTimelines
          phaseId={phase.id}
          from={from}
          to={end}
          current={new Map((phase.resources?.edges ?? []).map((e) => [e.node.key, e.node]))}
          onPick={pick}
        />
        <p className="legend muted">
          Click the timeline to view the phase at that moment; drag across it to zoom in. Hatched: stale (cluster
          unreachable or not observed) or nothing recorded. ◆ manifest change.
        </p>
      </section>

      <section aria-labelledby="conditions-title">
        <h2 id="conditions-title">Conditions</h2>
        <Conditions conditions={shown?.conditions ?? []} />
      </section>

      <section aria-labelledby="resources-title">
        <h2 id="resources-title">Resources{at !== undefined ? ` at ${formatTime(new Date(at).toISOString())}` : ''}</h2>
        <ResourcesTable place={place} resources={resources} absoluteSince={at !== undefined} />
      </section>

      <ManifestVersions place={place} phase={phase} refreshAt={now} />
      {at === undefined ? <GateWidget phase={phase} /> : null}
      <ChangeLog place={place} phase={phase} refreshAt={now} />
    </main>
  );
}
