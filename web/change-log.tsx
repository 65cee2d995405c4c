/** The phase's change log (its own and its resources' status changes), oldest first, paged. */
import { useEffect, useRef } from 'react';
import { useQuery } from './api.ts';
import { CliHint, phaseArg } from './cli-hint.tsx';
import { navigate, withParams, type Place } from './router.tsx';
import { formatTime, StatusBadge } from './status.tsx';
import { formatResourceKey } from '../src/inventory/object-ref.ts';
import type { ChangeLogEntry } from '../src/graphql/answers.ts';

const CHANGES = `query Changes($id: ID!, $after: String) {
  phase(id: $id) { changes(first: 25, after: $after) { edges { node { seq at scope resourceKey conditionType fromStatus toStatus message } } pageInfo { hasNextPage endCursor } } }
}`;

/** `refreshAt` changes when the page learns of a change: the list is read again then. */
export function ChangeLog({
  place,
  phase,
  refreshAt,
}: {
  place: Place;
  phase: { id: string; cluster: string; namespace: string; name: string };
  refreshAt: number;
}) {
  // The pages read so far, as a list of cursors in the URL: back/forward and deep links keep the page.
  const trail = (place.params.get('log') ?? '').split(',').filter(Boolean);
  const after = trail.at(-1);
  const { data, error, reload } = useQuery<{
    phase: {
      changes: { edges: { node: ChangeLogEntry }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    } | null;
  }>(CHANGES, { id: phase.id, after });
  const first = useRef(refreshAt);
  useEffect(() => {
    if (refreshAt !== first.current) reload();
  }, [refreshAt, reload]);
  const changes = data?.phase?.changes;
  return (
    <section aria-labelledby="log-title">
      <h2 id="log-title">Change log</h2>
      {error ? (
        <p role="alert" className="error">
          {error.message}
        </p>
      ) : null}
      {changes ? (
        <>
          <table className="list" aria-label="Status changes">
            <thead>
              <tr>
                <th scope="col">At (UTC)</th>
                <th scope="col">What</th>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {changes.edges.map(({ node: c }) => (
                <tr key={c.seq} data-scope={c.scope} data-to={c.toStatus ?? ''}>
                  <td>
                    <button
                      type="button"
                      className="linkish"
                      onClick={() => navigate(withParams(place, { at: c.at }))}
                      aria-label={`View the phase at ${formatTime(c.at)}`}
                    >
                      {formatTime(c.at)}
                    </button>
                  </td>
                  <td>
                    {c.scope === 'phase'
                      ? 'phase'
                      : c.resourceKey
                        ? formatResourceKey(c.resourceKey)
                        : c.conditionType
                          ? `condition ${c.conditionType}`
                          : c.scope}
                  </td>
                  <td>
                    {c.fromStatus ? <StatusBadge status={c.fromStatus} /> : <span className="muted">(appeared)</span>}
                  </td>
                  <td>{c.toStatus ? <StatusBadge status={c.toStatus} /> : <span className="muted">(gone)</span>}</td>
                  <td>{c.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="pager">
            <button
              type="button"
              disabled={trail.length === 0}
              onClick={() => navigate(withParams(place, { log: trail.slice(0, -1).join(',') }))}
            >
              Earlier page
            </button>{' '}
            <button
              type="button"
              disabled={!changes.pageInfo.hasNextPage}
              onClick={() =>
                navigate(withParams(place, { log: [...trail, changes.pageInfo.endCursor ?? ''].join(',') }))
              }
            >
              Later page
            </button>
            <span className="muted"> page {trail.length + 1}</span>
          </div>
        </>
      ) : null}
      <CliHint command={`phaselog history ${phaseArg(phase)} --all`} />
    </section>
  );
}
