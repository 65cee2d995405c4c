/**
 * Live status changes for subscribers, with catch-up: a subscriber that gives the last seq it saw
 * first gets every later change from the change log, then live ones, with no gap and no duplicate.
 * Order of operations: listen on Redis first (buffering), replay from the database, then deliver
 * the buffer and live events, skipping any seq already delivered. One Redis subscription per
 * process fans out to every subscriber.
 */
import { changeSubject, mayAccess } from '../store/access-rule.ts';
import type { HistoryReader, StatusChangeFilter } from '../store/read-history.ts';
import type { StatusChange } from '../history/types.ts';
import type { AccessScope } from '../store/read-types.ts';

/** A source of live change events (Redis pub/sub in production). */
export interface ChangeSource {
  /** Starts delivering every change to `onChange`; resolves once listening. */
  subscribe(onChange: (change: StatusChange) => void): Promise<{ close(): Promise<void> }>;
}

export interface ChangeFeed {
  /** Changes matching `filter` that `scope` may see, after `afterSeq` when given. Ends when `signal` aborts. */
  subscribe(
    scope: AccessScope,
    filter: StatusChangeFilter,
    afterSeq: bigint | undefined,
  ): AsyncIterableIterator<StatusChange>;
  close(): Promise<void>;
}

/** Whether a change matches a filter and an access scope (the same rules as the change log query). */
export function changeMatches(change: StatusChange, scope: AccessScope, filter: StatusChangeFilter): boolean {
  if (!mayAccess(scope, changeSubject(change))) return false;
  if (filter.cluster !== undefined && change.cluster !== filter.cluster) return false;
  if (filter.namespace !== undefined && change.phase?.namespace !== filter.namespace) return false;
  if (filter.phaseId !== undefined && change.phaseId !== filter.phaseId) return false;
  if (filter.scopes !== undefined && !filter.scopes.includes(change.scope)) return false;
  if (filter.toStatus !== undefined && (change.toStatus === null || !filter.toStatus.includes(change.toStatus)))
    return false;
  if (
    filter.conditionTypes !== undefined &&
    (change.conditionType == null || !filter.conditionTypes.includes(change.conditionType))
  )
    return false;
  return true;
}

const REPLAY_PAGE = 500;
/** Seqs remembered to drop duplicates that arrive out of order (two snapshots publishing concurrently). */
const REMEMBERED_SEQS = 10_000;

export function createChangeFeed(options: { source: ChangeSource; history: HistoryReader }): ChangeFeed {
  const listeners = new Set<(change: StatusChange) => void>();
  let started: Promise<{ close(): Promise<void> }> | undefined;
  const ensureStarted = () => {
    started ??= options.source.subscribe((change) => {
      for (const listener of listeners) listener(change);
    });
    started.catch(() => (started = undefined));
    return started;
  };

  return {
    subscribe(scope, filter, afterSeq) {
      const buffer: StatusChange[] = [];
      let wake: (() => void) | undefined;
      let done = false;
      const listener = (change: StatusChange) => {
        if (!changeMatches(change, scope, filter)) return;
        buffer.push(change);
        wake?.();
      };
      listeners.add(listener);
      const delivered = new Set<bigint>();
      let replayedUpTo: bigint | undefined = afterSeq;
      const stop = () => {
        done = true;
        listeners.delete(listener);
        wake?.();
      };

      async function* run(): AsyncGenerator<StatusChange> {
        try {
          await ensureStarted();
          if (afterSeq !== undefined) {
            let cursor: bigint = afterSeq;
            for (;;) {
              const page = await options.history.listStatusChanges(scope, filter, REPLAY_PAGE, cursor);
              for (const change of page.items) {
                cursor = change.seq;
                replayedUpTo = change.seq;
                yield change;
              }
              if (!page.hasMore || done) break;
            }
          }
          while (!done) {
            const change = buffer.shift();
            if (change === undefined) {
              await new Promise<void>((resolve) => (wake = resolve));
              wake = undefined;
              continue;
            }
            if (replayedUpTo !== undefined && change.seq <= replayedUpTo) continue;
            if (delivered.has(change.seq)) continue;
            delivered.add(change.seq);
            if (delivered.size > REMEMBERED_SEQS) delivered.delete(delivered.values().next().value as bigint);
            yield change;
          }
        } finally {
          stop();
        }
      }
      const iterator = run();
      const originalReturn = iterator.return.bind(iterator);
      // graphql-ws calls return() on complete/close; wake the generator so it can finish.
      iterator.return = (value) => {
        stop();
        return originalReturn(value);
      };
      return iterator;
    },
    async close() {
      listeners.clear();
      const current = started;
      started = undefined;
      if (current) await (await current).close();
    },
  };
}
