/**
 * One process's metrics: a prom-client registry of its own (never the global default, so several
 * phaselog instances, as tests start them, keep their counts apart), with Node's process metrics
 * under the `phaselog_` prefix and the machinery series each part increments where things happen.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { registerCollected, type CollectedValue } from './collected.ts';

/** How a snapshot was started: by a job scheduler's tick, a watch event, or a refresh. */
export type SnapshotKind = 'scheduled' | 'live';

/** Series for the snapshot workers. */
export interface SnapshotMetrics {
  duration: Histogram<'cluster' | 'kind' | 'outcome'>;
  statusChanges: Counter<'cluster'>;
  failed: Counter<'cluster'>;
}

/** Series for the GraphQL API. */
export interface GraphqlMetrics {
  /** Observes one HTTP request: its operation type (`query`, `mutation`, `subscription`, `unknown`). */
  observeRequest(operationType: string, seconds: number): void;
}

export interface Metrics {
  readonly registry: Registry;
  /** Requests to clusters' API servers by cluster and HTTP status code (`error`: no answer). */
  readonly kubeRequests: Counter<'cluster' | 'code'>;
  readonly snapshots: SnapshotMetrics;
  /** Notification delivery attempts and verdicts by route and result (delivered, retry, failed, skipped, suppressed). */
  readonly notifications: Counter<'route' | 'result'>;
  readonly graphql: GraphqlMetrics;
  /** Adds a series computed on each scrape (queue depth, watch counts, active subscriptions). */
  collect(
    name: string,
    help: string,
    type: 'gauge' | 'counter',
    collect: () => Promise<readonly CollectedValue[]> | readonly CollectedValue[],
  ): void;
  /** Adds a block of exposition text written by its owner (series too many for prom-client's metric objects). */
  addText(render: () => Promise<string>): void;
  /** The exposition text and its content type. */
  render(): Promise<{ body: string; contentType: string }>;
}

const OPERATION_TYPES = new Set(['query', 'mutation', 'subscription']);

/** Registers the count of GraphQL operations running on open WebSocket connections. */
export function registerActiveOperations(metrics: Metrics, count: () => number): void {
  metrics.collect(
    'phaselog_graphql_active_operations',
    'GraphQL operations (subscriptions, mostly) running on open WebSocket connections.',
    'gauge',
    () => [{ labels: {}, value: count() }],
  );
}

/** Creates a process's registry and its machinery series. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'phaselog_' });
  const registers = [registry];
  const snapshots: SnapshotMetrics = {
    duration: new Histogram({
      name: 'phaselog_snapshot_duration_seconds',
      help: 'Time a snapshot job took, from reading the cluster to its write committed, by cluster, kind (scheduled or live) and outcome (ok, unreachable, skipped, error).',
      labelNames: ['cluster', 'kind', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    statusChanges: new Counter({
      name: 'phaselog_status_changes_total',
      help: 'Status changes (phase and resource) written to the change log, by cluster.',
      labelNames: ['cluster'],
      registers,
    }),
    failed: new Counter({
      name: 'phaselog_snapshot_failures_total',
      help: 'Snapshot jobs that threw (the store failed; they are retried), by cluster.',
      labelNames: ['cluster'],
      registers,
    }),
  };
  const graphqlDuration = new Histogram({
    name: 'phaselog_graphql_request_duration_seconds',
    help: 'Time to answer a GraphQL request over HTTP, by operation type.',
    labelNames: ['operation'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const texts: (() => Promise<string>)[] = [];
  return {
    registry,
    kubeRequests: new Counter({
      name: 'phaselog_kube_requests_total',
      help: 'Requests to clusters\' API servers (lists, gets, watches) by cluster and HTTP status code; code "error" when no answer came.',
      labelNames: ['cluster', 'code'],
      registers,
    }),
    snapshots,
    notifications: new Counter({
      name: 'phaselog_notification_deliveries_total',
      help: 'Notification deliveries by route and result: delivered, retry (an attempt failed, another follows), failed (no more attempts), skipped (sent already), suppressed (minDuration not held, or flapping).',
      labelNames: ['route', 'result'],
      registers,
    }),
    graphql: {
      // The type comes from the parsed document, never the operation's name: label values stay bounded.
      observeRequest: (operationType, seconds) =>
        graphqlDuration.observe({ operation: OPERATION_TYPES.has(operationType) ? operationType : 'unknown' }, seconds),
    },
    collect: (name, help, type, collect) => registerCollected(registry, { name, help, type, collect }),
    addText: (render) => void texts.push(render),
    async render() {
      const parts = await Promise.all([registry.metrics(), ...texts.map((render) => render())]);
      return { body: parts.join('\n'), contentType: registry.contentType };
    },
  };
}
