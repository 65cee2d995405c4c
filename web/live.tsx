/**
 * Live phase status changes over graphql-ws, as `phaselog status --watch` gets them. The
 * subscription passes `after:` the last seq received, so a reconnect (server restart, network
 * blip) first replays what it missed from the change log: nothing lost, nothing twice.
 */
import { createClient } from 'graphql-ws';
import { useEffect, useRef, useState } from 'react';
import { GRAPHQL_PATH, gql, readToken } from './api.ts';

export type LiveState = 'connecting' | 'live' | 'reconnecting';

export interface PhaseChange {
  seq: string;
  at: string;
  cluster: string;
  phaseId: string | null;
  phase: { namespace: string; name: string } | null;
  fromStatus: string | null;
  toStatus: string | null;
  message: string;
}

const HEAD = `query Head($filter: StatusChangeFilter) { statusChangeHead(filter: $filter) }`;

/** The subscriptions a page can follow; each resumes by seq the same way. */
export type LiveField = 'phaseStatusChanged' | 'clusterStatusChanged';

const subscription = (field: LiveField) => `subscription Live($filter: StatusChangeFilter, $after: String) {
  ${field}(filter: $filter, after: $after) { seq at cluster phaseId phase { namespace name } fromStatus toStatus message }
}`;

export interface LiveOptions {
  /** Which changes. @default 'phaseStatusChanged' */
  field?: LiveField;
  filter: Record<string, unknown>;
  onChange: (change: PhaseChange) => void;
  /** Called on every reconnect, after the first connection. */
  onReconnect?: () => void;
}

/** Subscribes while mounted; returns the connection state for the indicator. */
export function useLiveChanges(options: LiveOptions): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  const callbacks = useRef(options);
  callbacks.current = options;
  const filterKey = JSON.stringify(options.filter);
  const field = options.field ?? 'phaseStatusChanged';
  useEffect(() => {
    const url = new URL(GRAPHQL_PATH, window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const token = readToken();
    // graphql-ws re-sends this payload on every reconnect, serialising it then: updating `after`
    // in place is what makes a retry resume after the last change received.
    const payload = {
      query: subscription(field),
      variables: { filter: JSON.parse(filterKey) as unknown, after: undefined as string | undefined },
    };
    let stopped = false;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let close = () => {};
    const open = (reopened: boolean) => {
      const client = createClient({
        url: url.href,
        lazy: false,
        connectionParams: token ? { authorization: `Bearer ${token}` } : {},
        retryAttempts: Infinity,
        // Any close graphql-ws does not deem fatal is retried: a restart closes with 1001 or 1006.
        shouldRetry: () => true,
        retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** retries, 5000))),
        on: {
          connected: (_socket, _payload, wasRetry) => {
            setState('live');
            if (wasRetry || reopened) callbacks.current.onReconnect?.();
          },
          closed: () => !stopped && setState('reconnecting'),
        },
      });
      let done = false;
      // What graphql-ws gives up on (a close code it deems fatal, an error answer) gets a new
      // client a little later, resuming from the same `after`: the board never stops by itself.
      const giveUp = () => {
        if (stopped || done) return;
        done = true;
        setState('reconnecting');
        void client.dispose();
        retryTimer = setTimeout(() => open(true), 3000);
      };
      const unsubscribe = client.subscribe<Record<LiveField, PhaseChange>>(payload, {
        next: (message) => {
          const change = message.data?.[field];
          if (!change) return;
          payload.variables.after = change.seq;
          callbacks.current.onChange(change);
        },
        error: giveUp,
        complete: giveUp,
      });
      close = () => {
        done = true;
        unsubscribe();
        void client.dispose();
      };
    };
    // Start after the change log's head as it is now: a page that has received no change yet still
    // resumes by seq after a reconnect. Without an answer it starts live and relies on onReconnect.
    gql<{ statusChangeHead: string | null }>(HEAD, { filter: payload.variables.filter })
      .then(
        (data) => {
          payload.variables.after ??= data.statusChangeHead ?? '0';
        },
        () => {},
      )
      .finally(() => !stopped && open(false));
    return () => {
      stopped = true;
      clearTimeout(retryTimer);
      close();
    };
  }, [filterKey, field]);
  return state;
}

export function LiveIndicator({ state }: { state: LiveState }) {
  const text = state === 'live' ? 'Live' : state === 'connecting' ? 'Connecting…' : 'Reconnecting…';
  return (
    <span className={`live live-${state}`} role="status" aria-live="polite">
      <span aria-hidden="true">{state === 'live' ? '●' : '○'}</span> {text}
    </span>
  );
}
