/**
 * Each resource's status over the timeline's window, drawn from the phase's change log (resource
 * changes), one row per resource; read only when opened, since a busy phase has many changes.
 */
import { useEffect, useState } from 'react';
import { gql } from './api.ts';
import { Timeline, type TimelineInterval } from './timeline.tsx';
import { formatResourceKey } from '../src/inventory/object-ref.ts';
import type { ChangeLogEntry } from '../src/graphql/answers.ts';

type ResourceChange = Omit<ChangeLogEntry, 'seq'>;

interface ChangesPage {
  phase: {
    changes: { edges: { node: ResourceChange }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  } | null;
}

const CHANGES = `query ResourceChanges($id: ID!, $from: DateTime!, $to: DateTime!, $after: String) {
  phase(id: $id) { changes(from: $from, to: $to, first: 100, after: $after) { edges { node { at scope resourceKey fromStatus toStatus message } } pageInfo { hasNextPage endCursor } } }
}`;

/** A resource's bands in [from, to): its status before its first change, then after each. */
function bandsOf(
  changes: ResourceChange[],
  now: { status: string; message: string } | undefined,
  from: number,
  to: number,
): TimelineInterval[] {
  const bands: TimelineInterval[] = [];
  const first = changes[0];
  const before = first ? first.fromStatus : (now?.status ?? null);
  if (before)
    bands.push({
      status: before,
      from: new Date(from).toISOString(),
      to: first?.at ?? new Date(to).toISOString(),
      stale: false,
      staleReason: null,
      message: '',
    });
  changes.forEach((change, index) => {
    if (change.toStatus)
      bands.push({
        status: change.toStatus,
        from: change.at,
        to: changes[index + 1]?.at ?? null,
        stale: false,
        staleReason: null,
        message: change.message,
      });
  });
  return bands;
}

export interface ResourceTimelinesProps {
  phaseId: string;
  from: number;
  to: number;
  /** The resources now, by key: a resource with no change in the window held this status throughout. */
  current: Map<string, { status: string; message: string }>;
  onPick: (at: Date) => void;
}

export function ResourceTimelines({ phaseId, from, to, current, onPick }: ResourceTimelinesProps) {
  const [open, setOpen] = useState(false);
  const [changes, setChanges] = useState<ResourceChange[] | undefined>();
  useEffect(() => {
    if (!open) return;
    let cancelled = false;
    void (async () => {
      const all: ResourceChange[] = [];
      let after: string | null = null;
      for (let page = 0; page < 20; page++) {
        const data: ChangesPage = await gql<ChangesPage>(CHANGES, {
          id: phaseId,
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          after,
        });
        const connection = data.phase?.changes;
        if (!connection) break;
        all.push(...connection.edges.map((e) => e.node).filter((c) => c.scope === 'resource'));
        if (!connection.pageInfo.hasNextPage) break;
        after = connection.pageInfo.endCursor;
      }
      if (!cancelled) setChanges(all);
    })().catch(() => !cancelled && setChanges([]));
    return () => {
      cancelled = true;
    };
  }, [open, phaseId, from, to]);
  const keys = [...new Set([...current.keys(), ...(changes ?? []).map((c) => c.resourceKey ?? '')])]
    .filter(Boolean)
    .sort();
  return (
    <details onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Each resource's timeline</summary>
      {open && !changes ? <p>Loading…</p> : null}
      {changes
        ? keys.map((key) => (
            <div key={key} className="reach-row">
              <h3>{formatResourceKey(key)}</h3>
              <Timeline
                intervals={bandsOf(
                  changes.filter((c) => c.resourceKey === key),
                  current.get(key),
                  from,
                  to,
                )}
                from={from}
                to={to}
                markers={[]}
                at={undefined}
                firstSeen={from}
                onPick={onPick}
                label={`Status of ${formatResourceKey(key)} over the window`}
                gapLabel="not in the inventory"
              />
            </div>
          ))
        : null}
    </details>
  );
}
