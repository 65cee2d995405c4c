/** Clusters: whether phaselog observes and reaches each one now, its last good read, its outages. */
import { useQuery } from './api.ts';
import { CliHint } from './cli-hint.tsx';
import { formatSpan, formatTime, TimeAgo } from './status.tsx';

interface ClusterRow {
  name: string;
  labels: Record<string, string>;
  state: string;
  reachable: boolean | null;
  lastGoodReadAt: string | null;
  lastObservedAt: string | null;
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

const CLUSTERS = `query Clusters {
  clusters { name labels state reachable lastGoodReadAt lastObservedAt snapshotInterval retiredAt }
  statusChanges(filter: { scopes: [cluster] }, first: 100) { edges { node { cluster at fromStatus toStatus message } } }
}`;

const STATE_TEXT: Record<string, string> = { OBSERVED: '✓ observed', UNREACHABLE: '✕ unreachable', UNOBSERVED: '⚠ not observed', RETIRED: '⊘ retired' };

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
  const { data, error } = useQuery<{ clusters: ClusterRow[]; statusChanges: { edges: { node: Outage }[] } }>(CLUSTERS, {});
  const changes = data?.statusChanges.edges.map((e) => e.node) ?? [];
  return (
    <main>
      <h1>Clusters</h1>
      {error ? <p role="alert" className="error">Cannot load clusters: {error.message}</p> : null}
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
              <th scope="col">Outages (oldest 100 changes)</th>
            </tr>
          </thead>
          <tbody>
            {data.clusters.map((c) => {
              const outages = outagesOf(changes, c.name);
              return (
                <tr key={c.name} id={c.name} className={c.state === 'OBSERVED' ? undefined : 'stale'}>
                  <th scope="row">
                    {c.name}
                    <div className="muted">{Object.entries(c.labels).map(([k, v]) => `${k}=${v}`).join(', ')}</div>
                  </th>
                  <td className={`state-${c.state}`}>{STATE_TEXT[c.state] ?? c.state}</td>
                  <td>{formatTime(c.lastGoodReadAt)} (<TimeAgo iso={c.lastGoodReadAt} /> ago)</td>
                  <td><TimeAgo iso={c.lastObservedAt} /> ago</td>
                  <td>{c.snapshotInterval ?? '–'}</td>
                  <td>
                    {outages.length === 0 ? 'none recorded' : (
                      <ul className="plain">
                        {outages.slice(0, 5).map((o) => (
                          <li key={o.from}>
                            {formatTime(o.from)} for {o.to ? formatSpan(Date.parse(o.to) - Date.parse(o.from)) : 'ongoing'}
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
      <CliHint command="phaselog clusters" />
    </main>
  );
}
