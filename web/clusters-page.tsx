/** Clusters: whether phaselog observes and reaches each one now, its last good read, its outages. */
import { useEffect, useState } from 'react';
import { gql, useQuery } from './api.ts';
import { Timeline, type TimelineInterval } from './timeline.tsx';
import { CliHint } from './cli-hint.tsx';
import type { ClusterSummary } from '../src/graphql/answers.ts';
import { formatSpan, formatTime, TimeAgo } from './status.tsx';

interface ClusterRow extends ClusterSummary {
  snapshotInterval: string | null;
  retiredAt: string | null;
}

interface Outage {
  cluster: string;
  at: string;
  toStatus: string | null;
  fromStatus: string | null;
  message: string;
}

const CLUSTERS = `{ clusters { name labels state reachable lastGoodReadAt lastObservedAt snapshotInterval retiredAt } }`;

const CLUSTER_CHANGES = `query ClusterChanges($after: String) {
  statusChanges(filter: { scopes: [cluster] }, first: 100, after: $after) { edges { node { cluster at fromStatus toStatus message } } pageInfo { hasNextPage endCursor } }
}`;

interface ChangesPage {
  statusChanges: { edges: { node: Outage }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

/** Every cluster reachability change (few: one per outage edge), oldest first. */
function useClusterChanges(): Outage[] | undefined {
  const [changes, setChanges] = useState<Outage[] | undefined>();
  useEffect(() => {
    let cancelled = false;
    void (async () => {
      const all: Outage[] = [];
      let after: string | null = null;
      for (let page = 0; page < 50; page++) {
        const data: ChangesPage = await gql<ChangesPage>(CLUSTER_CHANGES, { after });
        all.push(...data.statusChanges.edges.map((e) => e.node));
        if (!data.statusChanges.pageInfo.hasNextPage) break;
        after = data.statusChanges.pageInfo.endCursor;
      }
      if (!cancelled) setChanges(all);
    })().catch(() => !cancelled && setChanges([]));
    return () => {
      cancelled = true;
    };
  }, []);
  return changes;
}

/** A cluster's reachability as timeline bands: reachable green, unreachable red, unobserved hatched. */
function reachabilityBands(changes: Outage[], cluster: string): TimelineInterval[] {
  const mine = changes.filter((c) => c.cluster === cluster);
  return mine.map((c, index) => {
    const reachable = c.toStatus === 'Reachable';
    return {
      status: reachable ? 'Current' : 'Failed',
      label: reachable ? 'reachable' : (c.toStatus ?? 'unknown').toLowerCase(),
      from: c.at,
      to: mine[index + 1]?.at ?? null,
      stale: !reachable && c.toStatus !== 'Unreachable',
      staleReason: null,
      message: c.message,
    };
  });
}

const STATE_TEXT: Record<string, string> = {
  OBSERVED: '✓ observed',
  UNREACHABLE: '✕ unreachable',
  UNOBSERVED: '⚠ not observed',
  RETIRED: '⊘ retired',
};

/** Outages (Unreachable → next Reachable) from a cluster's reachability changes, newest first. */
function outagesOf(changes: Outage[], cluster: string): { from: string; to: string | null; message: string }[] {
  const spans: { from: string; to: string | null; message: string }[] = [];
  for (const change of changes.filter((c) => c.cluster === cluster)) {
    if (change.toStatus === 'Unreachable') spans.push({ from: change.at, to: null, message: change.message });
    else if (change.toStatus === 'Reachable') {
      const open = spans.at(-1);
      if (open && open.to === null) open.to = change.at;
    }
  }
  return spans.reverse();
}

export function ClustersPage() {
  const { data, error } = useQuery<{ clusters: ClusterRow[] }>(CLUSTERS, {});
  const changes = useClusterChanges() ?? [];
  const [now] = useState(() => Date.now());
  // The smallest of 1h, 24h and 7d that holds every recorded change (a new install has minutes).
  const oldest = changes[0] ? Date.parse(changes[0].at) : now;
  const [windowName, span] = (
    [
      ['hour', 3_600_000],
      ['24 hours', 86_400_000],
      ['7 days', 7 * 86_400_000],
    ] as const
  ).find(([, ms]) => ms >= now - oldest) ?? ['7 days', 7 * 86_400_000];
  return (
    <main>
      <h1>Clusters</h1>
      {error ? (
        <p role="alert" className="error">
          Cannot load clusters: {error.message}
        </p>
      ) : null}
      {!data && !error ? <p>Loading…</p> : null}
      {data ? (
        <table className="list" aria-label="Clusters">
          <thead>
            <tr>
              <th scope="col">Cluster</th>
              <th scope="col">State</th>
              <th scope="col">Last good read</th>
              <th scope="col">Last snapshot</th>
              <th scope="col">Interval</th>
              <th scope="col">Outages (newest 5)</th>
            </tr>
          </thead>
          <tbody>
            {data.clusters.map((c) => {
              const outages = outagesOf(changes, c.name);
              return (
                <tr key={c.name} id={c.name} className={c.state === 'OBSERVED' ? undefined : 'stale'}>
                  <th scope="row">
                    {c.name}
                    <div className="muted">
                      {Object.entries(c.labels)
                        .map(([k, v]) => `${k}=${v}`)
                        .join(', ')}
                    </div>
                  </th>
                  <td className={`state-${c.state}`}>{STATE_TEXT[c.state] ?? c.state}</td>
                  <td>
                    {formatTime(c.lastGoodReadAt)} (<TimeAgo iso={c.lastGoodReadAt} /> ago)
                  </td>
                  <td>
                    <TimeAgo iso={c.lastObservedAt} /> ago
                  </td>
                  <td>{c.snapshotInterval ?? '–'}</td>
                  <td>
                    {outages.length === 0 ? (
                      'none recorded'
                    ) : (
                      <ul className="plain">
                        {outages.slice(0, 5).map((o) => (
                          <li key={o.from}>
                            {formatTime(o.from)} for{' '}
                            {o.to ? formatSpan(Date.parse(o.to) - Date.parse(o.from)) : 'ongoing'}
                            {o.message ? <span className="muted"> — {o.message}</span> : null}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      {data ? (
        <section aria-labelledby="reach-title">
          <h2 id="reach-title">Reachability, last {windowName}</h2>
          {data.clusters.map((c) => (
            <div key={c.name} className="reach-row">
              <h3>{c.name}</h3>
              <Timeline
                intervals={reachabilityBands(changes, c.name)}
                from={now - span}
                to={now}
                markers={[]}
                at={undefined}
                firstSeen={Date.parse(changes.find((x) => x.cluster === c.name)?.at ?? new Date(now).toISOString())}
                onPick={() => {}}
                label={`Reachability of ${c.name} over the last ${windowName}: ${outagesOf(changes, c.name).length} outages`}
              />
            </div>
          ))}
        </section>
      ) : null}
      <CliHint command="phaselog clusters" />
    </main>
  );
}
