/**
 * Wires the GraphQL API's read side for the composition root: stores, the live change feed,
 * authentication and the start-up rule for anonymous access.
 */
import type { Logger } from 'pino';
import { createAuthenticator, type Authenticator } from '../auth/principal.ts';
import type { Config } from '../config.ts';
import { Redis } from 'ioredis';
import { subscribeChanges } from '../pubsub/change-publisher.ts';
import { createTreeReader, TREE_PREFIX } from '../pubsub/resource-trees.ts';
import { createLiveStatusRequester } from '../pubsub/live-status.ts';
import { ownershipPrefix, readClusterOwners } from '../queue/ownership.ts';
import { SNAPSHOT_QUEUE } from '../queue/snapshot-jobs.ts';
import { createTokenRevocationPublisher, subscribeTokenRevocations } from '../pubsub/token-revocations.ts';
import { StartupError } from '../runtime/errors.ts';
import { createChangeFeed, type ChangeSource } from '../services/read-change-feed.ts';
import { createRefresher } from '../services/refresh-cluster.ts';
import { createApiTokenStore, type ApiTokenStore } from '../store/api-token-store.ts';
import type { Db } from '../store/db.ts';
import { createNotificationStore } from '../store/notification-store.ts';
import { createConditionStore } from '../store/condition-store.ts';
import { createHistoryReader, type HistoryReader } from '../store/read-history.ts';
import { createPhaseReader } from '../store/read-phases.ts';
import { createPlanReader } from '../services/read-plans.ts';
import { isLoopbackHost } from '../http/origin.ts';
import type { OperationKind, ReadApi } from './context.ts';
import { createAuditReport } from '../services/audit-report.ts';
import { createReportStore } from '../store/report-store.ts';
import { createLoaders, type Loaders } from './loaders.ts';

/**
 * Whether anonymous read is on. Unset: on for a loopback bind. A non-loopback bind with no token
 * and no explicit choice is refused: the API would be open to the network, or closed to everyone.
 */
export function decideAnonymousRead({
  host,
  configured,
  activeTokens,
}: {
  host: string;
  configured: boolean | undefined;
  activeTokens: number;
}): boolean {
  if (configured !== undefined) return configured;
  if (isLoopbackHost(host)) return true;
  if (activeTokens === 0) {
    throw new StartupError(
      `the API binds ${host}, which is reachable from other machines, and no API token exists: create one with ` +
        '"phaselog token create --admin <name>", or set api.anonymousRead (PHASELOG_ANONYMOUS_READ) to true or false explicitly',
    );
  }
  return false;
}

/** Live changes from Redis pub/sub (the channel the snapshot side publishes on). */
export function redisChangeSource(redisUrl: string, prefix?: string, log?: Logger): ChangeSource {
  return {
    subscribe: (onChange) =>
      subscribeChanges(redisUrl, onChange, {
        ...(prefix === undefined ? {} : { prefix }),
        ...(log === undefined ? {} : { log }),
      }),
  };
}

export interface ApiWiring {
  /** What queries read: the read database (`database.readUrl`) when one is wired, else the primary. */
  read: ReadApi;
  /**
   * The same readers on the primary database, for what must see a write the moment it is made:
   * mutations (a refresh's result, tokens) and subscriptions (their catch-up follows a
   * notification of a change a replica may not have yet). The same object as `read` without a read database.
   */
  primaryRead: ReadApi;
  /** `read` for queries, `primaryRead` for mutations and subscriptions. */
  readFor(operation: OperationKind): ReadApi;
  authenticator: Authenticator;
  anonymousRead: boolean;
  /** Per-request loaders over `read` (default: the queries' side). */
  newLoaders(read?: ReadApi): Loaders;
  close(): Promise<void>;
}

/** Options of {@link createApiWiring}. */
export interface ApiWiringOptions {
  /** The primary database: every write, token checks, and reads that must see the latest writes. */
  db: Db;
  /**
   * A database that follows the primary (a streaming replica) for queries' reads. It may lag: see
   * {@link ApiWiring.primaryRead} for what stays on the primary. @default db
   */
  readDb?: Db;
  config: {
    server: Pick<Config['server'], 'host'>;
    api: Pick<Config['api'], 'anonymousRead'>;
    plans?: Config['plans'];
  };
  redisUrl?: string;
  /** Redis channel prefix (tests use a unique one). */
  channelPrefix?: string;
  /** The snapshot queue refreshes go to (tests use unique ones). @default SNAPSHOT_QUEUE, 'bull' */
  snapshotQueue?: { name: string; prefix: string };
  /** Longest wait for a refresh. @default 30000 */
  refreshTimeoutMs?: number;
  /**
   * How often tokens in use are re-checked against the database, which bounds how long a token
   * revoked without a Redis announcement (straight in the database) keeps working. @default 10000
   */
  tokenRecheckMs?: number;
  log: Logger;
}

