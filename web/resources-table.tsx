/** A phase's resources, sortable by any column and filterable by text and status. */
import { useEffect, useMemo, useState } from 'react';
import { navigate, withParams, type Place } from './router.tsx';
import { formatTime, severity, StatusBadge, STATUSES, TimeAgo } from './status.tsx';

export interface ResourceRow {
  key: string;
  kind: string;
  namespace: string;
  name: string;
  status: string;
  reason: string | null;
  message: string;
  since: string;
  customHealth: { engine: string; health: string; message: string } | null;
  /** What the tool that applied the member recorded in the inventory (cli-utils/kpt actuation, Argo CD sync). */
  applied: Applied | null;
}

/** Resource.applied: each field null when the inventory does not record it. */
export interface Applied {
  strategy: string | null;
  actuation: string | null;
  reconcile: string | null;
  sync: string | null;
}

type Column = 'kind' | 'name' | 'status' | 'applied' | 'message' | 'since';
const COLUMNS: [Column, string][] = [
  ['kind', 'Kind'],
  ['name', 'Namespace/name'],
  ['status', 'Status'],
  ['applied', 'Applied'],
  ['message', 'Message'],
  ['since', 'Since'],
];

/**
 * The applier's status in a few words: `actuation/reconcile` as cli-utils and kpt record them
 * (`Delete` first for an object the applier deletes), or Argo CD's sync status; '' for none.
 */
export function formatApplied(a: Applied | null): string {
  if (a === null) return '';
  const parts: string[] = [];
  if (a.strategy !== null && a.strategy !== 'Apply') parts.push(a.strategy);
  if (a.actuation !== null || a.reconcile !== null) parts.push(`${a.actuation ?? '-'}/${a.reconcile ?? '-'}`);
  if (a.sync !== null) parts.push(a.sync);
  return parts.join(' ');
}

/** The field-by-field words of an applier status, for the cell's title. */
function describeApplied(a: Applied): string {
  return (['strategy', 'actuation', 'reconcile', 'sync'] as const)
    .filter((f) => a[f] !== null)
    .map((f) => `${f}: ${a[f] ?? ''}`)
    .join(', ');
}

function compare(a: ResourceRow, b: ResourceRow, column: Column): number {
  switch (column) {
    case 'applied':
      return formatApplied(a.applied).localeCompare(formatApplied(b.applied));
    case 'status':
      return severity(a.status) - severity(b.status);
    case 'since':
      return Date.parse(a.since) - Date.parse(b.since);
    case 'name':
      return `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`);
    default:
      return a[column].localeCompare(b[column]);
  }
}

const isColumn = (value: string): value is Column => COLUMNS.some(([c]) => c === value);

/**
 * Sort, status and text filter live in the URL (`rsort=since-desc&rstatus=Failed&rq=web`) like every
 * view. `absoluteSince`: show since as a time (a past view), not as an age from now.
 */
export function ResourcesTable({
  place,
  resources,
  absoluteSince,
}: {
  place: Place;
  resources: ResourceRow[];
  absoluteSince?: boolean;
}) {
  // The Applied column only where a member has an applier status (selector, config, owner and Flux phases never do).
  const showApplied = resources.some((r) => r.applied !== null);
  const columns = showApplied ? COLUMNS : COLUMNS.filter(([c]) => c !== 'applied');
  const [sortColumn = 'status', direction] = (place.params.get('rsort') ?? '').split('-');
  const sort = { column: isColumn(sortColumn) ? sortColumn : 'status', ascending: direction !== 'desc' };
  const status = place.params.get('rstatus') ?? '';
  const query = place.params.get('rq') ?? '';
  const [text, setText] = useState(query);
  useEffect(() => setText(query), [query]);
  useEffect(() => {
    if (text === query) return;
    const timer = setTimeout(() => navigate(withParams(place, { rq: text.trim() }), { replace: true }), 300);
    return () => clearTimeout(timer);
  }, [text, query, place]);
  const rows = useMemo(() => {
    const needle = query.toLowerCase();
    const kept = resources.filter(
      (r) =>
        (!status || r.status === status) &&
        (!needle || `${r.kind} ${r.namespace}/${r.name} ${r.message}`.toLowerCase().includes(needle)),
    );
    return kept.sort((a, b) => (sort.ascending ? 1 : -1) * compare(a, b, sort.column) || a.key.localeCompare(b.key));
  }, [resources, sort.column, sort.ascending, query, status]);
  const sortBy = (column: Column) =>
    navigate(withParams(place, { rsort: `${column}-${sort.column === column && sort.ascending ? 'desc' : 'asc'}` }), {
      replace: true,
    });
  return (
    <>
      <div className="filters">
        <label>
          Filter resources <input type="search" value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <label>
          Status{' '}
          <select
            value={status}
            onChange={(e) => navigate(withParams(place, { rstatus: e.target.value }), { replace: true })}
          >
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <span className="muted">
          {rows.length} of {resources.length}
        </span>
      </div>
      <table className="list resources" aria-label="Resources">
        <thead>
          <tr>
            {columns.map(([column, title]) => (
              <th
                key={column}
                scope="col"
                aria-sort={sort.column === column ? (sort.ascending ? 'ascending' : 'descending') : 'none'}
              >
                <button type="button" className="sort" onClick={() => sortBy(column)}>
                  {title} <span aria-hidden="true">{sort.column === column ? (sort.ascending ? '▲' : '▼') : '↕'}</span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} data-status={r.status}>
              <td>{r.kind}</td>
              <td>
                {r.namespace ? `${r.namespace}/` : ''}
                {r.name}
              </td>
              <td>
                <StatusBadge status={r.status} />
                {r.reason && r.status === 'Unknown' ? <div className="muted">{r.reason}</div> : null}
              </td>
              {showApplied ? (
                <td title={r.applied ? describeApplied(r.applied) : 'no applier status recorded'}>
                  {r.applied ? formatApplied(r.applied) : <span className="muted">-</span>}
                </td>
              ) : null}
              <td>
                {r.message}
                {r.customHealth ? (
                  <div className="muted">
                    custom health ({r.customHealth.engine}): {r.customHealth.health} {r.customHealth.message}
                  </div>
                ) : null}
              </td>
              <td>{absoluteSince ? formatTime(r.since) : <TimeAgo iso={r.since} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
