import type { Logger } from 'pino';
import type { ClusterStore } from '../store/cluster-store.ts';
import type { Role } from '../config.ts';

/** What resolvers may use. Built per request (HTTP) or per operation (WebSocket). */
export interface GraphqlContext {
  requestId: string;
  log: Logger;
  about: { version: string; role: Role; startedAt: Date };
  clusters: ClusterStore;
}