export async function createApiWiring(options: ApiWiringOptions): Promise<ApiWiring> {
  const store = createApiTokenStore(options.db);
  const anonymousRead = decideAnonymousRead({
    host: options.config.server.host,
    configured: options.config.api.anonymousRead,
    activeTokens: await store.countActive(),
  });
  if (anonymousRead) options.log.info({ host: options.config.server.host }, 'anonymous read access is on');
  const authenticator = createAuthenticator({
    tokens: store,
    anonymousRead,
    onTouchError: (err) => options.log.warn({ err }, 'recording token use failed'),
    onRecheckError: (err) => options.log.warn({ err }, 're-checking API tokens failed'),
    ...(options.tokenRecheckMs === undefined ? {} : { recheckEveryMs: options.tokenRecheckMs }),
  });
  // A token revoked through this API is forgotten here at once and announced to the other replicas.
  const revocationPrefix = {
    ...(options.channelPrefix === undefined ? {} : { prefix: options.channelPrefix }),
    log: options.log,
  };
  const revocations =
    options.redisUrl === undefined ? undefined : createTokenRevocationPublisher(options.redisUrl, revocationPrefix);
  const revocationFeed =
    options.redisUrl === undefined
      ? undefined
      : await subscribeTokenRevocations(
          options.redisUrl,
          (revocation) => {
            options.log.info({ tokenName: revocation.name }, 'API token revoked elsewhere: closing its connections');
            authenticator.revoke(revocation.name);
          },
          revocationPrefix,
        );
  const tokens: ApiTokenStore = {
    ...store,
    async revoke(name, at) {
      const revoked = await store.revoke(name, at);
      if (revoked) {
        authenticator.revoke(name);
        await revocations
          ?.publish(name, at)
          .catch((err: unknown) =>
            options.log.warn(
              { err, tokenName: name },
              'announcing a token revocation failed; other replicas notice it at their next re-check',
            ),
          );
      }
      return revoked;
    },
  };
  // Tokens are always read and written on the primary: a replica's lag would let a revoked token
  // in, and hide one just created from its own listing.
  const readSide = (db: Db, history: HistoryReader): Omit<ReadApi, 'tokens'> => {
    const phases = createPhaseReader(db);
    return {
      phases,
      history,
      conditions: createConditionStore(db),
      plans: createPlanReader({ phases, history, declared: options.config.plans ?? [] }),
      reports: {
        create: (request: Parameters<typeof createAuditReport>[1]) => createAuditReport(db, request),
        stored: createReportStore(db),
      },
      notifications: createNotificationStore(db),
    };
  };
  const primaryHistory = createHistoryReader(options.db);
  // A subscriber's catch-up runs when Redis announces a change the worker has just written to the
  // primary; on a lagging replica the replay would miss it and the live event would then be dropped
  // as already covered, so the change feed always replays from the primary.
  const changes =
    options.redisUrl === undefined
      ? undefined
      : createChangeFeed({
          source: redisChangeSource(options.redisUrl, options.channelPrefix, options.log),
          history: primaryHistory,
        });
  const refresher =
    options.redisUrl === undefined
      ? undefined
      : createRefresher({
          redisUrl: options.redisUrl,
          log: options.log,
          ...(options.snapshotQueue
            ? { queueName: options.snapshotQueue.name, prefix: options.snapshotQueue.prefix }
            : {}),
          ...(options.refreshTimeoutMs !== undefined ? { timeoutMs: options.refreshTimeoutMs } : {}),
        });
  // Trees are read per request; with Redis away a read fails at once (no offline queue) and the
  // answer says the tree is unavailable instead of waiting.
  const treeRedis =
    options.redisUrl === undefined
      ? undefined
      : new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  treeRedis?.on('error', (err: unknown) => options.log.debug({ err }, 'resource tree reader: Redis error'));
  const trees =
    treeRedis === undefined ? undefined : createTreeReader(treeRedis, { prefix: options.channelPrefix ?? TREE_PREFIX });
  // Owners are read from the same connection: the leases of the snapshot queue's ownership.
  const ownersPrefix = ownershipPrefix(
    options.snapshotQueue?.prefix ?? 'bull',
    options.snapshotQueue?.name ?? SNAPSHOT_QUEUE,
  );
  const owners =
    treeRedis === undefined
      ? undefined
      : (clusters: readonly string[]) => readClusterOwners(treeRedis, ownersPrefix, clusters);
  // Live status blocks come from each cluster's owning worker, asked on demand (src/pubsub/live-status.ts).
  const liveStatus =
    options.redisUrl === undefined || treeRedis === undefined || owners === undefined
      ? undefined
      : createLiveStatusRequester({
          redisUrl: options.redisUrl,
          publisher: treeRedis,
          prefix: options.channelPrefix ?? TREE_PREFIX,
          owners,
          log: options.log.child({ unit: 'live-status' }),
        });
  const shared = {
    tokens,
    ...(liveStatus ? { liveStatus } : {}),
    ...(changes ? { changes } : {}),
    ...(refresher ? { refresher } : {}),
    ...(trees ? { trees } : {}),
    ...(owners ? { owners } : {}),
  };
  const primaryRead: ReadApi = { ...readSide(options.db, primaryHistory), ...shared };
  const read: ReadApi =
    options.readDb === undefined || options.readDb === options.db
      ? primaryRead
      : { ...readSide(options.readDb, createHistoryReader(options.readDb)), ...shared };
  return {
    read,
    primaryRead,
    readFor: (operation) => (operation === 'query' ? read : primaryRead),
    anonymousRead,
    authenticator,
    newLoaders: (side = read) => createLoaders(side),
    close: async () => {
      authenticator.close();
      await revocationFeed?.close();
      await revocations?.close();
      await changes?.close();
      await refresher?.close();
      await liveStatus?.close();
      treeRedis?.disconnect();
    },
  };
}
