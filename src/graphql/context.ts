import type { Logger } from 'pino';
import type { Principal } from '../auth/principal.ts';
import type { ChangeFeed } from '../services/read-change-feed.ts';
import type { Refresher } from '../services/refresh-cluster.ts';
import type { ApiTokenStore } from '../store/api-token-store.ts';
import type { ClusterStore } from '../store/cluster-store.ts';
import type { HistoryReader } from '../store/read-history.ts';
import type { NotificationStore } from '../store/notification-store.ts';
import type { ConditionStore } from '../store/condition-store.ts';
import type { PhaseReader } from '../store/read-phases.ts';
import type { ClusterOwner } from '../queue/ownership.ts';
import type { PlanReader } from '../services/read-plans.ts';
import type { Role } from '../config.ts';
import type { TreeReader } from '../pubsub/resource-trees.ts';
import type { LiveStatusRequester } from '../pubsub/live-status.ts';
import type { Loaders } from './loaders.ts';
import type { createAuditReport, RenderedReport } from '../services/audit-report.ts';
import type { ReportStore } from '../store/report-store.ts';

/** Audit reports for the API. */
export interface ReportsApi {
  create(request: Parameters<typeof createAuditReport>[1]): Promise<RenderedReport>;
  stored: ReportStore;
}

/** The read side resolvers call into: stores returning domain types and services. */
export interface ReadApi {
  phases: PhaseReader;
  history: HistoryReader;
  /** Phase conditions from checks (read by phase id, once the phase itself was allowed). */
  conditions: Pick<ConditionStore, 'currentConditions' | 'conditionsAt' | 'conditionIntervals'>;
  tokens: ApiTokenStore;
  /** Notification deliveries. */
  notifications: NotificationStore;
  /** Audit reports: computed on demand, and the stored (scheduled) ones. */
  reports: ReportsApi;
  /** Phase plans (phaselog.yaml's and the labels'), derived from the phases' statuses. */
  plans: PlanReader;
  /** Live status changes; absent where no Redis is wired (subscriptions then fail with an error). */
  changes?: ChangeFeed;
  /** Resource trees the workers publish; absent where no Redis is wired. */
  trees?: TreeReader;
  /** Which worker owns each cluster now (from the ownership leases); absent where no Redis is wired. */
  owners?: (clusters: readonly string[]) => Promise<ReadonlyMap<string, ClusterOwner>>;
  /** Live status blocks, asked of each cluster's owning worker; absent where no Redis is wired. */
  liveStatus?: LiveStatusRequester;
  /** "Refresh now" through the snapshot queue; absent where no Redis is wired. */
  refresher?: Refresher;
}

/** The kind of a GraphQL operation, which decides the database its reads go to. */
export type OperationKind = 'query' | 'mutation' | 'subscription';

/** What resolvers may use. Built per request (HTTP) or per operation (WebSocket). */
export interface GraphqlContext {
  requestId: string;
  log: Logger;
  about: { version: string; role: Role; startedAt: Date };
  clusters: ClusterStore;
  /** Who is calling; every read is restricted to what this principal may see. */
  principal: Principal;
  read: ReadApi;
  /** Per-request batching; never shared between requests. */
  loaders: Loaders;
}
